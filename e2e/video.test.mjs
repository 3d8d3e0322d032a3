// Browser test of a video attachment (issue 16): Chromium records a short WebM with
// MediaRecorder from an animated canvas, the composer uploads it with the poster frame it
// draws itself (no ffmpeg anywhere), and the message shows an inline <video> with that poster,
// the video's size, preload=metadata, and a player that plays and seeks (its bytes come in
// range requests, answered 206 from disk). A photo, an animated GIF (whose original plays in
// the lightbox), a CSV and a PDF follow it; screenshots of the room, light and dark, land in
// e2e/screenshots/video-{light,dark}.png. A second test uploads a large photo as an avatar and
// takes e2e/screenshots/avatar-profile.png with the resized square.
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
  // Every answer to the player's requests for the video, with the Range it asked for.
  const media = [];
  page.on("response", (r) => {
    if (r.url().includes("/clip.webm")) media.push({ status: r.status(), range: r.request().headers()["range"] });
  });
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

  // Seeking: back to a point already played, then to the end and back to the start, each
  // finished (`seeked`) at the time asked for. Chromium fetches media with Range requests.
  for (const to of [0.25, 1.5, 0]) {
    const at = await video.evaluate(async (v, to) => {
      const seeked = new Promise((ok) => v.addEventListener("seeked", ok, { once: true }));
      v.currentTime = to;
      await seeked;
      return v.currentTime;
    }, to);
    assert.ok(Math.abs(at - to) < 0.1, `seeked to ${to}, at ${at}`);
  }
  assert.ok(media.length > 0, "the player fetched the video");
  assert.ok(media.some((m) => m.range && m.status === 206), `range requests answered 206: ${JSON.stringify(media)}`);

  // Beside it, the files people send most: a photo, an animated GIF, a CSV and a PDF, for the
  // screenshots.
  await page.addScriptTag({ content: `window.animatedGif = ${animatedGif.toString()}` });
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
    dt.items.add(new File([animatedGif(1400, 1000, 3)], "party.gif", { type: "image/gif" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator(".composer__file", { hasText: "dunes.jpg" }).waitFor();
  await page.click("button.composer__send");
  await page.locator("[data-message-id] img.message__attachment[alt='dunes.jpg']").waitFor({ timeout: 30000 });

  // The GIF's thumbnail is within 1200×800 and the markup states its size; the lightbox
  // opens the original, all of its frames.
  const gif = page.locator("[data-message-id] img.message__attachment[alt='party.gif']");
  await gif.waitFor({ timeout: 30000 });
  await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await gif.elementHandle());
  const thumb = await gif.evaluate((img) => ({ w: img.naturalWidth, h: img.naturalHeight, aw: img.getAttribute("width"), ah: img.getAttribute("height") }));
  assert.deepEqual([thumb.w, thumb.h], [1120, 800], "shrunk to fit 1200×800");
  assert.deepEqual([thumb.aw, thumb.ah], ["1120", "800"], "the markup states the thumbnail's size");
  await gif.click();
  const zoomed = page.locator("dialog.lightbox[open] img.lightbox__image");
  await zoomed.waitFor();
  await page.waitForFunction((img) => img.complete && img.naturalWidth > 0, await zoomed.elementHandle());
  const original = await zoomed.evaluate(async (img) => {
    const r = await fetch(img.src);
    const bytes = new Uint8Array(await r.arrayBuffer());
    // Frames are image descriptors (0x2C) after their graphic control extension.
    let frames = 0;
    for (let i = 0; i + 3 < bytes.length; i++) if (bytes[i] === 0x21 && bytes[i + 1] === 0xf9 && bytes[i + 2] === 0x04) frames++;
    return { type: r.headers.get("content-type"), w: img.naturalWidth, frames };
  });
  assert.deepEqual(original, { type: "image/gif", w: 1400, frames: 3 }, "the animated original");
  await page.keyboard.press("Escape");

  for (const name of ["budget.csv", "report.pdf"]) {
    await page.locator("[data-message-id] .message__filename", { hasText: name }).waitFor({ timeout: 30000 });
  }
  assert.equal(sql("SELECT content_type FROM active_storage_blobs WHERE filename = 'budget.csv'"), "text/csv");
  assert.equal(sql("SELECT content_type FROM active_storage_blobs WHERE filename = 'report.pdf'"), "application/pdf");

  // Tall enough for the whole conversation: the video with its poster, the photo, the GIF,
  // the CSV and the PDF.
  await page.setViewportSize({ width: 1280, height: 2000 });
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  await page.screenshot({ path: join(shots, "video-light.png") });
  // Dark from a fresh load: switched under a rendered page, elements with colour transitions
  // are caught halfway (light buttons with light icons in the shot).
  await page.emulateMedia({ colorScheme: "dark" });
  await page.reload();
  await page.locator("[data-message-id] img.message__attachment[alt='party.gif']").waitFor();
  await page.waitForFunction(() => Array.from(document.querySelectorAll("img.message__attachment")).every((i) => i.complete && i.naturalWidth > 0));
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(shots, "video-dark.png") });
  await context.close();
});

