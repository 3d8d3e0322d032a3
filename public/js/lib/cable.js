// cable.js: the one Action Cable consumer of the page, made on first use. Its URL comes from
// meta[name=action-cable-url].
import { createConsumer } from "@rails/actioncable"

let consumer

export function cable() {
  consumer ??= createConsumer()
  return consumer
}

// Subscribes with `params` (key order is kept: the server echoes the identifier verbatim).
export function subscribeTo(params, callbacks) {
  return cable().subscriptions.create(params, callbacks)
}

// Reopens the socket at once when it is not open (browser came back online).
export function reconnectIfStale() {
  const connection = cable().connection
  if (!connection.isOpen()) connection.reopen()
}
