// Browser test of /play sounds: Debian's Chromium, driven by playwright-core, against the real
// binary on a fresh database. A `/play trombone` sent through the composer renders its caption and
// a 🔊 button, nothing on the page asks for a sound or image file, and clicking 🔊 synthesizes the
// sound through the page's AudioContext without a script error.
//
// Run: `make e2e` (or CAMPFIRE_BIN=<binary> node --test sounds.test.mjs).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, firstRun } from "./support.mjs";

let srv, base, browser;

before(async () => {
  srv = await startServer("campfire-e2e-sounds-");
  ({ base } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

test("/play trombone shows its caption and the play control works", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  const missing = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("response", (r) => { if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`); });
  await firstRun(page, base);

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
  // What the recipes make, rendered offline: each is a real sound (not silence), and they differ.
  const rendered = await page.evaluate(async () => {
    const { schedule } = await import("lib/synth");
    const out = {};
    for (const name of ["trombone", "bell", "rimshot", "no-such-sound"]) {
      const ctx = new OfflineAudioContext(1, 44100 * 2, 44100);
      schedule(name, ctx, ctx.destination, 0);
      const samples = (await ctx.startRendering()).getChannelData(0);
      let energy = 0, peak = 0, crossings = 0;
      for (let i = 0; i < samples.length; i++) {
        energy += samples[i] * samples[i];
        peak = Math.max(peak, Math.abs(samples[i]));
        if (i && (samples[i - 1] < 0) !== (samples[i] < 0)) crossings++;
      }
      out[name] = { rms: Math.sqrt(energy / samples.length), peak, crossings };
    }
    return out;
  });
  for (const [name, r] of Object.entries(rendered)) {
    assert.ok(r.rms > 0.005 && r.peak > 0.02 && r.peak <= 1, `${name} is audible and does not clip: ${JSON.stringify(r)}`);
  }
  assert.notEqual(rendered.trombone.crossings, rendered.bell.crossings, "different recipes, different sounds");
  assert.deepEqual(errors, [], "no script errors");
  assert.deepEqual(missing.filter((m) => /sounds|\.mp3|\.webp/.test(m)), [], "no missing sound assets");
  await context.close();
});
