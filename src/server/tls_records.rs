//! A TLS connection's record layer once its handshake is over (`server::transport`).
//!
//! Why not leave it to rustls: its connection object keeps about 3.3 KB per connection for the
//! connection's whole life, and even the expanded AES-GCM keys it hands over take 560 bytes a
//! direction; a thousand `wss://` clients paid 2 MB for them in a 15 MB container
//! (bench/results/2026-12-03-session10-tls.md). So the finished handshake is handed over with
//! `dangerous_into_kernel_connection` (the API rustls offers for kernel TLS), and a connection
//! keeps only the raw keys, IVs, sequence numbers and, for TLS 1.3, the traffic secrets the
//! next keys come from (about 250 bytes). The keys are expanded with `ring` (rustls's own
//! provider) on the stack for each batch of records sealed or opened.
//!
//! Records follow RFC 8446 §5 (TLS 1.3: inner content type, AAD = record header, nonce = IV ⊕
//! sequence), RFC 5288 (TLS 1.2 AES-GCM: 4-byte salt and 8-byte explicit nonce) and RFC 7905
//! (TLS 1.2 ChaCha20-Poly1305: nonce = IV ⊕ sequence); TLS 1.2's AAD is sequence, type,
//! version and plaintext length.

use crate::tls::secrets::Caught;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, CHACHA20_POLY1305};
use ring::hmac;
use rustls::crypto::hash::HashAlgorithm;
use rustls::server::UnbufferedServerConnection;
use rustls::{ConnectionTrafficSecrets, SupportedCipherSuite};

/// Record header: type, version, length.
const HEADER: usize = 5;
/// Plaintext per record (RFC 8446 §5.1).
const PLAIN_MAX: usize = 16384;
/// The largest record body accepted: TLS 1.2's allowance for the cipher's expansion.
const BODY_MAX: usize = PLAIN_MAX + 2048;
const TAG: usize = 16;
/// TLS 1.2 AES-GCM's explicit nonce, sent before each record's ciphertext.
const EXPLICIT: usize = 8;
/// Sequence numbers stay below this (as in rustls) even where the suite sets no lower limit.
const SEQ_LIMIT: u64 = 0xffff_ffff_ffff_0000;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
/// A TLS 1.3 KeyUpdate handshake message without its last byte, `request_update`.
const KEY_UPDATE: [u8; 4] = [24, 0, 0, 1];
const WARNING: u8 = 1;
const FATAL: u8 = 2;
const CLOSE_NOTIFY: u8 = 0;
const USER_CANCELED: u8 = 90;

/// Why the record layer ends a connection.
#[derive(Debug)]
pub(super) enum Fail {
    /// A record did not authenticate.
    BadRecordMac,
    RecordOverflow,
    Unexpected(&'static str),
    /// The peer sent this fatal alert.
    PeerAlert(u8),
    /// No more records may be protected (TLS 1.2's limit, or a KeyUpdate without the secrets).
    KeysExhausted,
    /// The handover from rustls failed.
    Handover(String),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::BadRecordMac => f.write_str("a record failed to authenticate"),
            Fail::RecordOverflow => f.write_str("a record longer than TLS allows"),
            Fail::Unexpected(what) => write!(f, "unexpected {what} after the handshake"),
            Fail::PeerAlert(d) => write!(f, "the peer sent fatal alert {d}"),
            Fail::KeysExhausted => f.write_str("no key left to protect records with"),
            Fail::Handover(e) => write!(f, "the record layer could not take over: {e}"),
        }
    }
}

impl std::error::Error for Fail {}

#[derive(Clone, Copy)]
enum Cipher {
    Aes128Gcm,
    Aes256Gcm,
    Chacha20Poly1305,
}

impl Cipher {
    fn algorithm(self) -> &'static ring::aead::Algorithm {
        match self {
            Cipher::Aes128Gcm => &AES_128_GCM,
            Cipher::Aes256Gcm => &AES_256_GCM,
            Cipher::Chacha20Poly1305 => &CHACHA20_POLY1305,
        }
    }

    fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Gcm => 16,
            _ => 32,
        }
    }
}

