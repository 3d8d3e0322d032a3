// Browser test of issue 4's message flows (acceptance 4, the messages part): Debian's Chromium,
// driven by playwright-core, against the real binary on a fresh database:
// send a message with bold text and a mention through the composer and see it rendered;
// boost it; find it through search; edit another message and delete it. Screenshots of the
// room with the messages and of the search page land in e2e/screenshots/.
//
// Needs the room page (rooms helper) in the same binary. Run: `make e2e`.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, screenshotsDir, firstRun, saved, openMenu } from "./support.mjs";

const shots = screenshotsDir();

let srv, base, sql, browser;

before(async () => {
  srv = await startServer("campfire-e2e-messages-");
  ({ base, sql } = srv);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  srv?.stop();
});

test("send with bold and a mention, boost, search, edit, delete; screenshots", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on("dialog", (d) => d.accept());
  await firstRun(page, base);
  const now = new Date().toISOString().replace("T", " ").replace("Z", "");
  sql(`INSERT INTO users (name, email_address, role, status, created_at, updated_at) VALUES ('Kevin Lane', 'kevin@example.com', 0, 0, '${now}', '${now}')`);
  sql(`INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) SELECT id, (SELECT id FROM users WHERE name = 'Kevin Lane'), 'mentions', '${now}', '${now}' FROM rooms`);
  const roomId = sql("SELECT id FROM rooms ORDER BY id LIMIT 1");
  await page.goto(`${base}/rooms/${roomId}`);

  // Compose: plain, bold (Ctrl+B), a mention picked from the autocomplete list, Enter sends.
  const editor = page.locator("trix-editor#message_body");
  await editor.click();
  await page.keyboard.type("Coffee is ready, ");
  // Wait for Trix to take Ctrl+B before typing on. Under load the toggle was lost outright in 2 of
  // 6 `make e2e` runs (likely Trix recomputing its current attributes from a late selection update
  // of the text typed before; not pinned down): press again until bold is on, as a person would.
  const boldOn = () => document.querySelector("trix-editor#message_body").editor.attributeIsActive("bold");
  for (let tries = 0; ; tries++) {
    if (!(await page.evaluate(boldOn))) await page.keyboard.press("Control+b");
    if (await page.waitForFunction(boldOn, null, { timeout: 2000 }).then(() => true, () => false)) break;
    assert.ok(tries < 10, "Trix never took Ctrl+B");
  }
  await page.keyboard.type("really strong");
  await page.keyboard.press("Control+b");
  await page.keyboard.type(" today ");
  await page.keyboard.type("@Kev");
  await page.locator('[role="option"]', { hasText: "Kevin Lane" }).first().waitFor();
  await page.keyboard.press("Enter");
  await editor.locator("figure, action-text-attachment, .mention").first().waitFor();
  await page.click("button.composer__send");
  let first = saved(page, "Coffee is ready");
  await first.waitFor({ timeout: 20000 });
  assert.equal(await first.locator("strong", { hasText: "really strong" }).count(), 1, "bold survives");
  assert.equal(await first.locator(".mention", { hasText: "Kevin Lane" }).count(), 1, "the mention is rendered");
  const firstId = await first.getAttribute("data-message-id");
  first = page.locator(`[data-message-id="${firstId}"]`);
  const plain = sql(`SELECT body FROM message_search_index WHERE rowid = ${firstId}`);
  assert.match(plain, /Coffee is ready,\s+really strong\s+today\s+@Kevin Lane/);

  // A second message to edit and delete.
  await editor.click();
  await page.keyboard.type("Typo in this one");
  await page.keyboard.press("Enter");
  let second = saved(page, "Typo in this one");
  await second.waitFor({ timeout: 20000 });
  const secondId = await second.getAttribute("data-message-id");
  second = page.locator(`[data-message-id="${secondId}"]`);

  // Boost the first with the quick 👍.
  await openMenu(page, first);
  await first.locator('.message__actions-menu button[data-emoji="👍"]').click();
  await first.locator(".boosts__list .boost").first().waitFor({ timeout: 20000 });
  assert.equal(sql(`SELECT content FROM boosts WHERE message_id = ${firstId}`), "👍");

  // And with the inline form next to its boosts: "nice". The block came without boosts (the
  // boosts-frame controller filled it in); this one is the server's, reloaded after the boost.
  await first.hover();
  await first.locator(".message__boost-inline a.boost__action").click();
  await first.locator("input.input--boost").fill("nice");
  await first.locator("input.input--boost").press("Enter");
  await first.locator(".boosts__list .boost", { hasText: "nice" }).waitFor({ timeout: 20000 });
  assert.equal(sql(`SELECT group_concat(content, ' ') FROM (SELECT content FROM boosts WHERE message_id = ${firstId} ORDER BY id)`), "👍 nice");

  // Edit the second.
  await openMenu(page, second);
  await second.locator(".message__actions-menu a.message__edit-btn").click();
  const editEditor = second.locator("trix-editor");
  await editEditor.waitFor({ timeout: 20000 });
  await editEditor.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.type("Fixed the typo");
  await second.locator('button[type="submit"]', { hasText: "Save changes" }).click();
  await second.locator(".message__presentation", { hasText: "Fixed the typo" }).waitFor({ timeout: 20000 });
  assert.match(sql(`SELECT body FROM message_search_index WHERE rowid = ${secondId}`), /Fixed the typo/);
  await page.screenshot({ path: join(shots, "messages-room-desktop-light.png") });

  // Delete it.
  await openMenu(page, second);
  await second.locator(".message__actions-menu a.message__edit-btn").click();
  await second.locator("button", { hasText: "Delete message" }).click();
  await page.locator(`[data-message-id="${secondId}"]`).waitFor({ state: "detached", timeout: 20000 });
  assert.equal(sql(`SELECT count(*) FROM messages WHERE id = ${secondId}`), "0");

  // Search finds the first.
  await page.goto(base + "/searches");
  await page.fill("#q", "strong coffee");
  await Promise.all([page.waitForURL(/\/searches\?q=strong\+coffee/), page.press("#q", "Enter")]);
  const hit = page.locator(`#search-results [data-message-id="${firstId}"]`);
  await hit.waitFor();
  assert.equal(await page.locator("#search-results [data-message-id]").count(), 1);
  for (const scheme of ["light", "dark"]) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme, storageState: await context.storageState() });
    const p = await ctx.newPage();
    await p.goto(base + "/searches?q=strong+coffee");
    await p.locator(`#search-results [data-message-id="${firstId}"]`).waitFor();
    await p.waitForTimeout(300);
    await p.screenshot({ path: join(shots, `search-desktop-${scheme}.png`) });
    await ctx.close();
  }
  await context.close();
});
