// Browser test of file uploads (spec/08 §3.3, spec/02 §4.26): Debian's Chromium, driven by
// playwright-core, against the real binary on a fresh database. A photo picked with the
// paperclip's file input is posted by the composer's XHR (progress bar, X-CSRF-Token) and shows
// as a picture whose thumbnail is at most 1200×800; a text file pasted into the composer and
// a second image dropped on it show as a download row and a picture. A screenshot of the room
// lands in e2e/screenshots/uploads.png.
//
// Run: `make e2e` (or `cd e2e && node --test uploads.test.mjs` after `cargo build`).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, screenshotsDir, firstRun, saved } from "./support.mjs";

const shots = screenshotsDir();

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-uploads-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// Makes a File in the page: a JPEG/PNG drawn on a canvas (a gradient, so it is a real photo-like
// image) or a text file, and puts it in a DataTransfer under window.__files[name].
async function makeFile(page, name, type, width = 0, height = 0) {
  await page.evaluate(async ({ name, type, width, height }) => {
    let blob;
    if (type.startsWith("image/")) {
      const canvas = document.createElement("canvas");
      canvas.width = width;
      canvas.height = height;
      const g = canvas.getContext("2d");
      const grad = g.createLinearGradient(0, 0, width, height);
      grad.addColorStop(0, "#f4a261");
      grad.addColorStop(1, "#264653");
      g.fillStyle = grad;
      g.fillRect(0, 0, width, height);
      blob = await new Promise((ok) => canvas.toBlob(ok, type, 0.9));
    } else {
      blob = new Blob(["minutes of the meeting\n"], { type });
    }
    const dt = new DataTransfer();
    dt.items.add(new File([blob], name, { type }));
    window.__files = window.__files || {};
    window.__files[name] = dt;
  }, { name, type, width, height });
}

test("pick, paste and drop files; thumbnails fit 1200×800; screenshot", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await firstRun(page, base);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  await page.goto(`${base}/rooms/${roomId}`);
  await page.locator("trix-editor#message_body").click();

  // Watch the upload request the composer makes.
  const uploads = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url().endsWith(`/rooms/${roomId}/messages`) && r.headers()["content-type"]?.startsWith("multipart/form-data")) uploads.push(r);
  });

  // 1. Picked with the file input, then sent with the send button.
  await makeFile(page, "sunset.jpg", "image/jpeg", 2400, 1600);
  const jpeg = await page.evaluate(async () => {
    const bytes = new Uint8Array(await window.__files["sunset.jpg"].files[0].arrayBuffer());
    return btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  });
  await page.setInputFiles(".composer__attach input[type=file]", { name: "sunset.jpg", mimeType: "image/jpeg", buffer: Buffer.from(jpeg, "base64") });
  await page.locator(".composer__file", { hasText: "sunset.jpg" }).waitFor();
  await page.click("button.composer__send");
  const photo = page.locator("[data-message-id] img.message__attachment[alt='sunset.jpg']");
  await photo.waitFor({ timeout: 30000 });
  await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await photo.elementHandle(), { timeout: 30000 });
  const size = await photo.evaluate((img) => [img.naturalWidth, img.naturalHeight, img.getAttribute("width"), img.getAttribute("height")]);
  assert.deepEqual(size, [1200, 800, "1200", "800"], "the thumbnail is the 1200×800 variant");
  assert.match(await photo.getAttribute("src"), /^\/rails\/active_storage\/representations\/redirect\//);
  assert.equal(uploads.length, 1);
  assert.ok(uploads[0].headers()["x-csrf-token"] !== undefined, "the XHR carries X-CSRF-Token");
  // The client id sent with the file is the one the server kept (the pending copy was replaced).
  const cmid = sql("SELECT client_message_id FROM messages ORDER BY id DESC LIMIT 1");
  assert.equal(await page.locator(`#message_${cmid}[data-message-id]`).count(), 1);
  assert.equal(sql("SELECT count(*) FROM active_storage_variant_records"), "1");

  // 2. Pasted: a text file becomes a download row.
  await makeFile(page, "minutes.txt", "text/plain");
  await page.evaluate(() => {
    const form = document.getElementById("composer");
    form.dispatchEvent(new ClipboardEvent("paste", { clipboardData: window.__files["minutes.txt"], bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "minutes.txt" }).waitFor();
  await page.keyboard.press("Enter");
  const file = saved(page, "minutes.txt");
  await file.locator(".message__filename").waitFor({ timeout: 30000 });
  const href = await file.locator("a.message__attachment-download").getAttribute("href");
  assert.match(href, /\/minutes\.txt\?disposition=attachment$/);
  const download = await page.evaluate(async (u) => (await fetch(u)).text(), href);
  assert.equal(download, "minutes of the meeting\n");

  // 3. Dropped on the composer: a small PNG is shown as is.
  await makeFile(page, "dot.png", "image/png", 40, 30);
  await page.evaluate(() => {
    const form = document.getElementById("composer");
    form.dispatchEvent(new DragEvent("drop", { dataTransfer: window.__files["dot.png"], bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "dot.png" }).waitFor();
  await page.click("button.composer__send");
  const dot = page.locator("[data-message-id] img.message__attachment[alt='dot.png']");
  await dot.waitFor({ timeout: 30000 });
  await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await dot.elementHandle(), { timeout: 30000 });
  assert.deepEqual(await dot.evaluate((img) => [img.naturalWidth, img.naturalHeight]), [40, 30]);

  assert.equal(sql("SELECT group_concat(filename, ',') FROM (SELECT b.filename FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id WHERE a.record_type = 'Message' ORDER BY a.id)"), "sunset.jpg,minutes.txt,dot.png");
  await page.screenshot({ path: join(shots, "uploads.png") });
  await context.close();
});
