// Browser test of a full disk (issue 15 "Faults injected"): with the server's write test hook
// (CAMPFIRE_FAULT_FILE, src/db/fault.rs) saying "full", a text message and a file are refused
// with 507 and their pending copies say why ("Not sent: the server's disk is full, try again
// later"); once the disk is back the same composer sends and the message arrives.
//
// Run: `make e2e` (or `cd e2e && node --test disk_full.test.mjs` after `make campfire-room`).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, launchBrowser, firstRun, saved } from "./support.mjs";

let srv, base, sql, browser;
const flagDir = mkdtempSync(join(tmpdir(), "campfire-e2e-fault-"));
const flag = join(flagDir, "fault");

before(async () => {
  srv = await startServer("campfire-e2e-full-", { CAMPFIRE_FAULT_FILE: flag });
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
  rmSync(flagDir, { recursive: true, force: true });
});

const FULL = "the server's disk is full, try again later";

test("a post on a full disk says so, and goes through once the disk is back", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await firstRun(page, base);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  await page.goto(`${base}/rooms/${roomId}`);

  writeFileSync(flag, "full");
  await page.locator("trix-editor#message_body").click();
  await page.keyboard.type("lost to a full disk");
  await page.click("button.composer__send");
  const failed = page.locator(".message--failed .message__body-content[data-failure]");
  await failed.first().waitFor({ timeout: 10000 });
  assert.equal(await failed.first().getAttribute("data-failure"), FULL);
  const shown = await failed.first().evaluate((el) => getComputedStyle(el, "::after").content);
  assert.ok(shown.includes(`Not sent: ${FULL}`), shown);

  // A file: stored on disk (not through SQLite), then its rows are refused: the same answer.
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(2000).fill(66)], "notes.bin", { type: "application/octet-stream" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "notes.bin" }).waitFor();
  await page.click("button.composer__send");
  await page.waitForFunction(() => document.querySelectorAll(".message--failed .message__body-content[data-failure]").length === 2, null, { timeout: 10000 });
  assert.equal(await failed.nth(1).getAttribute("data-failure"), FULL);
  assert.equal(sql("SELECT count(*) FROM messages"), "0", "nothing of the refused posts was stored");
  assert.equal(sql("SELECT count(*) FROM active_storage_blobs"), "0");

  rmSync(flag);
  await page.locator("trix-editor#message_body").click();
  await page.keyboard.type("kept once the disk is back");
  await page.click("button.composer__send");
  await saved(page, "kept once the disk is back").waitFor({ timeout: 10000 });
  assert.equal(sql("SELECT count(*) FROM messages"), "1");
  await context.close();
});
