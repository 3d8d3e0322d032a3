// Browser test of a video attachment (issue 16): Chromium records a short WebM with
// MediaRecorder from an animated canvas, the composer uploads it with the poster frame it
// draws itself (no ffmpeg anywhere), and the message shows an inline <video> with that poster,
// the video's size, preload=metadata, and a player that plays. A photo, a CSV and a PDF follow
// it; screenshots of the room, light and dark, land in e2e/screenshots/video-{light,dark}.png.
//
// Run: `make e2e` (or `cd e2e && node --test video.test.mjs` after `make campfire-room`).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, screenshotsDir, firstRun } from "./support.mjs";

const shots = screenshotsDir();

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-video-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

test("a recorded WebM plays inline with the poster its uploader drew", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await firstRun(page, base);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  await page.goto(`${base}/rooms/${roomId}`);
  await page.locator("trix-editor#message_body").click();

  // Two seconds of a moving orange square on teal, 640×360, as Chromium's MediaRecorder
  // writes it (VP8/VP9 in WebM), kept in a DataTransfer for the drop below.
  await page.evaluate(async () => {
    const canvas = document.createElement("canvas");
    canvas.width = 640;
    canvas.height = 360;
    const g = canvas.getContext("2d");
    const draw = (t) => {
      g.fillStyle = "#2a9d8f";
      g.fillRect(0, 0, 640, 360);
      g.fillStyle = "#f4a261";
      g.fillRect(40 + (t % 500), 120, 120, 120);
    };
    draw(0);
    const stream = canvas.captureStream(30);
    const recorder = new MediaRecorder(stream, { mimeType: "video/webm" });
    const chunks = [];
    recorder.ondataavailable = (e) => chunks.push(e.data);
    const stopped = new Promise((ok) => (recorder.onstop = ok));
    recorder.start(200);
    const t0 = performance.now();
    await new Promise((ok) => {
      const tick = () => {
        const t = performance.now() - t0;
        draw(t / 4);
        if (t < 2000) requestAnimationFrame(tick);
        else ok();
      };
      tick();
    });
    recorder.stop();
    await stopped;
    const dt = new DataTransfer();
    dt.items.add(new File(chunks, "clip.webm", { type: "video/webm" }));
    window.__video = dt;
  });

  await page.evaluate(() => {
    const form = document.getElementById("composer");
    form.dispatchEvent(new DragEvent("drop", { dataTransfer: window.__video, bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "clip.webm" }).waitFor();
  await page.click("button.composer__send");

  const video = page.locator("[data-message-id] video.message__attachment");
  await video.waitFor({ timeout: 30000 });
  const attrs = await video.evaluate((v) => ({
    preload: v.getAttribute("preload"),
    controls: v.hasAttribute("controls"),
    width: v.getAttribute("width"),
    height: v.getAttribute("height"),
    poster: v.getAttribute("poster"),
  }));
  assert.equal(attrs.preload, "metadata");
  assert.ok(attrs.controls);
  assert.deepEqual([attrs.width, attrs.height], ["640", "360"], "the video's own size");
  assert.match(attrs.poster, /^\/rails\/active_storage\/blobs\/redirect\//, "a poster from the browser");
  assert.equal(sql("SELECT content_type FROM active_storage_blobs WHERE filename = 'clip.webm'"), "video/webm");
  assert.equal(
    sql("SELECT b.content_type FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id WHERE a.record_type = 'ActiveStorage::Blob' AND a.name = 'preview_image'"),
    "image/jpeg",
  );

  // The poster is a real 640×360 picture of the first frame (teal with the orange square).
  const poster = await page.evaluate(async (url) => {
    const img = new Image();
    img.src = url;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    return { w: img.naturalWidth, h: img.naturalHeight, corner: Array.from(g.getImageData(5, 5, 1, 1).data.slice(0, 3)) };
  }, attrs.poster);
  assert.deepEqual([poster.w, poster.h], [640, 360]);
  const [r, gr, b] = poster.corner;
  assert.ok(Math.abs(r - 0x2a) < 24 && Math.abs(gr - 0x9d) < 24 && Math.abs(b - 0x8f) < 24, `teal corner, got ${poster.corner}`);

  // The player loads its metadata and plays (a MediaRecorder WebM has no duration until
  // played through; play() must start it).
  await page.waitForFunction((el) => el.readyState >= 1, await video.elementHandle(), { timeout: 15000 });
  const played = await video.evaluate(async (v) => {
    v.muted = true;
    await v.play();
    await new Promise((ok) => setTimeout(ok, 500));
    v.pause();
    return v.currentTime;
  });
  assert.ok(played > 0, `it plays (currentTime ${played})`);

  // Beside it, the files people send most: a photo, a CSV and a PDF, for the screenshots.
  await page.evaluate(async () => {
    const canvas = document.createElement("canvas");
    canvas.width = 1600;
    canvas.height = 1000;
    const g = canvas.getContext("2d");
    const grad = g.createLinearGradient(0, 0, 1600, 1000);
    grad.addColorStop(0, "#e9c46a");
    grad.addColorStop(1, "#264653");
    g.fillStyle = grad;
    g.fillRect(0, 0, 1600, 1000);
    const photo = await new Promise((ok) => canvas.toBlob(ok, "image/jpeg", 0.9));
    const dt = new DataTransfer();
    dt.items.add(new File(["item,cost\ntea,3\n"], "budget.csv", { type: "text/csv" }));
    dt.items.add(new File(["%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"], "report.pdf", { type: "application/pdf" }));
    dt.items.add(new File([photo], "dunes.jpg", { type: "image/jpeg" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "dunes.jpg" }).waitFor();
  await page.click("button.composer__send");
  await page.locator("[data-message-id] img.message__attachment[alt='dunes.jpg']").waitFor({ timeout: 30000 });
  for (const name of ["budget.csv", "report.pdf"]) {
    await page.locator("[data-message-id] .message__filename", { hasText: name }).waitFor({ timeout: 30000 });
  }
  assert.equal(sql("SELECT content_type FROM active_storage_blobs WHERE filename = 'budget.csv'"), "text/csv");
  assert.equal(sql("SELECT content_type FROM active_storage_blobs WHERE filename = 'report.pdf'"), "application/pdf");

  await page.screenshot({ path: join(shots, "video-light.png") });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.screenshot({ path: join(shots, "video-dark.png") });
  await context.close();
});
