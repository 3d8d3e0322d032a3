// Issue 14's acceptance as a new user meets it: the quick start's server (no DISABLE_SSL, plain
// HTTP on localhost), first run in Chromium, then a second person joins through the invite link
// the account page shows, in a second browser context. Every URL the pages hold is http:// and
// no response carries HSTS.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, firstRun, fillUser, saved } from "./support.mjs";

let srv, base, browser;

before(async () => {
  // DISABLE_SSL empty is unset: the server runs exactly as `./campfire-room` does.
  srv = await startServer("campfire-e2e-quickstart-", { DISABLE_SSL: "" });
  base = `http://localhost:${srv.port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// Records every response of `page` from our server that sends HSTS.
function watchHsts(page) {
  const seen = [];
  page.on("response", async (r) => {
    if (!r.url().startsWith(base)) return;
    const headers = await r.allHeaders();
    if (headers["strict-transport-security"]) seen.push(r.url());
  });
  return seen;
}

// The https:// URLs in a page's HTML, but links out of the app (the logo's once.com).
async function httpsUrls(page) {
  const html = await page.content();
  return (html.match(/https:\/\/[^"'\s<)]+/g) || []).filter((u) => !u.startsWith("https://once.com"));
}

test("plain HTTP quick start: http:// links, no HSTS, a second person joins by the link", async () => {
  const ada = await browser.newContext();
  const page = await ada.newPage();
  const hsts = watchHsts(page);
  await firstRun(page, base);
  assert.deepEqual(await httpsUrls(page), [], "the room page");

  await page.goto(base + "/account/edit");
  const link = await page.locator("#invite_url").inputValue();
  assert.match(link, new RegExp(`^http://localhost:${srv.port}/join/[\\w-]+$`));
  assert.deepEqual(await httpsUrls(page), [], "the account page");
  await page.goto(base + "/users/1");
  assert.deepEqual(await httpsUrls(page), [], "the profile page (session transfer link)");
  const cookies = await ada.cookies();
  assert.ok(cookies.length > 0 && cookies.every((c) => !c.secure), "no Secure cookie over plain HTTP");

  const bob = await browser.newContext();
  const second = await bob.newPage();
  const hsts2 = watchHsts(second);
  await second.goto(link);
  await fillUser(second, "Bob", "bob@example.com", "secret123456");
  await Promise.all([second.waitForURL(/\/rooms\/\d+/), second.click('form[action^="/join/"] button[type="submit"]')]);
  await second.fill("trix-editor", "hello from Bob");
  await second.keyboard.press("Enter");
  await saved(second, "hello from Bob").waitFor();
  // Ada, back in the room, gets it live: the cable works over ws:// too.
  await page.goto(base + "/rooms/1");
  await saved(page, "hello from Bob").waitFor();
  assert.deepEqual([...hsts, ...hsts2], [], "no response sent HSTS");
  await ada.close();
  await bob.close();
});
