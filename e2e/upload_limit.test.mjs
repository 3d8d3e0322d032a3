// Browser test of the upload limit (issue 16): a file over CAMPFIRE_MAX_UPLOAD is refused by
// the composer itself, without sending it, and the pending message says why ("Not sent: too
// large: the limit is …"); a file under it is sent with its progress bar and arrives.
//
// Run: `make e2e` (or `cd e2e && node --test upload_limit.test.mjs` after `make campfire-room`).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, firstRun, saved } from "./support.mjs";

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-limit-", { CAMPFIRE_MAX_UPLOAD: "300000" });
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

async function drop(page, name, size) {
  await page.evaluate(({ name, size }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(size).fill(65)], name, { type: "application/octet-stream" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { name, size });
  await page.locator(".composer__file", { hasText: name }).waitFor();
  await page.click("button.composer__send");
}

test("a file over the limit is refused with the reason; one under it is sent", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await firstRun(page, base);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  await page.goto(`${base}/rooms/${roomId}`);
  assert.equal(await page.getAttribute("form#composer", "data-composer-max-upload-value"), "300000");

  const posts = [];
  page.on("request", (r) => r.method() === "POST" && r.url().endsWith(`/rooms/${roomId}/messages`) && posts.push(r));
  await drop(page, "huge.bin", 400000);
  const failed = page.locator(".message--failed .message__body-content[data-failure]");
  await failed.waitFor({ timeout: 10000 });
  assert.equal(await failed.getAttribute("data-failure"), "too large: the limit is 293 KiB");
  const shown = await failed.evaluate((el) => getComputedStyle(el, "::after").content);
  assert.match(shown, /Not sent: too large: the limit is 293 KiB/);
  assert.equal(posts.length, 0, "the file was not sent");

  await drop(page, "fine.bin", 200000);
  await saved(page, "fine.bin").locator(".message__filename").waitFor({ timeout: 30000 });
  assert.equal(posts.length, 1);
  await context.close();
});
