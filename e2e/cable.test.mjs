// Action Cable against the real binary with the real client (issue 5, acceptance 1): the npm
// `@rails/actioncable` consumer, unmodified, over the `ws` WebSocket implementation (Node has no
// browser WebSocket that can carry a cookie), signed in with the `session_token` cookie that
// sign-in set.
//
// - Ada subscribes to her room's RoomMessagesChannel and receives the message Bob posts over
//   HTTP (while the messages controller is not built on this branch, the test broadcasts the
//   same Turbo Stream through the test route instead, and says so);
// - a room she is not a member of is rejected;
// - a consumer without a cookie is told `unauthorized` and stops reconnecting.
// `ws` offers permessage-deflate, so this also checks our compressed frames against zlib.
//
// Run: `make e2e` (or `node --test` here with CAMPFIRE_BIN pointing at the binary).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createHmac, pbkdf2Sync } from "node:crypto";
import WebSocket from "ws";
import { startServer } from "./support.mjs";

const require = createRequire(import.meta.url);
const SECRET = "dummy";

// The client library listens for page visibility and `online` events only; Node has neither.
globalThis.document ??= { visibilityState: "visible", addEventListener() {}, removeEventListener() {} };
globalThis.addEventListener ??= () => {};
globalThis.removeEventListener ??= () => {};
const ActionCable = require("@rails/actioncable");

let srv, base, port, sql;

// A same-origin form POST; returns the response (redirects not followed).
function post(path, fields, cookie) {
  const headers = { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", Origin: base };
  if (cookie) headers.Cookie = cookie;
  return fetch(base + path, { method: "POST", headers, body: new URLSearchParams(fields).toString(), redirect: "manual" });
}

function sessionCookie(response) {
  const line = response.headers.getSetCookie().find((c) => c.startsWith("session_token="));
  assert.ok(line, "sign-in sets session_token");
  return line.split(";")[0];
}

// A Turbo signed stream name (spec/06 §8.2), minted independently of the server's code.
const streamKey = pbkdf2Sync(SECRET, "turbo/signed_stream_verifier_key", 1000, 64, "sha256");
function signedStreamName(name) {
  const data = Buffer.from(JSON.stringify(name)).toString("base64");
  return `${data}--${createHmac("sha256", streamKey).update(data).digest("hex")}`;
}
function roomMessagesStream(kind, id) {
  return `${Buffer.from(`gid://campfire/Rooms::${kind}/${id}`).toString("base64url")}:messages`;
}

// A consumer whose sockets carry `cookie` and our Origin, as a browser's would.
function consumer(cookie) {
  const headers = { Origin: base };
  if (cookie) headers.Cookie = cookie;
  ActionCable.adapters.WebSocket = class extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, { headers });
    }
  };
  return ActionCable.createConsumer(`ws://127.0.0.1:${port}/cable`);
}

function subscribe(c, params, extra = {}) {
  return new Promise((ok) => {
    const events = [];
    const sub = c.subscriptions.create(params, {
      connected: () => ok({ sub, outcome: "connected", events }),
      rejected: () => ok({ sub, outcome: "rejected", events }),
      received: (data) => events.push(data),
      ...extra,
    });
  });
}

async function until(what, f, ms = 10000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (f()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let ada, bob;

before(async () => {
  srv = await startServer("campfire-cable-", { SECRET_KEY_BASE: SECRET, CAMPFIRE_TEST_ROUTES: "1" });
  ({ base, port, sql } = srv);
  const first = await post("/first_run", { "user[name]": "Ada", "user[email_address]": "ada@example.com", "user[password]": "secret123456" });
  assert.equal(first.status, 302);
  ada = sessionCookie(first);
  // Bob shares Ada's password hash, so he can sign in through the real form.
  sql(`INSERT INTO users (name, email_address, password_digest, role, status, created_at, updated_at)
       SELECT 'Bob', 'bob@example.com', password_digest, 0, 0, created_at, updated_at FROM users WHERE email_address = 'ada@example.com'`);
  const signIn = await post("/session", { email_address: "bob@example.com", password: "secret123456" });
  assert.equal(signIn.status, 302);
  bob = sessionCookie(signIn);
});

after(() => {
  srv?.stop();
});

test("a member receives a room's messages; other rooms are rejected", async (t) => {
  const room = Number(sql("SELECT id FROM rooms WHERE type = 'Rooms::Open' ORDER BY id LIMIT 1"));
  const bobId = Number(sql("SELECT id FROM users WHERE email_address = 'bob@example.com'"));
  sql(`INSERT OR IGNORE INTO memberships (room_id, user_id, involvement, connections, created_at, updated_at)
       VALUES (${room}, ${bobId}, 'everything', 0, datetime('now'), datetime('now'))`);
  sql(`INSERT INTO rooms (name, type, creator_id, created_at, updated_at) VALUES ('Secret', 'Rooms::Closed', ${bobId}, datetime('now'), datetime('now'))`);
  const secret = Number(sql("SELECT id FROM rooms WHERE name = 'Secret'"));
  sql(`INSERT INTO memberships (room_id, user_id, involvement, connections, created_at, updated_at)
       VALUES (${secret}, ${bobId}, 'everything', 0, datetime('now'), datetime('now'))`);

  const c = consumer(ada);
  try {
    const mine = await subscribe(c, { channel: "RoomMessagesChannel", signed_stream_name: signedStreamName(roomMessagesStream("Open", room)) });
    assert.equal(mine.outcome, "connected");
    const theirs = await subscribe(c, { channel: "RoomMessagesChannel", signed_stream_name: signedStreamName(roomMessagesStream("Closed", secret)) });
    assert.equal(theirs.outcome, "rejected");
    const heartbeat = await subscribe(c, { channel: "HeartbeatChannel" });
    assert.equal(heartbeat.outcome, "connected");

    const text = `hello from bob ${Date.now()}`;
    const posted = await post(`/rooms/${room}/messages`, { "message[body]": text, "message[client_message_id]": "e2ecable01" }, bob);
    if (posted.status >= 300) {
      t.diagnostic(`POST /rooms/${room}/messages answered ${posted.status}: broadcasting through the test route instead`);
      const html = `<turbo-stream action="append" target="messages_rooms_open_${room}"><template><div id="message_e2ecable01">${text}</div></template></turbo-stream>`;
      const r = await fetch(`${base}/__cable/broadcast?stream=${encodeURIComponent(roomMessagesStream("Open", room))}`, { method: "POST", body: JSON.stringify(html) });
      assert.equal(r.status, 200);
    }
    await until("Bob's message", () => mine.events.some((d) => typeof d === "string" && d.includes(text)));
    const got = mine.events.find((d) => d.includes(text));
    // `ws` offers permessage-deflate, so the frame came compressed and zlib inflated it.
    assert.match(c.connection.webSocket.extensions, /permessage-deflate/);
    assert.match(got, /^<turbo-stream action="append" target="messages_rooms_open_\d+">/);
    assert.equal(theirs.events.length, 0);
  } finally {
    c.disconnect();
  }
});

test("without a cookie the client is told unauthorized and gives up", async () => {
  const c = consumer(null);
  const seen = [];
  const done = new Promise((ok) => {
    c.subscriptions.create({ channel: "HeartbeatChannel" }, {
      connected: () => seen.push("connected"),
      disconnected: (d) => ok(d),
    });
  });
  const d = await done;
  assert.deepEqual(seen, []);
  assert.equal(d.willAttemptReconnect, false);
  assert.equal(c.connection.monitor.isRunning(), false);
  c.disconnect();
});