/// One direction's protection: raw key and IV, the next record's number, and (TLS 1.3) the
/// traffic secret the next key is derived from.
struct Direction {
    key: [u8; 32],
    iv: [u8; 12],
    seq: u64,
    secret: [u8; 48],
    /// Bytes of `secret`; 0 when it is not known (no key update is then possible).
    secret_len: u8,
}

impl Direction {
    fn new(cipher: Cipher, seq: u64, keys: ConnectionTrafficSecrets) -> Result<Direction, Fail> {
        let (key, iv) = match keys {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } | ConnectionTrafficSecrets::Aes256Gcm { key, iv } | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv),
            _ => return Err(Fail::Handover("no record layer for this cipher suite".into())),
        };
        let mut d = Direction { key: [0; 32], iv: [0; 12], seq, secret: [0; 48], secret_len: 0 };
        if key.as_ref().len() != cipher.key_len() || iv.as_ref().len() != 12 {
            return Err(Fail::Handover("unexpected key or IV length".into()));
        }
        d.key[..cipher.key_len()].copy_from_slice(key.as_ref());
        d.iv.copy_from_slice(iv.as_ref());
        Ok(d)
    }

    /// The expanded key (on the stack: ring's key is a value).
    fn expand(&self, cipher: Cipher) -> Result<LessSafeKey, Fail> {
        let key = UnboundKey::new(cipher.algorithm(), &self.key[..cipher.key_len()]).map_err(|_| Fail::KeysExhausted)?;
        Ok(LessSafeKey::new(key))
    }

    /// IV ⊕ sequence number (RFC 8446 §5.3, RFC 7905 §2).
    fn nonce(&self) -> [u8; 12] {
        let mut n = self.iv;
        for (b, s) in n[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    }

    /// Keeps `secret` if it is the one this direction's key and IV come from.
    fn adopt(&mut self, hash: hmac::Algorithm, cipher: Cipher, secret: &[u8]) {
        let (key, iv) = keys_from(hash, cipher, secret);
        if key[..cipher.key_len()] == self.key[..cipher.key_len()] && iv[..12] == self.iv {
            self.secret[..secret.len()].copy_from_slice(secret);
            self.secret_len = secret.len() as u8;
        }
    }

    /// The next generation of keys (RFC 8446 §7.2), from sequence number 0.
    fn update(&mut self, hash: hmac::Algorithm, cipher: Cipher) -> Result<(), Fail> {
        let len = usize::from(self.secret_len);
        if len == 0 {
            return Err(Fail::KeysExhausted);
        }
        let next = expand_label(hash, &self.secret[..len], b"traffic upd", len);
        let (key, iv) = keys_from(hash, cipher, &next[..len]);
        self.secret[..len].copy_from_slice(&next[..len]);
        self.key.copy_from_slice(&key[..32]);
        self.iv.copy_from_slice(&iv[..12]);
        self.seq = 0;
        Ok(())
    }
}

impl Drop for Direction {
    fn drop(&mut self) {
        // Best effort: keys do not outlive the connection in freed memory.
        self.key.fill(0);
        self.secret.fill(0);
        std::hint::black_box(&self.key);
        std::hint::black_box(&self.secret);
    }
}

/// HKDF-Expand-Label(secret, label, "", len) for len ≤ the hash's length: one HMAC block
/// (RFC 8446 §7.1, RFC 5869 §2.3).
fn expand_label(hash: hmac::Algorithm, secret: &[u8], label: &[u8], len: usize) -> [u8; 48] {
    let key = hmac::Key::new(hash, secret);
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(&(len as u16).to_be_bytes());
    ctx.update(&[(6 + label.len()) as u8]);
    ctx.update(b"tls13 ");
    ctx.update(label);
    ctx.update(&[0, 1]);
    let tag = ctx.sign();
    let mut out = [0; 48];
    out[..len].copy_from_slice(&tag.as_ref()[..len]);
    out
}

fn keys_from(hash: hmac::Algorithm, cipher: Cipher, secret: &[u8]) -> ([u8; 48], [u8; 48]) {
    (expand_label(hash, secret, b"key", cipher.key_len()), expand_label(hash, secret, b"iv", 12))
}

/// What the records opened so far said.
pub(super) enum Opened {
    /// Every whole record is read; this many bytes were used (the rest is a record to come).
    Used(usize),
    /// close_notify came after this many bytes.
    Closed(usize),
}

