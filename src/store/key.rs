//! The state key: 32 random bytes in `airlock.key` (mode 0600) in the state directory, made on
//! first use. Every run checkpoint and approval record in the state database carries an
//! HMAC-SHA256 under this key, so a row rewritten with `sqlite3` (a call swapped, a state set to
//! approved, an expiry extended, a checkpoint's approvals mode changed) no longer verifies and is
//! refused. The key never leaves this module; only MACs do.
//!
//! What it cannot stop: someone who can read the key, or who puts back an older row together
//! with its older MAC (a rollback).

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::db::StoreError;

pub const KEY_FILE: &str = "airlock.key";
const KEY_LEN: usize = 32;

/// HMAC-SHA256 (RFC 2104) from the RustCrypto `hmac` crate.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length (a long one is hashed, a short one padded), so
    // `new_from_slice` has no `InvalidLength` to return here.
    #[allow(clippy::expect_used)]
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Compares two MACs (or any texts) in time that depends only on their length (`subtle`, which
/// keeps the compiler from turning the comparison into an early exit).
pub fn same_text(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

pub struct StateKey {
    bytes: [u8; KEY_LEN],
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// The key in `dir`, made (0600, from /dev/urandom) if there is none yet. Two processes
    /// making it at once agree on one: each writes its own file and links it into place, and
    /// the loser reads the winner's.
    pub fn load_or_create(dir: &Path) -> Result<StateKey, StoreError> {
        let path = dir.join(KEY_FILE);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => return Self::load(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(key_error(&path, &e.to_string())),
        }
        // The key, then a few more bytes to name this maker's own file.
        let mut random = [0u8; KEY_LEN + 8];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut random))
            .map_err(|e| key_error(&path, &format!("cannot read /dev/urandom: {e}")))?;
        let mut bytes = [0u8; KEY_LEN];
        bytes.copy_from_slice(&random[..KEY_LEN]);
        let fresh = dir.join(format!(
            ".{KEY_FILE}.{}",
            crate::digest::hex(&random[KEY_LEN..])
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&fresh)
            .and_then(|mut f| {
                f.write_all(&bytes)?;
                f.sync_all()
            });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&fresh);
            return Err(key_error(&fresh, &e.to_string()));
        }
        let linked = std::fs::hard_link(&fresh, &path);
        let _ = std::fs::remove_file(&fresh);
        match linked {
            Ok(()) => Ok(StateKey { bytes }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::load(&path),
            Err(e) => Err(key_error(&path, &e.to_string())),
        }
    }

    /// Reads an existing key: a regular file of this user, exactly 32 bytes. Looser permissions
    /// are tightened to 0600.
    fn load(path: &Path) -> Result<StateKey, StoreError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| key_error(path, &format!("{e} (is it a symlink?)")))?;
        let meta = file
            .metadata()
            .map_err(|e| key_error(path, &e.to_string()))?;
        if !meta.is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
            return Err(key_error(
                path,
                "it is not a regular file owned by you; remove it (parked approvals signed with it will then be refused)",
            ));
        }
        if meta.mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| key_error(path, &e.to_string()))?;
        }
        let mut bytes = Vec::with_capacity(KEY_LEN);
        (&file)
            .take(KEY_LEN as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| key_error(path, &e.to_string()))?;
        let bytes: [u8; KEY_LEN] = bytes.try_into().map_err(|_| {
            key_error(
                path,
                "it is not 32 bytes long (damaged); remove it (parked approvals signed with it will then be refused)",
            )
        })?;
        Ok(StateKey { bytes })
    }

    /// The MAC of a record of kind `label` made of `fields`, as lowercase hex. Each field is
    /// length-prefixed, so no two different field lists give the same message.
    pub fn mac(&self, label: &str, fields: &[&[u8]]) -> String {
        // The message `message` makes, fed to the MAC as it goes: a 3 MB field is not copied
        // into one buffer first.
        #[allow(clippy::expect_used)]
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes a key of any length");
        for part in std::iter::once(label.as_bytes()).chain(fields.iter().copied()) {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        crate::digest::hex(&mac.finalize().into_bytes())
    }

    /// `secret` (at most 32 bytes) hidden under this key for `context`, as hex: XOR with the MAC of
    /// the context, so only a holder of the key reads it back. A context must seal one secret
    /// only (a one-time code's hash does).
    pub fn seal(&self, label: &str, context: &[u8], secret: &[u8]) -> Option<String> {
        let pad = hmac_sha256(&self.bytes, &message(label, &[b"seal", context]));
        (secret.len() <= pad.len()).then(|| {
            let sealed: Vec<u8> = secret.iter().zip(pad).map(|(s, p)| s ^ p).collect();
            crate::digest::hex(&sealed)
        })
    }

    /// What `seal` hid for `context`, if `sealed` is hex of at most 32 bytes.
    pub fn unseal(&self, label: &str, context: &[u8], sealed: &str) -> Option<Vec<u8>> {
        let bytes = unhex(sealed)?;
        let pad = hmac_sha256(&self.bytes, &message(label, &[b"seal", context]));
        (bytes.len() <= pad.len()).then(|| bytes.iter().zip(pad).map(|(s, p)| s ^ p).collect())
    }

    /// Whether `mac` is the MAC of this record.
    pub fn verify(&self, label: &str, fields: &[&[u8]], mac: Option<&str>) -> bool {
        mac.is_some_and(|m| same_text(&self.mac(label, fields), m))
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn message(label: &str, fields: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in std::iter::once(label.as_bytes()).chain(fields.iter().copied()) {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part);
    }
    out
}

fn key_error(path: &Path, why: &str) -> StoreError {
    StoreError::Key {
        path: PathBuf::from(path),
        why: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::hex;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn texts_are_the_same_only_when_every_byte_and_the_length_agree() {
        assert!(same_text("", ""));
        assert!(same_text("a1b2", "a1b2"));
        assert!(!same_text("a1b2", "a1b3"));
        assert!(!same_text("a1b2", "a1b"));
        assert!(!same_text("a1b", "a1b2"));
    }

    #[test]
    fn hmac_sha256_matches_the_rfc_4231_test_vectors() {
        // Test case 1: a 20-byte key.
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2: a key shorter than the output.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 4: 25-byte key, 50 bytes of 0xcd.
        assert_eq!(
            hex(&hmac_sha256(
                &unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                &[0xcd; 50]
            )),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_key_and_a_message_both_longer_than_the_block_give_the_rfc_4231_mac() {
        // Test case 7: a 131-byte key and a 152-byte message.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
            )),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        );
        // Test case 3: a 20-byte key, 50 bytes of 0xdd.
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 20], &[0xdd; 50])),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        );
    }

    #[test]
    fn the_key_is_made_once_private_and_the_same_on_every_load() {
        let dir = tempfile::tempdir().unwrap();
        let first = StateKey::load_or_create(dir.path()).unwrap();
        let again = StateKey::load_or_create(dir.path()).unwrap();
        assert_eq!(first.mac("x", &[b"a"]), again.mac("x", &[b"a"]));
        let meta = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(meta.len(), 32);
        let other = tempfile::tempdir().unwrap();
        let elsewhere = StateKey::load_or_create(other.path()).unwrap();
        assert_ne!(first.mac("x", &[b"a"]), elsewhere.mac("x", &[b"a"]));
    }

    #[test]
    fn a_loosened_key_file_is_tightened_and_a_damaged_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        StateKey::load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        StateKey::load_or_create(dir.path()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        std::fs::write(&path, b"short").unwrap();
        let err = StateKey::load_or_create(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not 32 bytes"), "{err}");
    }

    #[test]
    fn a_key_file_that_is_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("k"), [7u8; 32]).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("k"), dir.path().join(KEY_FILE)).unwrap();
        assert!(StateKey::load_or_create(dir.path()).is_err());
    }

    #[test]
    fn a_mac_changes_with_any_field_and_with_how_fields_are_split() {
        let dir = tempfile::tempdir().unwrap();
        let key = StateKey::load_or_create(dir.path()).unwrap();
        let mac = key.mac("approval", &[b"ab", b"c"]);
        assert!(key.verify("approval", &[b"ab", b"c"], Some(&mac)));
        assert!(!key.verify("approval", &[b"a", b"bc"], Some(&mac)));
        assert!(!key.verify("run", &[b"ab", b"c"], Some(&mac)));
        assert!(!key.verify("approval", &[b"ab", b"d"], Some(&mac)));
        assert!(!key.verify("approval", &[b"ab", b"c"], None));
    }

    #[test]
    fn a_mac_fed_field_by_field_is_the_mac_of_the_whole_message() {
        let dir = tempfile::tempdir().unwrap();
        let key = StateKey::load_or_create(dir.path()).unwrap();
        let big = vec![b'x'; 200_000];
        for fields in [
            vec![],
            vec![&b""[..]],
            vec![&b"a"[..], &b"bc"[..]],
            vec![&b"run"[..], &big[..], &b""[..], &b"1"[..]],
        ] {
            assert_eq!(
                key.mac("label", &fields),
                hex(&hmac_sha256(&key.bytes, &message("label", &fields)))
            );
        }
    }

    #[test]
    fn many_processes_making_the_key_at_once_agree_on_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let macs: Vec<String> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    StateKey::load_or_create(&path).unwrap().mac("x", &[b"y"])
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        assert!(macs.windows(2).all(|w| w[0] == w[1]));
    }
}
