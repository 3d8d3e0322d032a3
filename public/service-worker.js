// service-worker.js: shows Web Push notifications and opens their room when clicked (spec/09 §2).
// Served at /service-worker.js (scope /). No caching, no fetch handling, no offline support.

self.addEventListener("push", event => {
  const { title, options } = event.data.json()
  const badge = options?.data?.badge || 0
  event.waitUntil(Promise.all([
    self.registration.showNotification(title, options),
    "setAppBadge" in navigator ? navigator.setAppBadge(badge).catch(() => {}) : Promise.resolve()
  ]))
})

self.addEventListener("notificationclick", event => {
  event.notification.close()
  const url = new URL(event.notification.data?.path || "/", self.location.origin).href
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true })
    const focused = windows.find(client => client.focused)
    if (focused) await focused.navigate(url)
    else await self.clients.openWindow(url)
  })())
})
