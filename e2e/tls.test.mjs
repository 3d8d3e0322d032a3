// Browser test of issue 14 §2 (HTTPS in the process): Debian's Chromium, driven by
// playwright-core, against the real binary serving its own TLS with a certificate of ours
// (TLS_CERTIFICATE_PATH; the contexts accept it as a self-signed one). Over https:// the
// administrator signs up, a second person joins through the join link, both open the room, and
// the second sees the first's message arrive over the page's wss:// Action Cable socket.
// Plain http:// on HTTP_PORT answers with a redirect to https://.
//
// Run: `make e2e` (or `node --test tls.test.mjs` here with CAMPFIRE_BIN pointing at the binary).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { get as httpsGet } from "node:https";
import { binary, freePort, launchBrowser, firstRun, fillUser, saved } from "./support.mjs";

const LIVE = { timeout: 20000 };
let dir, server, base, httpPort, browser, db;

// Resolves with the status of GET `url` (certificate not checked: it is our self-signed one).
function status(url) {
  return new Promise((ok, fail) => {
    httpsGet(url, { rejectUnauthorized: false }, (res) => {
      res.resume();
      ok(res.statusCode);
    }).on("error", fail);
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "campfire-e2e-tls-"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
    "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"], { stdio: "ignore" });
  const httpsPort = await freePort();
  httpPort = await freePort();
  db = join(dir, "storage/db/e2e.sqlite3");
  base = `https://localhost:${httpsPort}`;
  server = spawn(binary(), [], {
    env: {
      HTTPS_PORT: String(httpsPort),
      HTTP_PORT: String(httpPort),
      TLS_CERTIFICATE_PATH: join(dir, "cert.pem"),
      TLS_PRIVATE_KEY_PATH: join(dir, "key.pem"),
      STORAGE_PATH: join(dir, "storage"),
      DATABASE_PATH: db,
      CAMPFIRE_LOG: process.env.CAMPFIRE_LOG || "0",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 15000;
  for (;;) {
    try {
      if ((await status(base + "/up")) === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("campfire-room did not answer https /up");
    await new Promise((r) => setTimeout(r, 50));
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const sql = (query) => execFileSync("sqlite3", ["-cmd", ".timeout 5000", db, query], { encoding: "utf8" }).trim();

// Resolves once the page's newest cable socket has had RoomMessagesChannel confirmed; returns
// that socket's URL.
function roomSocket(page) {
  return new Promise((ok) => {
    page.on("websocket", (ws) => {
      ws.on("framereceived", ({ payload }) => {
        try {
          const frame = JSON.parse(String(payload));
          if (frame.type === "confirm_subscription" && JSON.parse(frame.identifier).channel === "RoomMessagesChannel") ok(ws.url());
        } catch {}
      });
    });
  });
}

test("over https:// two people sign in and a message arrives over wss://", async () => {
  const ctxA = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1024, height: 720 } });
  const a = await ctxA.newPage();
  await firstRun(a, base);
  assert.match(a.url(), /^https:\/\/localhost:\d+\/rooms\/\d+/);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");

  const ctxB = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1024, height: 720 } });
  const b = await ctxB.newPage();
  const code = sql("SELECT join_code FROM accounts");
  await b.goto(`${base}/join/${code}`);
  await fillUser(b, "Bea Brook", "bea@example.com", "secret654321");
  await Promise.all([b.waitForURL(/\/rooms\/\d+/), b.click(`form[action="/join/${code}"] button[type="submit"]`)]);

  const socketA = roomSocket(a);
  const socketB = roomSocket(b);
  await a.goto(`${base}/rooms/${roomId}`);
  await b.goto(`${base}/rooms/${roomId}`);
  const [urlA, urlB] = await Promise.all([socketA, socketB]);
  assert.match(urlA, /^wss:\/\/localhost:\d+\/cable/);
  assert.match(urlB, /^wss:\/\/localhost:\d+\/cable/);

  await a.locator("trix-editor#message_body").click();
  await a.keyboard.type("Hello over TLS");
  await a.keyboard.press("Enter");
  await saved(a, "Hello over TLS").waitFor(LIVE);
  await saved(b, "Hello over TLS").waitFor(LIVE);

  // Plain HTTP on HTTP_PORT: a redirect to the same path over https://.
  const r = await fetch(`http://localhost:${httpPort}/rooms/${roomId}`, { redirect: "manual" });
  assert.equal(r.status, 301);
  assert.equal(r.headers.get("location"), `${base}/rooms/${roomId}`);
  await ctxA.close();
  await ctxB.close();
});