/// The plaintext to seal: slices taken in order, records filled across their boundaries.
struct Cursor<'a> {
    parts: &'a [&'a [u8]],
    at: usize,
}

impl Cursor<'_> {
    fn is_empty(&self) -> bool {
        match self.parts.split_first() {
            None => true,
            Some((first, rest)) => first.len() == self.at && rest.iter().all(|p| p.is_empty()),
        }
    }

    /// Appends up to `max` bytes to `out`; returns how many.
    fn copy_into(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some((first, rest)) = self.parts.split_first() else { break };
            let k = (first.len() - self.at).min(max - n);
            out.extend_from_slice(&first[self.at..self.at + k]);
            n += k;
            self.at += k;
            if self.at == first.len() {
                self.parts = rest;
                self.at = 0;
            }
        }
        n
    }
}

/// The traffic keys of one connection.
pub(super) struct Records {
    cipher: Cipher,
    /// TLS 1.3's hash (for key updates); None for TLS 1.2.
    tls13: Option<hmac::Algorithm>,
    tx: Direction,
    rx: Direction,
    /// Records one key may protect: the suite's confidentiality limit (or SEQ_LIMIT).
    tx_limit: u64,
}

impl Records {
    /// Takes over from rustls once its handshake is over and nothing of its own waits to be
    /// sent (the caller's part: call this only after rustls reported `WriteTraffic`). `caught`:
    /// the TLS 1.3 traffic secrets rustls logged during this handshake.
    pub fn take_over(conn: UnbufferedServerConnection, caught: &Caught) -> Result<Records, Fail> {
        let (secrets, kernel) = conn.dangerous_into_kernel_connection().map_err(|e| Fail::Handover(e.to_string()))?;
        let suite = kernel.negotiated_cipher_suite();
        drop(kernel);
        let cipher = match &secrets.tx.1 {
            ConnectionTrafficSecrets::Aes128Gcm { .. } => Cipher::Aes128Gcm,
            ConnectionTrafficSecrets::Aes256Gcm { .. } => Cipher::Aes256Gcm,
            ConnectionTrafficSecrets::Chacha20Poly1305 { .. } => Cipher::Chacha20Poly1305,
            _ => return Err(Fail::Handover("no record layer for this cipher suite".into())),
        };
        let (tls13, limit) = match suite {
            SupportedCipherSuite::Tls13(s) => {
                let hash = match s.common.hash_provider.algorithm() {
                    HashAlgorithm::SHA256 => hmac::HMAC_SHA256,
                    HashAlgorithm::SHA384 => hmac::HMAC_SHA384,
                    _ => return Err(Fail::Handover("no key update for this hash".into())),
                };
                (Some(hash), s.common.confidentiality_limit)
            }
            SupportedCipherSuite::Tls12(s) => (None, s.common.confidentiality_limit),
        };
        let mut r = Records {
            cipher,
            tls13,
            tx: Direction::new(cipher, secrets.tx.0, secrets.tx.1)?,
            rx: Direction::new(cipher, secrets.rx.0, secrets.rx.1)?,
            tx_limit: limit.min(SEQ_LIMIT),
        };
        if let Some(hash) = tls13 {
            if let Some(s) = caught.server.get() {
                r.tx.adopt(hash, cipher, s);
            }
            if let Some(s) = caught.client.get() {
                r.rx.adopt(hash, cipher, s);
            }
        }
        Ok(r)
    }

