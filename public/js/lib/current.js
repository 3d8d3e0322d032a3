// current.js: who is signed in and which room is open, read live from the head's meta tags
// (Turbo swaps them on every navigation). Also exposed as window.Current.

function meta(name) {
  return document.head.querySelector(`meta[name="${name}"]`)?.content
}

export const Current = {
  get user() {
    const id = meta("current-user-id")
    return id ? { id: parseInt(id, 10), name: meta("current-user-name") } : undefined
  },
  get room() {
    const id = meta("current-room-id")
    return id ? { id: parseInt(id, 10) } : undefined
  }
}

window.Current = Current
