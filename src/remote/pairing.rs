//! Pairing tokens and the guess limit. A pairing token is shown once, in the terminal (its URL
//! and QR code), answers for [`TOKEN_TTL_MS`], and is used up by the first device that pairs
//! with it. Only its hash is held. Wrong tokens, cookies, form tokens and codes all count as
//! guesses: past [`GUESSES_PER_MINUTE`] in a minute, every check is refused until the minute is
//! over, so neither a token nor a code can be found by trying.

use sha2::{Digest, Sha256};

use crate::digest::hex;

/// How long a pairing token answers.
pub const TOKEN_TTL_MS: u64 = 5 * 60 * 1000;

/// Wrong guesses allowed in a minute, from anywhere.
pub const GUESSES_PER_MINUTE: usize = 20;

const MINUTE_MS: u64 = 60 * 1000;

/// `N` bytes from /dev/urandom in base64url without padding: a secret for a URL, a third
/// shorter than hex, so the pairing link fits one line of an 80-column window.
pub fn url_secret<const N: usize>() -> Result<String, String> {
    crate::store::db::random_bytes::<N>("a secret")
        .map(|bytes| base64url(&bytes))
        .map_err(|e| e.to_string())
}

/// Whether `text` is what [`url_secret`] makes of `n` bytes.
pub fn is_url_secret(text: &str, n: usize) -> bool {
    text.len() == (n * 8).div_ceil(6) && text.bytes().all(|b| ALPHABET.contains(&b))
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity((bytes.len() * 8).div_ceil(6));
    for chunk in bytes.chunks(3) {
        let mut word = [0u8; 3];
        word[..chunk.len()].copy_from_slice(chunk);
        let bits = u32::from(word[0]) << 16 | u32::from(word[1]) << 8 | u32::from(word[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(bits >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// The tokens shown and not yet used or expired.
#[derive(Debug, Default)]
pub struct Tokens {
    live: Vec<(String, u64)>,
}

/// Why a token does not pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefused {
    /// Never shown, or already used (one use only: the two look the same from outside).
    UnknownOrUsed,
    Expired,
}

impl Tokens {
    /// Holds `token` (its hash) until `now + ttl_ms`.
    pub fn add(&mut self, token: &str, now: u64, ttl_ms: u64) -> u64 {
        let expires = now + ttl_ms;
        self.live.retain(|(_, until)| *until > now);
        self.live.push((hash(token), expires));
        expires
    }

    /// Whether `token` would pair now, without using it (the pairing form is shown for it).
    pub fn check(&self, token: &str, now: u64) -> Result<(), TokenRefused> {
        let wanted = hash(token);
        match self
            .live
            .iter()
            .find(|(h, _)| crate::store::key::same_text(h, &wanted))
        {
            None => Err(TokenRefused::UnknownOrUsed),
            Some((_, until)) if *until <= now => Err(TokenRefused::Expired),
            Some(_) => Ok(()),
        }
    }

    /// Uses `token`: it pairs one device, once.
    pub fn take(&mut self, token: &str, now: u64) -> Result<(), TokenRefused> {
        self.check(token, now)?;
        let wanted = hash(token);
        self.live.retain(|(h, _)| *h != wanted);
        Ok(())
    }
}

fn hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Wrong guesses in the last minute.
#[derive(Debug, Default)]
pub struct Guesses {
    at: Vec<u64>,
}

impl Guesses {
    /// Whether checks are refused now (too many wrong guesses in the last minute).
    pub fn limited(&mut self, now: u64) -> bool {
        self.at.retain(|t| now.saturating_sub(*t) < MINUTE_MS);
        self.at.len() >= GUESSES_PER_MINUTE
    }

    pub fn wrong(&mut self, now: u64) {
        self.at.push(now);
    }

    /// Counts a try before it is checked, in one step with the limit (a burst of tries at once
    /// cannot all slip in under it); `false` when the limit is reached. A try that turns out
    /// right is given back with [`Guesses::release`].
    pub fn reserve(&mut self, now: u64) -> bool {
        if self.limited(now) {
            return false;
        }
        self.at.push(now);
        true
    }

    pub fn release(&mut self, at: u64) {
        if let Some(i) = self.at.iter().rposition(|t| *t == at) {
            self.at.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_base64url_without_padding_as_rfc_4648_spells_it() {
        // RFC 4648's test vectors, in the URL-safe alphabet, unpadded.
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        let token = url_secret::<16>().unwrap();
        assert!(is_url_secret(&token, 16), "{token}");
        assert_eq!(token.len(), 22);
        assert_ne!(token, url_secret::<16>().unwrap());
        assert!(
            !is_url_secret("0123456789abcdef", 8),
            "hex of 8 bytes is longer"
        );
        assert!(!is_url_secret("abc/def+ghi", 8));
    }

    #[test]
    fn a_token_pairs_once() {
        let mut tokens = Tokens::default();
        tokens.add("t1", 0, TOKEN_TTL_MS);
        assert_eq!(tokens.check("t1", 10), Ok(()));
        assert_eq!(tokens.take("t1", 10), Ok(()));
        assert_eq!(tokens.take("t1", 11), Err(TokenRefused::UnknownOrUsed));
        assert_eq!(tokens.check("t2", 11), Err(TokenRefused::UnknownOrUsed));
    }

    #[test]
    fn a_token_past_its_minutes_is_refused_as_expired() {
        let mut tokens = Tokens::default();
        tokens.add("t1", 1_000, TOKEN_TTL_MS);
        assert_eq!(
            tokens.take("t1", 1_000 + TOKEN_TTL_MS),
            Err(TokenRefused::Expired)
        );
        assert_eq!(tokens.take("t1", 1_000 + TOKEN_TTL_MS - 1), Ok(()));
    }

    #[test]
    fn too_many_wrong_guesses_in_a_minute_refuse_every_check_until_it_is_over() {
        let mut guesses = Guesses::default();
        for i in 0..GUESSES_PER_MINUTE as u64 {
            assert!(!guesses.limited(i));
            guesses.wrong(i);
        }
        assert!(guesses.limited(100));
        assert!(!guesses.limited(MINUTE_MS + 100));
    }
}
