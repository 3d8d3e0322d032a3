//! A TLS connection's record layer once its handshake is over (`server::transport`).
//!
//! Why not leave it to rustls: its connection object keeps about 3.3 KB per connection for the
//! connection's whole life (state machine, a handshake deframer sized for 16 fragments, queues),
//! while after the handshake only the two traffic keys and their sequence numbers are needed;
//! a thousand `wss://` clients paid 3.3 MB for it (bench/results/2026-12-03-tlsfit.md). So the
//! finished handshake is handed over with `dangerous_into_kernel_connection`, the API rustls
//! offers for kernel TLS, and records are sealed and opened here by rustls's own encrypter and
//! decrypter for the negotiated suite. The `KernelConnection` is kept: it derives the next keys
//! when the client sends a TLS 1.3 KeyUpdate, or when ours have protected their limit of records.

use rustls::crypto::cipher::{InboundOpaqueMessage, MessageDecrypter, MessageEncrypter, OutboundChunks, OutboundPlainMessage};
use rustls::kernel::KernelConnection;
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::{AlertDescription, ConnectionTrafficSecrets, ContentType, Error, ProtocolVersion, SupportedCipherSuite};

/// Record header: type, version, length.
const HEADER: usize = 5;
/// Plaintext per record (RFC 8446 §5.1).
const PLAIN_MAX: usize = 16384;
/// The largest record body accepted: TLS 1.2's allowance for the cipher's expansion.
const BODY_MAX: usize = PLAIN_MAX + 2048;
/// A TLS 1.3 KeyUpdate handshake message without its last byte, `request_update`.
const KEY_UPDATE: [u8; 4] = [24, 0, 0, 1];
/// Sequence numbers stay below this (as in rustls) even where the suite sets no lower limit.
const SEQ_LIMIT: u64 = 0xffff_ffff_ffff_0000;
const ALERT_WARNING: u8 = 1;
const ALERT_FATAL: u8 = 2;

/// The traffic keys of one connection and what it takes to renew them.
pub(super) struct Records {
    kernel: KernelConnection<ServerConnectionData>,
    tx: Box<dyn MessageEncrypter>,
    rx: Box<dyn MessageDecrypter>,
    tx_seq: u64,
    rx_seq: u64,
    /// Records one key may protect: the suite's confidentiality limit (or SEQ_LIMIT).
    tx_limit: u64,
    tls13: bool,
}

fn unexpected(what: &str) -> Error {
    Error::General(format!("unexpected {what} after the handshake"))
}

fn key_and_iv(secrets: ConnectionTrafficSecrets) -> Result<(rustls::crypto::cipher::AeadKey, rustls::crypto::cipher::Iv), Error> {
    match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv } | ConnectionTrafficSecrets::Aes256Gcm { key, iv } | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => Ok((key, iv)),
        _ => Err(Error::General("no record layer for this cipher suite".into())),
    }
}

fn encrypter(suite: SupportedCipherSuite, secrets: ConnectionTrafficSecrets) -> Result<Box<dyn MessageEncrypter>, Error> {
    let (key, iv) = key_and_iv(secrets)?;
    Ok(match suite {
        SupportedCipherSuite::Tls13(s) => s.aead_alg.encrypter(key, iv),
        // TLS 1.2's IV is the fixed part (GCM's salt) and then the first explicit nonce.
        SupportedCipherSuite::Tls12(s) => {
            let fixed = s.aead_alg.key_block_shape().fixed_iv_len.min(iv.as_ref().len());
            s.aead_alg.encrypter(key, &iv.as_ref()[..fixed], &iv.as_ref()[fixed..])
        }
    })
}

fn decrypter(suite: SupportedCipherSuite, secrets: ConnectionTrafficSecrets) -> Result<Box<dyn MessageDecrypter>, Error> {
    let (key, iv) = key_and_iv(secrets)?;
    Ok(match suite {
        SupportedCipherSuite::Tls13(s) => s.aead_alg.decrypter(key, iv),
        SupportedCipherSuite::Tls12(s) => {
            let fixed = s.aead_alg.key_block_shape().fixed_iv_len.min(iv.as_ref().len());
            s.aead_alg.decrypter(key, &iv.as_ref()[..fixed])
        }
    })
}

/// What the records opened so far said.
pub(super) enum Opened {
    /// Every whole record is read; this many bytes were used (the rest is a record to come).
    Used(usize),
    /// close_notify came after this many bytes.
    Closed(usize),
}

impl Records {
    /// Takes over from rustls once its handshake is over and nothing of its own waits to be
    /// sent (the caller's part: call this only after rustls reported `WriteTraffic`).
    pub fn take_over(conn: UnbufferedServerConnection) -> Result<Records, Error> {
        let (secrets, kernel) = conn.dangerous_into_kernel_connection()?;
        let suite = kernel.negotiated_cipher_suite();
        let (tls13, tx_limit) = match suite {
            SupportedCipherSuite::Tls13(s) => (true, s.common.confidentiality_limit),
            SupportedCipherSuite::Tls12(s) => (false, s.common.confidentiality_limit),
        };
        Ok(Records {
            tx: encrypter(suite, secrets.tx.1)?,
            rx: decrypter(suite, secrets.rx.1)?,
            tx_seq: secrets.tx.0,
            rx_seq: secrets.rx.0,
            tx_limit: tx_limit.min(SEQ_LIMIT),
            tls13,
            kernel,
        })
    }

