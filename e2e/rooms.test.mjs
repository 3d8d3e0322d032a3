// Browser test of issue 4's rooms (acceptance 4): Debian's Chromium, driven by playwright-core,
// against the real binary on a fresh database. First run makes an administrator and the
// "All Talk" room; a second person joins through SQL. Then: open the room page, post two
// messages, create a closed room through the form, start a ping from the sidebar, and take
// screenshots of the room page at desktop and phone width, light and dark, into
// e2e/screenshots/.
//
// Run: `make e2e` (or `node --test` here with CAMPFIRE_BIN pointing at the binary).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, screenshotsDir, fillFirstRun, FIRST_RUN_SUBMIT } from "./support.mjs";

const shots = screenshotsDir();

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-rooms-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

// Waits for the POST to `path` that `action` causes, and returns its response.
async function posted(page, path, action) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === path, { timeout: 20000 }),
    action(),
  ]);
  return response;
}

// Posts a message the way the composer's form does (same-origin form POST).
async function postMessage(page, roomId, text, clientId) {
  const status = await page.evaluate(
    async ([roomId, text, clientId]) => {
      const body = new URLSearchParams({ "message[body]": `<div>${text}</div>`, "message[client_message_id]": clientId });
      const r = await fetch(`/rooms/${roomId}/messages`, { method: "POST", body, headers: { Accept: "text/vnd.turbo-stream.html" } });
      return r.status;
    },
    [roomId, text, clientId],
  );
  assert.ok(status === 200 || status === 201, `message post answered ${status}`);
}

test("open a room, create a closed room and a ping; screenshots", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await fillFirstRun(page, base);
  await posted(page, "/first_run", () => page.click(FIRST_RUN_SUBMIT));
  // A second person to ping and to add to rooms (signing up is issue 3's; SQL is enough here).
  const now = new Date().toISOString().replace("T", " ").replace("Z", "");
  sql(`INSERT INTO users (name, email_address, role, status, created_at, updated_at) VALUES ('Kevin Lane', 'kevin@example.com', 0, 0, '${now}', '${now}')`);
  sql(`INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) SELECT id, (SELECT id FROM users WHERE name = 'Kevin Lane'), 'mentions', '${now}', '${now}' FROM rooms`);

  // The room page.
  const roomId = sql("SELECT id FROM rooms WHERE name = 'All Talk'");
  await page.goto(`${base}/rooms/${roomId}`);
  assert.equal(await page.title(), "All Talk");
  await page.locator(`#messages_rooms_open_${roomId}`).waitFor();
  await postMessage(page, roomId, "Morning! Coffee is ready in the kitchen.", "e2e-1");
  await postMessage(page, roomId, "Thanks, on my way. Launch plan review at 10?", "e2e-2");
  await page.goto(`${base}/rooms/${roomId}`);
  await page.locator("#message_e2e-2").waitFor();
  assert.equal(await page.locator("[data-message-id]").count(), 2);
  // The sidebar frame loads with the room in it.
  await page.locator(`#list_rooms_open_${roomId}`).waitFor({ timeout: 20000 });

  // A closed room through the form: new room, flip "Everyone" off, name it, save.
  await page.goto(base + "/rooms/opens/new");
  await page.click('a.switch[href="/rooms/closeds/new"]');
  await page.waitForURL(/\/rooms\/closeds\/new$/);
  await page.fill("#room_name", "Launch crew");
  await page.screenshot({ path: join(shots, "new-closed-room-desktop-light.png") });
  const kevinId = sql("SELECT id FROM users WHERE name = 'Kevin Lane'");
  await page.click(`label.switch:has(input[name="user_ids[]"][value="${kevinId}"])`);
  assert.ok(await page.isChecked(`input[name="user_ids[]"][value="${kevinId}"]`));
  const created = await posted(page, "/rooms/closeds", () => page.click(".form-actions button[type=submit]"));
  assert.equal(created.status(), 302);
  await page.waitForURL(/\/rooms\/\d+$/);
  assert.equal(await page.title(), "Launch crew");
  assert.equal(sql("SELECT type FROM rooms WHERE name = 'Launch crew'"), "Rooms::Closed");
  assert.equal(sql("SELECT count(*) FROM memberships JOIN rooms ON rooms.id = room_id WHERE rooms.name = 'Launch crew'"), "2");

  // A ping from the sidebar's placeholder button for Kevin.
  await page.locator(`form[action="/rooms/directs?user_ids[]=${kevinId}"] button`).waitFor({ timeout: 20000 });
  const ping = await posted(page, "/rooms/directs", () => page.click(`form[action="/rooms/directs?user_ids[]=${kevinId}"] button`));
  assert.equal(ping.status(), 302);
  const pingRoom = sql("SELECT id FROM rooms WHERE type = 'Rooms::Direct'");
  assert.equal(ping.headers()["location"], `/rooms/${pingRoom}`);
  await page.waitForURL(new RegExp(`/rooms/${pingRoom}$`), { timeout: 20000 });
  await page.waitForFunction(() => document.title === "Kevin Lane", null, { timeout: 20000 });
  assert.equal(sql("SELECT count(*) FROM rooms WHERE type = 'Rooms::Direct'"), "1");
  await page.goto(`${base}/rooms/directs/${pingRoom}/edit`);
  await page.screenshot({ path: join(shots, "edit-ping-desktop-light.png") });

  // Screenshots of the room page: desktop and phone, light and dark.
  for (const scheme of ["light", "dark"]) {
    for (const [name, viewport] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]]) {
      const ctx = await browser.newContext({ viewport, colorScheme: scheme, storageState: await context.storageState() });
      const p = await ctx.newPage();
      await p.goto(`${base}/rooms/${roomId}`);
      await p.locator("#message_e2e-2").waitFor();
      await p.locator(`#list_rooms_open_${roomId}`).waitFor({ timeout: 20000 }).catch(() => {});
      await p.waitForTimeout(300);
      await p.screenshot({ path: join(shots, `room-${name}-${scheme}.png`) });
      await ctx.close();
    }
  }
  await context.close();
});