    /// Opens the whole records at the start of `incoming`, in place, handing each one's
    /// plaintext to `deliver`; records we must answer (a KeyUpdate of our own) go into `out`.
    pub fn open(&mut self, incoming: &mut [u8], out: &mut Vec<u8>, mut deliver: impl FnMut(&[u8])) -> Result<Opened, Fail> {
        let mut used = 0;
        let mut key: Option<LessSafeKey> = None;
        while incoming.len() - used >= HEADER {
            let h = &incoming[used..used + HEADER];
            let (typ, version, len) = (h[0], [h[1], h[2]], usize::from(u16::from_be_bytes([h[3], h[4]])));
            if len > BODY_MAX {
                return Err(Fail::RecordOverflow);
            }
            if incoming.len() - used - HEADER < len {
                break;
            }
            let mut header = [0u8; HEADER];
            header.copy_from_slice(h);
            let body = &mut incoming[used + HEADER..used + HEADER + len];
            used += HEADER + len;
            let k = match key.take() {
                Some(k) => k,
                None => self.rx.expand(self.cipher)?,
            };
            let (typ, plain) = self.open_record(&k, header, typ, version, body)?;
            key = Some(k);
            match typ {
                APPLICATION_DATA => deliver(plain),
                ALERT => match plain {
                    [_, CLOSE_NOTIFY] => return Ok(Opened::Closed(used)),
                    [WARNING, d] if self.tls13.is_none() || *d == USER_CANCELED => {}
                    [_, d] => return Err(Fail::PeerAlert(*d)),
                    _ => return Err(Fail::Unexpected("alert")),
                },
                HANDSHAKE if self.tls13.is_some() => match plain {
                    [a, b, c, d, req @ (0 | 1)] if [*a, *b, *c, *d] == KEY_UPDATE => {
                        let requested = *req == 1;
                        let hash = self.tls13.ok_or(Fail::KeysExhausted)?;
                        self.rx.update(hash, self.cipher)?;
                        key = None;
                        if requested {
                            self.update_tx(out)?;
                        }
                    }
                    _ => return Err(Fail::Unexpected("handshake message")),
                },
                _ => return Err(Fail::Unexpected("record")),
            }
        }
        Ok(Opened::Used(used))
    }