    /// Opens the whole records at the start of `incoming`, in place, handing each one's
    /// plaintext to `deliver`; records we must answer (a KeyUpdate of our own) go into `out`.
    pub fn open(&mut self, incoming: &mut [u8], out: &mut Vec<u8>, mut deliver: impl FnMut(&[u8])) -> Result<Opened, Error> {
        let mut used = 0;
        while incoming.len() - used >= HEADER {
            let h = &incoming[used..used + HEADER];
            let (typ, version, len) = (h[0], u16::from_be_bytes([h[1], h[2]]), usize::from(u16::from_be_bytes([h[3], h[4]])));
            if len > BODY_MAX {
                return Err(Error::PeerSentOversizedRecord);
            }
            if incoming.len() - used - HEADER < len {
                break;
            }
            // After a TLS 1.3 handshake every record is application_data on the outside.
            if self.tls13 && ContentType::from(typ) != ContentType::ApplicationData {
                return Err(unexpected("record type"));
            }
            let body = &mut incoming[used + HEADER..used + HEADER + len];
            used += HEADER + len;
            let msg = InboundOpaqueMessage::new(ContentType::from(typ), ProtocolVersion::from(version), body);
            let plain = self.rx.decrypt(msg, self.rx_seq)?;
            self.rx_seq = self.rx_seq.checked_add(1).ok_or(Error::DecryptError)?;
            match plain.typ {
                ContentType::ApplicationData => deliver(plain.payload),
                ContentType::Alert => match plain.payload {
                    [_, 0] => return Ok(Opened::Closed(used)),
                    [ALERT_WARNING, d] if !self.tls13 || *d == u8::from(AlertDescription::UserCanceled) => {}
                    [_, d] => return Err(Error::AlertReceived(AlertDescription::from(*d))),
                    _ => return Err(unexpected("alert")),
                },
                ContentType::Handshake if self.tls13 => match plain.payload {
                    [a, b, c, d, req @ (0 | 1)] if [*a, *b, *c, *d] == KEY_UPDATE => {
                        let requested = *req == 1;
                        let (seq, secrets) = self.kernel.update_rx_secret()?;
                        self.rx = decrypter(self.kernel.negotiated_cipher_suite(), secrets)?;
                        self.rx_seq = seq;
                        if requested {
                            self.update_tx(out)?;
                        }
                    }
                    _ => return Err(unexpected("handshake message")),
                },
                _ => return Err(unexpected("record")),
            }
        }
        Ok(Opened::Used(used))
    }

    /// Seals `plaintext` (application data) into records appended to `out`.
    pub fn seal(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        for chunk in plaintext.chunks(PLAIN_MAX) {
            if self.tx_seq >= self.tx_limit {
                if !self.tls13 {
                    return Err(Error::EncryptError);
                }
                self.update_tx(out)?;
            }
            self.seal_record(ContentType::ApplicationData, chunk, out)?;
        }
        Ok(())
    }

    /// Appends close_notify to `out`.
    pub fn close_notify(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.seal_record(ContentType::Alert, &[ALERT_WARNING, u8::from(AlertDescription::CloseNotify)], out)
    }

    /// Appends the fatal alert that says why `e` ends the connection, best effort.
    pub fn alert(&mut self, e: &Error, out: &mut Vec<u8>) {
        let why = match e {
            Error::DecryptError => AlertDescription::BadRecordMac,
            Error::PeerSentOversizedRecord => AlertDescription::RecordOverflow,
            Error::AlertReceived(_) => return,
            _ => AlertDescription::UnexpectedMessage,
        };
        let _ = self.seal_record(ContentType::Alert, &[ALERT_FATAL, u8::from(why)], out);
    }

    /// Sends a KeyUpdate under the current key, then switches to the next one.
    fn update_tx(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        let mut msg = [0; 5];
        msg[..4].copy_from_slice(&KEY_UPDATE);
        self.seal_record(ContentType::Handshake, &msg, out)?;
        let (seq, secrets) = self.kernel.update_tx_secret()?;
        self.tx = encrypter(self.kernel.negotiated_cipher_suite(), secrets)?;
        self.tx_seq = seq;
        Ok(())
    }

    fn seal_record(&mut self, typ: ContentType, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let msg = OutboundPlainMessage { typ, version: ProtocolVersion::TLSv1_2, payload: OutboundChunks::Single(chunk) };
        let sealed = self.tx.encrypt(msg, self.tx_seq)?;
        self.tx_seq += 1;
        out.extend_from_slice(&sealed.encode());
        Ok(())
    }
}
