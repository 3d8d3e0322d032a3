//! `vapid-keys`: a new Web Push (VAPID) key pair, printed as the two environment lines the
//! server reads. The format is the web-push gem's (`WebPush.generate_key`): URL-safe base64,
//! padded, of the uncompressed 65-byte public point and of the 32-byte private scalar, so the
//! pair works for Rails Campfire too.

use crate::crypto::base64::{self, Alphabet};
use p256::ecdsa::SigningKey;

pub fn print_new_pair() -> i32 {
    let (public, private) = new_pair();
    // The pair must be one the server accepts; anything else is a bug worth stopping for.
    if let Err(e) = crate::app::push::Vapid::from_config(Some(&public), Some(&private)) {
        eprintln!("campfire-room: generated a key pair the server refuses: {e}");
        return 1;
    }
    println!("VAPID_PUBLIC_KEY={public}");
    println!("VAPID_PRIVATE_KEY={private}");
    0
}

fn new_pair() -> (String, String) {
    loop {
        let scalar: [u8; 32] = crate::sys::random::bytes();
        // A random 32-byte string is a valid scalar but for zero or ≥ the group order (odds
        // about 2^-32): draw again then.
        let Ok(key) = SigningKey::from_slice(&scalar) else { continue };
        let point = key.verifying_key().to_sec1_point(false);
        let mut public = Vec::with_capacity(88);
        base64::encode(Alphabet::UrlSafe, true, point.as_bytes(), &mut public);
        let mut private = Vec::with_capacity(44);
        base64::encode(Alphabet::UrlSafe, true, &scalar, &mut private);
        return (String::from_utf8_lossy(&public).into_owned(), String::from_utf8_lossy(&private).into_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_new_well_formed_and_accepted() {
        let (public, private) = new_pair();
        assert_eq!((public.len(), private.len()), (88, 44));
        assert!(public.ends_with('=') && private.ends_with('='));
        assert!(crate::app::push::Vapid::from_config(Some(&public), Some(&private)).unwrap().is_some());
        assert_ne!(new_pair().1, private);
    }
}