    /// Authenticates and decrypts one record's body in place: its content type and plaintext.
    fn open_record<'b>(&mut self, key: &LessSafeKey, header: [u8; HEADER], typ: u8, version: [u8; 2], body: &'b mut [u8]) -> Result<(u8, &'b [u8]), Fail> {
        let seq = self.rx.seq;
        let seq_nonce = self.rx.nonce();
        self.rx.seq = seq.checked_add(1).ok_or(Fail::KeysExhausted)?;
        if self.tls13.is_some() {
            // Every record is application_data on the outside; the real type is inside.
            if typ != APPLICATION_DATA || body.len() < TAG + 1 {
                return Err(Fail::Unexpected("record type"));
            }
            let nonce = Nonce::assume_unique_for_key(seq_nonce);
            let plain = key.open_in_place(nonce, Aad::from(header), body).map_err(|_| Fail::BadRecordMac)?;
            let Some(end) = plain.iter().rposition(|&b| b != 0) else { return Err(Fail::Unexpected("empty record")) };
            if end > PLAIN_MAX {
                return Err(Fail::RecordOverflow);
            }
            return Ok((plain[end], &plain[..end]));
        }
        let (nonce, ct) = match self.cipher {
            Cipher::Chacha20Poly1305 => (seq_nonce, body),
            _ => {
                if body.len() < EXPLICIT {
                    return Err(Fail::BadRecordMac);
                }
                let (explicit, ct) = body.split_at_mut(EXPLICIT);
                let mut n = self.rx.iv;
                n[4..].copy_from_slice(explicit);
                (n, ct)
            }
        };
        let plain_len = ct.len().checked_sub(TAG).ok_or(Fail::BadRecordMac)?;
        if plain_len > PLAIN_MAX {
            return Err(Fail::RecordOverflow);
        }
        let aad = tls12_aad(seq, typ, version, plain_len);
        let plain = key.open_in_place(Nonce::assume_unique_for_key(nonce), Aad::from(aad), ct).map_err(|_| Fail::BadRecordMac)?;
        Ok((typ, plain))
    }

    /// Seals the bytes of `parts` (application data) into records appended to `out`.
    pub fn seal(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) -> Result<(), Fail> {
        let mut plain = Cursor { parts, at: 0 };
        let mut key = self.tx.expand(self.cipher)?;
        while !plain.is_empty() {
            if self.tx.seq >= self.tx_limit {
                self.update_tx(out)?;
                key = self.tx.expand(self.cipher)?;
            }
            self.seal_record(&key, APPLICATION_DATA, &mut plain, out);
        }
        Ok(())
    }

    /// Appends close_notify to `out`.
    pub fn close_notify(&mut self, out: &mut Vec<u8>) -> Result<(), Fail> {
        self.seal_one(ALERT, &[WARNING, CLOSE_NOTIFY], out)
    }

    /// Appends the fatal alert that says why `e` ends the connection, best effort.
    pub fn alert(&mut self, e: &Fail, out: &mut Vec<u8>) {
        let why = match e {
            Fail::BadRecordMac => 20,
            Fail::RecordOverflow => 22,
            Fail::PeerAlert(_) => return,
            Fail::Unexpected(_) => 10,
            Fail::KeysExhausted | Fail::Handover(_) => 80,
        };
        let _ = self.seal_one(ALERT, &[FATAL, why], out);
    }

    /// Sends a KeyUpdate under the current key, then switches to the next one.
    fn update_tx(&mut self, out: &mut Vec<u8>) -> Result<(), Fail> {
        let hash = self.tls13.ok_or(Fail::KeysExhausted)?;
        if self.tx.secret_len == 0 {
            return Err(Fail::KeysExhausted);
        }
        let mut msg = [0; 5];
        msg[..4].copy_from_slice(&KEY_UPDATE);
        self.seal_one(HANDSHAKE, &msg, out)?;
        self.tx.update(hash, self.cipher)
    }

    fn seal_one(&mut self, typ: u8, payload: &[u8], out: &mut Vec<u8>) -> Result<(), Fail> {
        let key = self.tx.expand(self.cipher)?;
        self.seal_record(&key, typ, &mut Cursor { parts: &[payload], at: 0 }, out);
        Ok(())
    }

    /// Appends one record with up to PLAIN_MAX bytes from `plain`.
    fn seal_record(&mut self, key: &LessSafeKey, typ: u8, plain: &mut Cursor<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        let outer = if self.tls13.is_some() { APPLICATION_DATA } else { typ };
        out.extend_from_slice(&[outer, 3, 3, 0, 0]);
        let nonce = self.tx.nonce();
        if self.tls13.is_none() && !matches!(self.cipher, Cipher::Chacha20Poly1305) {
            out.extend_from_slice(&nonce[4..]);
        }
        let body = out.len();
        let n = plain.copy_into(out, PLAIN_MAX);
        if self.tls13.is_some() {
            out.push(typ);
        }
        let len = (out.len() - start - HEADER + TAG) as u16;
        out[start + 3..start + 5].copy_from_slice(&len.to_be_bytes());
        let nonce = Nonce::assume_unique_for_key(nonce);
        let sealed = if self.tls13.is_some() {
            let mut header = [0u8; HEADER];
            header.copy_from_slice(&out[start..start + HEADER]);
            key.seal_in_place_separate_tag(nonce, Aad::from(header), &mut out[body..])
        } else {
            key.seal_in_place_separate_tag(nonce, Aad::from(tls12_aad(self.tx.seq, typ, [3, 3], n)), &mut out[body..])
        };
        // ring fails a seal only for more than the cipher's per-call limit (gigabytes).
        match sealed {
            Ok(tag) => out.extend_from_slice(tag.as_ref()),
            Err(_) => out.truncate(start),
        }
        self.tx.seq += 1;
    }
}

/// TLS 1.2's additional data: sequence number, type, version, plaintext length.
fn tls12_aad(seq: u64, typ: u8, version: [u8; 2], len: usize) -> [u8; 13] {
    let mut aad = [0u8; 13];
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    aad[8] = typ;
    aad[9..11].copy_from_slice(&version);
    aad[11..].copy_from_slice(&(len as u16).to_be_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8448 §3 (simple 1-RTT handshake): the server's application traffic key and IV
    /// from its application traffic secret (TLS_AES_128_GCM_SHA256).
    #[test]
    fn expand_label_matches_rfc8448() {
        let hex = |s: &str| (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect::<Vec<u8>>();
        let secret = hex("a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643");
        let (key, iv) = keys_from(hmac::HMAC_SHA256, Cipher::Aes128Gcm, &secret);
        assert_eq!(key[..16], hex("9f02283b6c9c07efc26bb9f2ac92e356")[..]);
        assert_eq!(iv[..12], hex("cf782b88dd83549aadf1e984")[..]);
    }
}
