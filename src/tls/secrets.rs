//! TLS 1.3's application traffic secrets, caught as rustls derives them.
//!
//! Why: after the handshake a connection keeps only raw keys (`server::tls_records`), and the
//! keys after a KeyUpdate are derived from the current traffic secret, which rustls hands out
//! only to a key log. This one keeps the two secrets in the thread that runs the handshake:
//! rustls derives them inside `process_tls_records` on the loop thread, and the loop takes them
//! right after that call returns, so they cannot be mistaken for another connection's (the
//! record layer still checks them against the keys rustls hands over).

use rustls::KeyLog;
use std::cell::Cell;

const CLIENT: &str = "CLIENT_TRAFFIC_SECRET_0";
const SERVER: &str = "SERVER_TRAFFIC_SECRET_0";

/// One traffic secret (SHA-256's 32 or SHA-384's 48 bytes); `len` 0 when none was caught.
#[derive(Clone, Copy)]
pub struct Secret {
    pub bytes: [u8; 48],
    pub len: u8,
}

impl Default for Secret {
    fn default() -> Secret {
        Secret { bytes: [0; 48], len: 0 }
    }
}

impl Secret {
    pub fn get(&self) -> Option<&[u8]> {
        (self.len > 0).then(|| &self.bytes[..usize::from(self.len)])
    }
}

/// The client's and the server's first application traffic secrets.
#[derive(Clone, Copy, Default)]
pub struct Caught {
    pub client: Secret,
    pub server: Secret,
}

impl Caught {
    /// Keeps what the last rustls call derived, if anything.
    pub fn absorb(&mut self, new: Caught) {
        if new.client.len > 0 {
            self.client = new.client;
        }
        if new.server.len > 0 {
            self.server = new.server;
        }
    }
}

thread_local! {
    static CAUGHT: Cell<Caught> = Cell::new(Caught::default());
}

/// The secrets rustls derived on this thread since the last call (and forgets them here).
pub fn take() -> Caught {
    CAUGHT.with(|c| c.take())
}

/// The key log in the server configuration.
#[derive(Debug)]
pub struct Capture;

impl KeyLog for Capture {
    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        if secret.len() > 48 {
            return;
        }
        let mut s = Secret::default();
        s.bytes[..secret.len()].copy_from_slice(secret);
        s.len = secret.len() as u8;
        CAUGHT.with(|c| {
            let mut v = c.get();
            if label == CLIENT {
                v.client = s;
            } else if label == SERVER {
                v.server = s;
            }
            c.set(v);
        });
    }

    fn will_log(&self, label: &str) -> bool {
        label == CLIENT || label == SERVER
    }
}