// An animated GIF of `w`×`h` with `n` frames of moving diagonal stripes, written by hand: 8-bit
// LZW with a clear code every 250 pixels keeps every code 9 bits wide (no compression, no
// dictionary to manage). Runs in the page (`toString` above), so it uses nothing from Node.
function animatedGif(w, h, n) {
  const out = [];
  const u16 = (v) => out.push(v & 255, v >> 8);
  out.push(..."GIF89a".split("").map((c) => c.charCodeAt(0)));
  u16(w);
  u16(h);
  out.push(0xf7, 0, 0);
  for (let i = 0; i < 256; i++) out.push(i, 90 + (i >> 2), 255 - i);
  out.push(0x21, 0xff, 11, ..."NETSCAPE2.0".split("").map((c) => c.charCodeAt(0)), 3, 1, 0, 0, 0);
  for (let f = 0; f < n; f++) {
    out.push(0x21, 0xf9, 4, 0, 30, 0, 0, 0);
    out.push(0x2c, 0, 0, 0, 0);
    u16(w);
    u16(h);
    out.push(0, 8);
    const data = [];
    let acc = 0;
    let bits = 0;
    const code = (c) => {
      acc |= c << bits;
      bits += 9;
      while (bits >= 8) {
        data.push(acc & 255);
        acc >>= 8;
        bits -= 8;
      }
    };
    let run = 0;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (run === 0) code(256);
        code(((x + y + f * 60) >> 3) & 255);
        run = (run + 1) % 250;
      }
    }
    code(257);
    if (bits > 0) data.push(acc & 255);
    for (let i = 0; i < data.length; i += 255) {
      const block = data.slice(i, i + 255);
      out.push(block.length, ...block);
    }
    out.push(0);
  }
  out.push(0x3b);
  return new Uint8Array(out);
}

test("a large photo avatar is shown on the profile as its resized square", async () => {
  // Signed in as the first run's administrator (made by the test above), in a fresh context.
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const tab = await ctx.newPage();
  await tab.goto(`${base}/session/new`);
  await tab.fill('input[name="email_address"]', "ada@example.com");
  await tab.fill('input[name="password"]', "secret123456");
  await Promise.all([tab.waitForURL(/\/rooms\/\d+/), tab.click('button[name="log_in"]')]);
  await tab.goto(`${base}/users/me/profile`);
  // A 4000×3000 photo made in the page, chosen as the avatar (the form submits on change).
  const photo = await tab.evaluate(async () => {
    const c = document.createElement("canvas");
    c.width = 4000;
    c.height = 3000;
    const g = c.getContext("2d");
    const grad = g.createRadialGradient(2000, 1500, 100, 2000, 1500, 2000);
    grad.addColorStop(0, "#f4a261");
    grad.addColorStop(1, "#264653");
    g.fillStyle = grad;
    g.fillRect(0, 0, 4000, 3000);
    const b = await new Promise((ok) => c.toBlob(ok, "image/jpeg", 0.92));
    return Array.from(new Uint8Array(await b.arrayBuffer()));
  });
  await Promise.all([
    tab.waitForResponse((r) => r.request().method() === "POST", { timeout: 30000 }),
    tab.setInputFiles("input[type=file][name='user[avatar]']", { name: "me.jpg", mimeType: "image/jpeg", buffer: Buffer.from(photo) }),
  ]);
  await tab.goto(`${base}/users/me/profile`);
  const picker = tab.locator("label.avatar-picker img");
  await tab.waitForFunction((img) => img.complete && img.naturalWidth > 0 && !img.src.endsWith(".svg"), await picker.elementHandle(), { timeout: 30000 });
  const served = await picker.evaluate(async (img) => {
    const r = await fetch(img.src);
    const b = await r.arrayBuffer();
    return { type: r.headers.get("content-type"), bytes: b.byteLength, w: img.naturalWidth, h: img.naturalHeight };
  });
  assert.equal(served.type, "image/jpeg");
  assert.deepEqual([served.w, served.h], [512, 384], "the square variant, at most 512×512");
  assert.ok(served.bytes <= 60 * 1024, `at most 60 KB, got ${served.bytes}`);
  await tab.screenshot({ path: join(shots, "avatar-profile.png") });
  await ctx.close();
});
