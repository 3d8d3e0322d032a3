// Browser tests of the defects a new user met in Chromium (issue 17 §3), one test each, in the
// order of the table: Debian's Chromium, driven by playwright-core, against the real
// binary on a fresh database. Ada runs first run (administrator); Bob joins through the join link
// in a second browser context. Each test names the defect it guards; each would fail with the
// fix taken out.
//
// Every wait has a timeout and a timeout fails the test. Run: `make e2e` (or `node --test
// newcomer.test.mjs` here with CAMPFIRE_BIN pointing at the binary).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, firstRun, fillUser, saved, openMenu } from "./support.mjs";

const WAIT = { timeout: 20000 };

let srv, base, sql, browser;
let ada, bob, roomId, adaId, bobId;

before(async () => {
  srv = await startServer("campfire-e2e-newcomer-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
  ada = await signedInPage(async (page) => firstRun(page, base));
  roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  adaId = sql("SELECT id FROM users WHERE name = 'Ada Admin'");
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// A page in a context of its own (its own cookies), signed in by `signIn`; it records uncaught
// errors and unhandled promise rejections in page.errors, and in page.cable the channels its
// newest cable socket has had confirmed (read from the WebSocket frames themselves).
async function signedInPage(signIn, options = { viewport: { width: 1280, height: 800 } }) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.on("dialog", (d) => d.accept());
  page.cable = new Set();
  page.on("websocket", (ws) => {
    const confirmed = (page.cable = new Set());
    ws.on("framereceived", ({ payload }) => {
      const frame = JSON.parse(String(payload));
      if (frame.type === "confirm_subscription") confirmed.add(JSON.parse(frame.identifier).channel);
    });
  });
  await signIn(page);
  return page;
}

// A page signed in with the cookies of `page`.
function alsoSignedIn(page, options) {
  return signedInPage(async (other) => other.context().addCookies(await page.context().cookies()), options);
}

// Bob joins through the account's join link and lands in the room the server sends him to.
async function joinAsBob(page) {
  const code = sql("SELECT join_code FROM accounts");
  await page.goto(`${base}/join/${code}`);
  await fillUser(page, "Bob Baker", "bob@example.com", "secret654321");
  await Promise.all([page.waitForURL(/\/rooms\/\d+/, WAIT), page.click(`form[action="/join/${code}"] button[type="submit"]`)]);
}

// Waits until the page's sidebar frame is there and its socket has confirmed the sidebar's
// channels, so that a broadcast sent next cannot be missed. Throws after 20 s.
async function sidebarLive(page) {
  await page.locator("#user_sidebar .sidebar__container").waitFor(WAIT);
  const wanted = ["Turbo::StreamsChannel", "UnreadRoomsChannel", "ReadRoomsChannel"];
  const deadline = Date.now() + WAIT.timeout;
  while (!wanted.every((channel) => page.cable.has(channel))) {
    if (Date.now() > deadline) throw new Error(`sidebar channels not confirmed: have ${[...page.cable].join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Posts a message with a picture (a PNG drawn on a canvas) and returns its locator.
async function postImage(page, width, height, clientId) {
  const status = await page.evaluate(async ({ roomId, width, height, clientId }) => {
    const canvas = document.createElement("canvas");
    Object.assign(canvas, { width, height });
    const g = canvas.getContext("2d");
    g.fillStyle = "#2a9d8f";
    g.fillRect(0, 0, width, height);
    const blob = await new Promise((ok) => canvas.toBlob(ok, "image/png"));
    const form = new FormData();
    form.append("message[attachment]", new File([blob], "teal.png", { type: "image/png" }));
    form.append("message[client_message_id]", clientId);
    return (await fetch(`/rooms/${roomId}/messages`, { method: "POST", body: form })).status;
  }, { roomId, width, height, clientId });
  assert.ok(status < 300, `image post answered ${status}`);
  return page.locator(`#message_${clientId}`);
}

// Posts a text message the way the composer's form does.
async function postText(page, text, clientId) {
  const status = await page.evaluate(async ({ roomId, text, clientId }) => {
    const body = new URLSearchParams({ "message[body]": `<div>${text}</div>`, "message[client_message_id]": clientId });
    return (await fetch(`/rooms/${roomId}/messages`, { method: "POST", body, headers: { Accept: "text/vnd.turbo-stream.html" } })).status;
  }, { roomId, text, clientId });
  assert.ok(status < 300, `message post answered ${status}`);
}

const box = (locator) => locator.boundingBox().then((b) => (assert.ok(b, "element has a box"), b));
const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test("§3.1 @mention autocomplete works in the composer focused on landing (after joining)", async () => {
  bob = await signedInPage(joinAsBob);
  bobId = sql("SELECT id FROM users WHERE name = 'Bob Baker'");
  // The composer took the focus on its own; nobody clicks it.
  await bob.waitForFunction(() => document.activeElement?.matches("trix-editor#message_body") && document.activeElement.editor, null, WAIT);
  await bob.keyboard.type("@Ad");
  await bob.locator('[role="option"]', { hasText: "Ada Admin" }).first().waitFor({ timeout: 5000 });
});

test("§3.2 a ping created live replaces the other person's placeholder", async () => {
  await ada.goto(`${base}/rooms/${roomId}`);
  await bob.goto(`${base}/rooms/${roomId}`);
  const bobsPlaceholder = bob.locator(".directs form", { hasText: "Ada" });
  await bobsPlaceholder.waitFor(WAIT);
  await sidebarLive(bob);
  await ada.locator(".directs form", { hasText: "Bob" }).waitFor(WAIT);
  await Promise.all([ada.waitForURL(/\/rooms\/\d+/, WAIT), ada.locator(".directs form", { hasText: "Bob" }).locator("button").click()]);
  const pingId = sql(`SELECT id FROM rooms WHERE type = 'Rooms::Direct'`);
  await bob.locator(`#list_rooms_direct_${pingId}`).waitFor(WAIT);
  await bob.waitForFunction(() => ![...document.querySelectorAll(".directs form")].some((f) => f.textContent.includes("Ada")), null, { timeout: 5000 });
  assert.equal(await bob.locator(".directs a.direct", { hasText: "Ada" }).count(), 1, "the ping shows once");
});

test("§3.3 at 390 px the options button leaves pictures uncovered", async () => {
  // A phone: touch, no hover, so the options button always shows.
  const phone = await alsoSignedIn(ada, { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await phone.goto(`${base}/rooms/${roomId}`);
  // A picture right after a text of the same person: the threaded message, whose button
  // used to sit over the picture's top-right corner.
  await postText(phone, "Look at this", "phone-text");
  const message = await postImage(phone, 600, 400, "phone-image");
  const picture = message.locator(".message__attachment");
  await picture.waitFor(WAIT);
  await message.locator(".message__options-btn").waitFor(WAIT);
  await message.scrollIntoViewIfNeeded();
  const pictureBox = await box(picture);
  const options = await box(message.locator(".message__options-btn"));
  assert.ok(!overlaps(pictureBox, options), `options ${JSON.stringify(options)} over picture ${JSON.stringify(pictureBox)}`);
  await phone.context().close();
});

test("§3.4 picture thumbnails start where text and file attachments start", async () => {
  // Bob's messages, seen by Ada: other people's messages sit at the left.
  await bob.goto(`${base}/rooms/${roomId}`);
  await postText(bob, "Here is the drawing", "align-text");
  await postImage(bob, 300, 200, "align-image");
  await ada.goto(`${base}/rooms/${roomId}`);
  // Measured in one go once both are formatted (the room's catch-up refresh may replace them).
  const at = await (await ada.waitForFunction(() => {
    const left = (selector) => document.querySelector(selector)?.getBoundingClientRect().x;
    if (!document.querySelector("#message_align-image.message--formatted .message__attachment")?.complete) return null;
    if (!document.querySelector("#message_align-text.message--formatted")) return null;
    return {
      picture: left("#message_align-image .message__attachment"),
      pictureMessage: left("#message_align-image .message__body-content"),
      textMessage: left("#message_align-text .message__body-content"),
    };
  }, null, WAIT)).jsonValue();
  assert.ok(Math.abs(at.pictureMessage - at.textMessage) <= 1, `the picture's message starts at ${at.pictureMessage}, the text's at ${at.textMessage}`);
  assert.ok(at.picture - at.pictureMessage <= 12, `the picture sits ${at.picture - at.pictureMessage} px into its message, not centred`);
});

test("§3.5 an old join link answers the 404 page", async () => {
  const old = sql("SELECT join_code FROM accounts");
  await ada.goto(`${base}/account/edit`);
  await Promise.all([ada.waitForURL(/\/account\/edit/, WAIT), ada.locator('form[action="/account/join_code"] button').click()]);
  await ada.waitForFunction((old) => !document.body.innerHTML.includes(`/join/${old}`), old, WAIT);
  const visitor = await browser.newPage();
  const response = await visitor.goto(`${base}/join/${old}`);
  assert.equal(response.status(), 404);
  await visitor.getByRole("heading", { name: "Page not found" }).waitFor({ timeout: 5000 });
  await visitor.close();
});

test("§3.6 Ban on someone who signed in from a private address bans them and says so", async () => {
  // Bob's sessions came from 127.0.0.1, a loopback address.
  await ada.goto(`${base}/users/${bobId}`);
  await Promise.all([ada.waitForURL(`${base}/users/${bobId}`, WAIT), ada.locator(`form[action="/users/${bobId}/ban"] button`).click()]);
  await ada.locator(".flash", { hasText: "127.0.0.1" }).waitFor({ timeout: 5000 });
  assert.equal(sql(`SELECT status FROM users WHERE id = ${bobId}`), "2", "Bob is banned");
  await Promise.all([ada.waitForURL(`${base}/users/${bobId}`, WAIT), ada.locator(`form[action="/users/${bobId}/ban"] button`).click()]);
  assert.equal(sql(`SELECT status FROM users WHERE id = ${bobId}`), "0", "Bob is back");
});

test("§3.7 the edit form's × shares the Save/Delete row; file chips never cover the last message", async () => {
  await ada.goto(`${base}/rooms/${roomId}`);
  // Enough messages that the list scrolls.
  for (let i = 0; i < 25; i++) await postText(ada, `Filler ${i}`, `filler-${i}`);
  await postText(ada, "A message of mine to edit", "edit-me");
  await ada.goto(`${base}/rooms/${roomId}`);
  const mine = saved(ada, "A message of mine to edit");
  await mine.waitFor(WAIT);
  // The editor opens inside the room, in the message's frame, as a person opens it.
  await openMenu(ada, mine);
  await mine.locator(".message__actions-menu a.message__edit-btn").click();
  await mine.locator("trix-editor").waitFor(WAIT);
  const save = await box(ada.getByRole("button", { name: "Save changes" }));
  const close = await box(ada.getByRole("link", { name: "Close editor and discard changes" }));
  assert.ok(close.y < save.y + save.height && save.y < close.y + close.height, `× at y=${close.y}, Save at y=${save.y}`);

  await ada.goto(`${base}/rooms/${roomId}`);
  const last = ada.locator("#message-area .messages > [data-message-id].message--formatted").last();
  await last.waitFor(WAIT);
  const scrolls = await ada.evaluate(() => { const l = document.querySelector("#message-area .messages"); return l.scrollHeight > l.clientHeight; });
  assert.ok(scrolls, "the list is long enough to scroll");
  await ada.evaluate(() => {
    const input = document.querySelector("form#composer input[type=file]");
    const files = new DataTransfer();
    for (const name of ["agenda.txt", "minutes-of-the-long-meeting.txt", "budget.txt"]) files.items.add(new File(["x"], name, { type: "text/plain" }));
    input.files = files.files;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  await ada.waitForFunction(() => document.querySelectorAll("form#composer .composer__filelist > *").length === 3, null, WAIT);
  // Two frames: layout, then the resize observers of that layout.
  await ada.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const list = await box(ada.locator("#message-area .messages"));
  const lastBox = await box(last);
  assert.ok(lastBox.y + lastBox.height <= list.y + list.height + 1, `last message ends at ${lastBox.y + lastBox.height}, the list's view at ${list.y + list.height}`);
});

test("§3.7 account settings and profile headings line up with their fields", async () => {
  // Where the heading's text starts, not its box (padding used to push the text in).
  const textStart = (selector) => ada.evaluate((selector) => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector(selector));
    return range.getBoundingClientRect().x;
  }, selector);
  for (const path of ["/account/edit", "/users/me/profile"]) {
    await ada.goto(base + path);
    await ada.locator("main h2").first().waitFor(WAIT);
    const heading = await textStart("main h2");
    const field = await box(ada.locator("main .panel input.input").first());
    assert.ok(Math.abs(heading - field.x) <= 2, `${path}: heading text at x=${heading}, field at x=${field.x}`);
  }
  // The invite row follows its heading closely.
  await ada.goto(base + "/account/edit");
  const gap = await ada.evaluate(() => {
    const heading = [...document.querySelectorAll("main h2")].find((h) => /invite/i.test(h.textContent));
    return heading.nextElementSibling.getBoundingClientRect().top - heading.getBoundingClientRect().bottom;
  });
  assert.ok(gap <= 12, `${gap} px between "Invite people" and its row`);
});

test("§3.8 /favicon.ico is an icon", async () => {
  const response = await fetch(`${base}/favicon.ico`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /^image\//);
  const bytes = Buffer.from(await response.arrayBuffer());
  assert.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], "an ICO header");
});

test("§3.9 opening a room right after creating one leaves no unhandled rejection", async () => {
  const page = await alsoSignedIn(ada);
  // The race: the new room's page loads its sidebar frame while the unread channel confirms and
  // asks for a reload; the person clicks a room in the sidebar meanwhile. When the click comes
  // decides whether the two meet, so try it at several moments.
  for (const pause of [0, 25, 50, 75, 100, 150, 200, 300]) {
    await page.goto(`${base}/rooms/opens/new`);
    await page.fill("#room_name", `Design review ${pause}`);
    await Promise.all([page.waitForURL(/\/rooms\/\d+$/, WAIT), page.getByRole("button", { name: "Save" }).click()]);
    await new Promise((resolve) => setTimeout(resolve, pause));
    await page.locator(`#list_rooms_open_${roomId}`).click();
    await page.waitForURL(`${base}/rooms/${roomId}`, WAIT);
    await sidebarLive(page);
  }
  // A rejection surfaces within a task of the cancelled fetch; the room page loaded since.
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("§3.10 sign-in, join, first run and settings fields have the 🌐 translations", async () => {
  const visitor = await browser.newPage();
  await visitor.goto(`${base}/session/new`);
  const globe = visitor.locator(".field", { has: visitor.locator("#email_address") }).locator("summary", { hasText: "Translate" });
  await globe.click();
  await visitor.getByText("Introduce tu correo electrónico").waitFor({ timeout: 5000 });
  assert.equal(await visitor.locator(".field summary", { hasText: "Translate" }).count(), 2, "email and password");
  await visitor.goto(`${base}/join/${sql("SELECT join_code FROM accounts")}`);
  assert.equal(await visitor.locator(".field summary", { hasText: "Translate" }).count(), 3, "join: name, email, password");
  await visitor.close();
  for (const [path, count] of [["/account/edit", 1], ["/users/me/profile", 4], ["/rooms/opens/new", 1]]) {
    await ada.goto(base + path);
    assert.equal(await ada.locator(".field summary", { hasText: "Translate" }).count(), count, path);
  }
});

test("§3.11 the manifest offers screenshots for the richer install prompt", async () => {
  const manifest = await (await fetch(`${base}/webmanifest.json`)).json();
  assert.ok(Array.isArray(manifest.screenshots) && manifest.screenshots.length >= 2, "screenshots listed");
  for (const shot of manifest.screenshots) {
    const response = await fetch(new URL(shot.src, base));
    assert.equal(response.status, 200, shot.src);
    assert.equal(response.headers.get("content-type"), shot.type);
    const png = Buffer.from(await response.arrayBuffer());
    const size = `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
    assert.equal(size, shot.sizes, `${shot.src} is ${size}`);
    assert.ok(["narrow", "wide"].includes(shot.form_factor));
    assert.ok(shot.label);
  }
});
