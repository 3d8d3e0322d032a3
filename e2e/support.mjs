// Shared setup for the browser and cable tests: finding and starting the real binary on a free
// port with a temporary database, running sqlite3 against that database, launching Debian's
// Chromium through playwright-core, and the first-run sign-up most tests begin with.
// Each test file starts its own server, so the files stay independent under `node --test`.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
// Headless without a sandbox (containers have no user namespaces) and with nothing that phones
// home, so a run depends on the server under test only.
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

// Where tests write their screenshots (e2e/screenshots/); created on first call.
export function screenshotsDir() {
  const shots = join(here, "screenshots");
  mkdirSync(shots, { recursive: true });
  return shots;
}

// The binary under test: $CAMPFIRE_BIN, else the first build output that exists. Throws if none.
export function binary() {
  const candidates = [process.env.CAMPFIRE_BIN, resolve(here, "../campfire-room"), resolve(here, "../target/release/campfire-room"), resolve(here, "../target/debug/campfire-room")];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error("no campfire-room binary: build it (make) or set CAMPFIRE_BIN");
  return found;
}

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it).
export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

// Resolves once `${url}/up` answers 2xx; throws after 15 s.
export async function waitUp(url) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url + "/up")).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("campfire-room did not answer /up");
}

// Starts the binary on a free port with a fresh database under a new temp directory named
// `${prefix}XXXXXX`, plus any `env` given, and waits until it answers /up. Returns
// { port, base, dir, sql, stop }: `base` is "http://127.0.0.1:<port>", `sql(query)` runs one
// statement through the sqlite3 CLI (waiting up to 5 s on a busy database) and returns its
// trimmed output, `stop()` kills the server and removes the directory.
// CAMPFIRE_LOG=1 shows the server's request log; its stderr always shows.
export async function startServer(prefix, env = {}) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = join(dir, "storage/db/e2e.sqlite3");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(binary(), [], {
    env: {
      PORT: String(port),
      STORAGE_PATH: join(dir, "storage"),
      DATABASE_PATH: db,
      DISABLE_SSL: "1",
      CAMPFIRE_LOG: process.env.CAMPFIRE_LOG || "0",
      ...env,
    },
    stdio: ["ignore", process.env.CAMPFIRE_LOG === "1" ? "inherit" : "ignore", "inherit"],
  });
  // A server that dies on its own is a failure worth naming (a crash shows only as refused
  // connections otherwise).
  let stopping = false;
  server.on("exit", (code, signal) => {
    if (!stopping) console.error(`# campfire-room on port ${port} exited by itself: code ${code}, signal ${signal}`);
  });
  const stop = () => {
    stopping = true;
    server.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUp(base);
  } catch (e) {
    stop();
    throw e;
  }
  const sql = (query) => execFileSync("sqlite3", ["-cmd", ".timeout 5000", db, query], { encoding: "utf8" }).trim();
  return { port, base, dir, sql, stop };
}

// Launches Debian's Chromium ($CHROMIUM overrides the path) headless with the flags above.
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

// Fills the name, email and password fields of a sign-up form (first run or join link).
export async function fillUser(page, name, email, password) {
  await page.fill('input[name="user[name]"]', name);
  await page.fill('input[name="user[email_address]"]', email);
  await page.fill('input[name="user[password]"]', password);
}

// Opens /first_run and fills it in as the administrator "Ada Admin" <ada@example.com>
// (password secret123456), without submitting.
export async function fillFirstRun(page, base) {
  await page.goto(base + "/first_run");
  await fillUser(page, "Ada Admin", "ada@example.com", "secret123456");
}

// The submit button of the first-run form.
export const FIRST_RUN_SUBMIT = 'form[action="/first_run"] button[type="submit"]';

// Signs up the administrator through the first-run page and waits until the browser lands
// in the room the server created.
export async function firstRun(page, base) {
  await fillFirstRun(page, base);
  await Promise.all([page.waitForURL(/\/rooms\/\d+/), page.click(FIRST_RUN_SUBMIT)]);
}

// The saved message element (not the pending copy) whose text contains `text`.
export function saved(page, text) {
  return page.locator("[data-message-id]", { hasText: text });
}

// Opens a message's actions menu and waits for its boost picker to be there.
export async function openMenu(page, message) {
  await message.hover();
  await message.locator("summary.message__options-btn").click();
  await message.locator(".message__actions-menu .quick-boosts").waitFor();
}
