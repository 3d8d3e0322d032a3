// The conversation layout (issue 17 §2) and the screenshots looked at by a person (§4):
// Debian's Chromium, driven by playwright-core, against the real binary on a fresh database.
// Ada (first run) and Bob (join link) talk in the first room — text, a picture, a file, a
// mention — and Ada pings Bob. The test checks the layout people know from Campfire (every
// message a bubble; Ada's own on the right, Bob's on the left beside his avatar; a threaded run
// without avatar and name) at desktop and phone width, light and dark, and writes into
// e2e/screenshots/: conversation-{desktop,phone}-{light,dark}.png, sidebar-phone-light.png,
// account-settings.png, profile.png, search.png. The manifest's screenshots
// (public/screenshots/) are copies of conversation-phone-light.png, conversation-phone-dark.png
// and conversation-desktop-light.png.
//
// Run: `make e2e` (or `node --test screenshots.test.mjs` here with CAMPFIRE_BIN set).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, screenshotsDir, firstRun, fillUser } from "./support.mjs";

const shots = screenshotsDir();
const WAIT = { timeout: 20000 };

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-screenshots-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// Posts through the same endpoint the composer uses: text, or a file made in the page (a PNG
// drawn on a canvas, or a small PDF).
function post(page, roomId, clientId, what) {
  return page.evaluate(async ({ roomId, clientId, what }) => {
    const form = new FormData();
    form.append("message[client_message_id]", clientId);
    if (what.text) {
      form.append("message[body]", `<div>${what.text}</div>`);
    } else if (what.picture) {
      const canvas = Object.assign(document.createElement("canvas"), { width: 960, height: 600 });
      const g = canvas.getContext("2d");
      const sky = g.createLinearGradient(0, 0, 0, 600);
      sky.addColorStop(0, "#f7b267");
      sky.addColorStop(1, "#f25c54");
      g.fillStyle = sky;
      g.fillRect(0, 0, 960, 600);
      g.fillStyle = "#3d405b";
      g.beginPath();
      g.moveTo(0, 600);
      g.lineTo(300, 280);
      g.lineTo(520, 460);
      g.lineTo(720, 320);
      g.lineTo(960, 600);
      g.fill();
      const blob = await new Promise((ok) => canvas.toBlob(ok, "image/png"));
      form.append("message[attachment]", new File([blob], what.picture, { type: "image/png" }));
    } else {
      form.append("message[attachment]", new File(["%PDF-1.4\n% launch plan\n"], what.file, { type: "application/pdf" }));
    }
    const r = await fetch(`/rooms/${roomId}/messages`, { method: "POST", body: form, headers: { Accept: "text/vnd.turbo-stream.html" } });
    return r.status;
  }, { roomId, clientId, what });
}

// The box of a message's bubble, once the message is formatted.
async function bubble(page, clientId) {
  const content = page.locator(`#message_${clientId}.message--formatted .message__body-content`);
  await content.waitFor(WAIT);
  const b = await content.boundingBox();
  assert.ok(b, `message ${clientId} has a bubble`);
  return b;
}

// Waits until every image on the page has loaded (or failed), so a screenshot shows them.
const imagesLoaded = (page) => page.waitForFunction(() => [...document.images].every((img) => img.complete), null, WAIT);

