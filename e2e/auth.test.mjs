// Browser test of issue 3's flows (acceptance 3): Debian's Chromium, driven by playwright-core,
// against the real binary on a fresh database:
// first-run page → create the administrator (with a photo) → lands signed in → sign out →
// sign in again → a wrong password shows the error → a join link creates a second user (with
// a photo); each photo is then served at its user's avatar URL.
//
// Run: `make e2e` (or `node --test` here with CAMPFIRE_BIN pointing at the binary).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, fillUser, FIRST_RUN_SUBMIT } from "./support.mjs";

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// Signs out the way the page's sign-out button does: a same-origin form POST with
// `_method=delete` (the profile page that holds the button belongs to another issue). It runs
// in a tab of its own (on a page of ours, /up), so no navigation Turbo still has in flight on
// another tab can interrupt it; returns that tab, left on the sign-in page.
async function signOut(context) {
  const page = await context.newPage();
  await page.goto(base + "/up");
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/session", { timeout: 20000 }),
    page.evaluate(() => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = "/session";
      form.setAttribute("data-turbo", "false");
      const m = document.createElement("input");
      m.type = "hidden";
      m.name = "_method";
      m.value = "delete";
      form.append(m);
      document.body.append(form);
      form.submit();
    }),
  ]);
  assert.equal(response.status(), 302);
  // Signed out: `/` sends the browser on to the sign-in page.
  await page.waitForURL(/\/session\/new$/, { timeout: 20000 });
  await page.waitForLoadState("load");
  return page;
}

// Submits a form by clicking `button` and returns the response to its POST.
async function submit(page, button, path) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === path, { timeout: 20000 }),
    page.click(button),
  ]);
  return response;
}

// Signed in: `/` leads to a room (the room page itself belongs to another issue, so only the
// address is checked). A second tab, so Turbo's own follow-up of the submission on the first
// one cannot interrupt the check.
async function assertLandsInARoom(page) {
  await page.waitForLoadState("load");
  const tab = await page.context().newPage();
  await tab.goto(base + "/");
  assert.match(new URL(tab.url()).pathname, /^\/rooms\/\d+$/);
  await tab.close();
}

// A 1×1 PNG, as a photo picked in the sign-up card's file input.
const PHOTO = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");

async function pickPhoto(page, name) {
  await page.setInputFiles('input[name="user[avatar]"]', { name, mimeType: "image/png", buffer: PHOTO });
}

// The avatar the signed-in user of `context` sees on their profile page is the photo.
async function assertAvatarIsThePhoto(context) {
  const tab = await context.newPage();
  await tab.goto(base + "/users/me/profile");
  const src = await tab.locator(".avatar-picker img").getAttribute("src");
  const r = await context.request.get(base + src);
  assert.equal(r.status(), 200);
  assert.equal(r.headers()["content-type"], "image/png");
  assert.deepEqual(Buffer.from(await r.body()), PHOTO);
  await tab.close();
}

async function sessionCookie(context) {
  return (await context.cookies()).find((c) => c.name === "session_token");
}

test("first run, sign out, sign in, wrong password, join link", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();

  // A fresh database sends everyone to first run.
  await page.goto(base + "/");
  await page.waitForURL(/\/first_run$/);
  assert.equal(await page.title(), "Set up Campfire");

  await fillUser(page, "Ada Admin", "ada@example.com", "secret123456");
  await pickPhoto(page, "ada.png");
  const created = await submit(page, FIRST_RUN_SUBMIT, "/first_run");
  assert.equal(created.status(), 302);
  assert.ok(await sessionCookie(context), "session_token cookie set");
  await assertLandsInARoom(page);
  assert.equal(sql("SELECT name || ' ' || role FROM users"), "Ada Admin 1");
  await assertAvatarIsThePhoto(context);

  await page.close();
  const signIn = await signOut(context);
  assert.equal(await sessionCookie(context), undefined, "signed out");
  assert.equal(await signIn.title(), "Sign in");

  // Sign in again.
  await signIn.fill('input[name="email_address"]', "ada@example.com");
  await signIn.fill('input[name="password"]', "secret123456");
  const signedIn = await submit(signIn, 'button[name="log_in"]', "/session");
  assert.equal(signedIn.status(), 302);
  assert.ok(await sessionCookie(context));
  await assertLandsInARoom(signIn);
  await signIn.close();

  // A wrong password shows the error. A fresh tab, so nothing Turbo still does on the old
  // one can navigate it away from the form.
  await (await signOut(context)).close();
  const retry = await context.newPage();
  await retry.goto(base + "/session/new");
  await retry.fill('input[name="email_address"]', "ada@example.com");
  await retry.fill('input[name="password"]', "not the password");
  const refused = await submit(retry, 'button[name="log_in"]', "/session");
  assert.equal(refused.status(), 401);
  await retry.getByText("Too many requests or unauthorized.").first().waitFor({ timeout: 20000 });
  assert.equal(await sessionCookie(context), undefined);
  await context.close();

  // The join link creates a second user, signed in.
  const code = sql("SELECT join_code FROM accounts");
  const guest = await browser.newContext();
  const joinPage = await guest.newPage();
  await joinPage.goto(`${base}/join/${code}`);
  assert.equal(await joinPage.title(), "Sign up");
  await fillUser(joinPage, "Kevin", "kevin@example.com", "secret654321");
  await pickPhoto(joinPage, "kevin.png");
  const joined = await submit(joinPage, `form[action="/join/${code}"] button[type="submit"]`, `/join/${code}`);
  assert.equal(joined.status(), 302);
  assert.ok(await sessionCookie(guest));
  await assertLandsInARoom(joinPage);
  assert.equal(sql("SELECT count(*) FROM users"), "2");
  assert.equal(sql("SELECT role FROM users WHERE name = 'Kevin'"), "0");
  await assertAvatarIsThePhoto(guest);
  // Each photo is attached to its user, and each has its resized avatar variant beside it.
  assert.equal(sql("SELECT group_concat(filename, ' ') FROM (SELECT b.filename FROM active_storage_blobs b JOIN active_storage_attachments a ON a.blob_id = b.id WHERE a.record_type = 'User' ORDER BY b.id)"), "ada.png kevin.png");
  assert.equal(sql("SELECT count(*) FROM active_storage_variant_records"), "2");
  await guest.close();

  // A wrong join code is a 404.
  const r = await fetch(`${base}/join/nope-nope-nope`);
  assert.equal(r.status, 404);
});
