// Browser test of /play sounds: Debian's Chromium, driven by playwright-core, against the real
// binary on a fresh database. A `/play trombone` sent through the composer renders its caption and
// a 🔊 button, nothing on the page asks for a sound or image file, and clicking 🔊 synthesizes the
// sound through the page's AudioContext without a script error.
//
// Run: `make e2e` (or CAMPFIRE_BIN=<binary> node --test sounds.test.mjs).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let server, dir, base, browser;

function binary() {
  const candidates = [process.env.CAMPFIRE_BIN, resolve(here, "../campfire-room"), resolve(here, "../target/release/campfire-room"), resolve(here, "../target/debug/campfire-room")];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error("no campfire-room binary: build it (make) or set CAMPFIRE_BIN");
  return found;
}

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function waitUp(url) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url + "/up")).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("campfire-room did not answer /up");
}

function sql(query) {
  return execFileSync("sqlite3", [join(dir, "storage/db/e2e.sqlite3"), query], { encoding: "utf8" }).trim();
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "campfire-e2e-sounds-"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(binary(), [], {
    env: {
      PORT: String(port),
      STORAGE_PATH: join(dir, "storage"),
      DATABASE_PATH: join(dir, "storage/db/e2e.sqlite3"),
      DISABLE_SSL: "1",
      CAMPFIRE_LOG: process.env.CAMPFIRE_LOG || "0",
    },
    stdio: ["ignore", process.env.CAMPFIRE_LOG === "1" ? "inherit" : "ignore", "inherit"],
  });
  await waitUp(base);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});

after(async () => {
  await browser?.close();
  server?.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("/play trombone shows its caption and the play control works", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  const missing = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", (r) => { if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`); });
  await page.goto(base + "/first_run");
  await page.fill('input[name="user[name]"]', "Ada Admin");
  await page.fill('input[name="user[email_address]"]', "ada@example.com");
  await page.fill('input[name="user[password]"]', "secret123456");
  await Promise.all([page.waitForURL(/\/rooms\/\d+/), page.click('form[action="/first_run"] button[type="submit"]')]);

  const editor = page.locator("trix-editor#message_body");
  await editor.click();
  await page.keyboard.type("/play trombone");
  await page.keyboard.press("Enter");
  const sound = page.locator('[data-message-id] .sound[data-sound-name-value="trombone"]');
  await sound.waitFor({ timeout: 20000 });
  assert.match(await sound.innerText(), /🔊\s*plays a sad trombone/);
  assert.equal(await sound.locator("img, audio").count(), 0, "no image or audio element");
  const html = await page.content();
  assert.doesNotMatch(html, /\/assets\/sounds\/|\.mp3\b/, "no sound file is referenced");

  assert.equal(await page.evaluate(() => typeof (window.AudioContext || window.webkitAudioContext)), "function");
  await sound.locator('button[data-action="sound#play"]').click();
  const state = await page.evaluate(async () => {
    const { audioContext } = await import("lib/synth");
    const ctx = audioContext();
    return ctx instanceof (window.AudioContext || window.webkitAudioContext) ? ctx.state : "none";
  });
  assert.notEqual(state, "none", "the click made the page's AudioContext");
  assert.notEqual(state, "closed");
  // Every recipe (and the chime for an unknown name) schedules without throwing.
  await page.evaluate(async () => {
    const { playSound } = await import("lib/synth");
    for (const name of ["trombone", "bell", "rimshot", "tada", "crickets", "honk", "horn", "vuvuzela", "rumble", "drama", "56k", "wups", "secret", "ballmer"]) playSound(name);
  });
  await page.waitForTimeout(300);
  assert.deepEqual(errors, [], "no script errors");
  assert.deepEqual(missing.filter((m) => /sounds|\.mp3|\.webp/.test(m)), [], "no missing sound assets");
  await context.close();
});