test("bubbles for everyone, mine on the right; screenshots of the conversation, sidebar, settings, profile, search", async () => {
  const adaContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const ada = await adaContext.newPage();
  await firstRun(ada, base);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  const bobContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const bob = await bobContext.newPage();
  const code = sql("SELECT join_code FROM accounts");
  await bob.goto(`${base}/join/${code}`);
  await fillUser(bob, "Bob Baker", "bob@example.com", "secret654321");
  await Promise.all([bob.waitForURL(/\/rooms\/\d+/, WAIT), bob.click(`form[action="/join/${code}"] button[type="submit"]`)]);
  // The invitation card of a new account's first room would fill the screenshots.
  for (let i = 0; i < 34; i++) assert.ok((await post(ada, roomId, `old-${i}`, { text: `Earlier note ${i + 1}` })) < 300);

  const lines = [
    [ada, "c1", { text: "Morning! Coffee is ready in the kitchen." }],
    [ada, "c2", { text: "The launch review moved to 10:30, bring the numbers." }],
    [bob, "c3", { text: "Thanks Ada, on my way. I'll bring the slides too." }],
    [bob, "c4", { picture: "sunset-over-the-ridge.png" }],
    [ada, "c5", { text: "That view! Where was that?" }],
    [bob, "c6", { text: "Up on the ridge trail last night." }],
    [ada, "c7", { file: "launch-plan.pdf" }],
  ];
  for (const [page, id, what] of lines) assert.ok((await post(page, roomId, id, what)) < 300, `post ${id}`);
  // Ada pings Bob from her sidebar.
  await ada.goto(`${base}/rooms/${roomId}`);
  await Promise.all([ada.waitForURL(/\/rooms\/\d+$/, WAIT), ada.locator(".directs form", { hasText: "Bob" }).locator("button").click()]);
  const pingId = sql("SELECT id FROM rooms WHERE type = 'Rooms::Direct'");
  assert.ok((await post(ada, pingId, "p1", { text: "Got a minute after the review?" })) < 300);

  for (const scheme of ["light", "dark"]) {
    for (const [name, viewport] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]]) {
      const context = await browser.newContext({ viewport, colorScheme: scheme, hasTouch: name === "phone", isMobile: name === "phone" });
      await context.addCookies(await adaContext.cookies());
      const page = await context.newPage();
      await page.goto(`${base}/rooms/${roomId}`);
      const list = await page.locator("#message-area .messages").boundingBox();
      // Ada's own: on the right, at the list's far edge less its gutter and her avatar.
      const mine = await bubble(page, "c5");
      const theirs = await bubble(page, "c6");
      assert.ok(list.x + list.width - (mine.x + mine.width) < 90, `${name}/${scheme}: my bubble ends ${list.x + list.width - (mine.x + mine.width)} px from the right`);
      assert.ok(theirs.x - list.x < 90, `${name}/${scheme}: Bob's bubble starts ${theirs.x - list.x} px from the left`);
      assert.ok(mine.x > theirs.x, "mine further right than Bob's");
      const colours = await page.evaluate(() => ["c5", "c6"].map((id) => getComputedStyle(document.querySelector(`#message_${id} .message__body-content`)).backgroundColor));
      assert.notEqual(colours[0], colours[1], "my bubble has its own colour");
      assert.ok(colours.every((c) => c !== "rgba(0, 0, 0, 0)"), `every message is a bubble: ${colours}`);
      // c3 and c4 are Bob's within five minutes: the second threads, without avatar and name.
      await page.locator("#message_c4.message--threaded").waitFor(WAIT);
      assert.equal(await page.locator("#message_c4 .message__heading").isVisible(), false);
      await imagesLoaded(page);
      await page.screenshot({ path: join(shots, `conversation-${name}-${scheme}.png`) });
      if (name === "phone" && scheme === "light") {
        await page.locator(".sidebar__toggle").click();
        await page.locator("#sidebar.open").waitFor(WAIT);
        await page.locator(`#list_rooms_direct_${pingId}`).waitFor(WAIT);
        await page.evaluate(() => new Promise((done) => setTimeout(done, 400))); // the slide-in transition
        await page.screenshot({ path: join(shots, "sidebar-phone-light.png") });
      }
      await context.close();
    }
  }

  // Tall enough for a whole settings panel (the page scrolls inside main, which a full-page
  // screenshot would not show).
  await ada.setViewportSize({ width: 1280, height: 1400 });
  for (const [file, path, ready] of [["account-settings", "/account/edit", "#account_users"], ["profile", "/users/me/profile", ".memberships"], ["search", "/searches?q=launch", "#search-results .message--formatted"]]) {
    await ada.goto(base + path);
    await ada.locator(ready).first().waitFor(WAIT);
    await imagesLoaded(ada);
    await ada.screenshot({ path: join(shots, `${file}.png`) });
  }
});
