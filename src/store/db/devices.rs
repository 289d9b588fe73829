//! Devices paired with the approval page (`remote`): a phone that exchanged a one-time pairing
//! token for a session cookie. Only the cookie's hash is kept, and each row is signed under the
//! state key, so a row added or changed with sqlite3 pairs nothing. A device answers requests
//! until it is revoked (in the cockpit's F6 window) or goes unused for
//! [`IDLE_LIMIT_MS`].

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::{Store, StoreError};
use crate::digest::hex;

/// A device not seen for this long must pair again.
pub const IDLE_LIMIT_MS: u64 = 30 * 24 * 3600 * 1000;

/// How stale `last_seen_ms` may get before a visit writes it again (a page load is not a write
/// to the state directory each time: every write wakes whoever watches it).
const SEEN_EVERY_MS: u64 = 60 * 1000;

/// One paired device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRow {
    pub id: i64,
    /// What the person called it when pairing (shown through `visible_line`).
    pub name: String,
    pub created_ms: u64,
    pub last_seen_ms: u64,
    pub revoked_ms: Option<u64>,
}

/// `N` bytes from /dev/urandom, for `what` (named in the error).
pub fn random_bytes<const N: usize>(what: &str) -> Result<[u8; N], StoreError> {
    use std::io::Read;
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| StoreError::Refused(format!("cannot read /dev/urandom for {what}: {e}")))?;
    Ok(bytes)
}

/// A fresh secret: 32 bytes from /dev/urandom, as hex (a session cookie).
pub fn new_secret() -> Result<String, StoreError> {
    Ok(hex(&random_bytes::<32>("a secret")?))
}

fn cookie_hash(cookie: &str) -> String {
    hex(&Sha256::digest(cookie.as_bytes()))
}

impl Store {
    fn device_mac(&self, name: &str, hash: &str, created_ms: u64) -> String {
        let created = created_ms.to_string();
        self.key.mac(
            "paired-device",
            &[name.as_bytes(), hash.as_bytes(), created.as_bytes()],
        )
    }

    /// Pairs a device named `name` whose session cookie is `cookie`.
    pub fn pair_device(&self, name: &str, cookie: &str, now: u64) -> Result<DeviceRow, StoreError> {
        let hash = cookie_hash(cookie);
        let mac = self.device_mac(name, &hash, now);
        self.conn
            .execute(
                "INSERT INTO paired_devices (name, cookie_hash, created_ms, last_seen_ms, mac)
                 VALUES (?1, ?2, ?3, ?3, ?4)",
                params![name, hash, now as i64, mac],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(DeviceRow {
            id: self.conn.last_insert_rowid(),
            name: name.to_string(),
            created_ms: now,
            last_seen_ms: now,
            revoked_ms: None,
        })
    }

    /// The device whose session cookie is `cookie`: only a signed row, not revoked, seen within
    /// [`IDLE_LIMIT_MS`]. Marks it seen.
    pub fn device_by_cookie(
        &self,
        cookie: &str,
        now: u64,
    ) -> Result<Option<DeviceRow>, StoreError> {
        let hash = cookie_hash(cookie);
        let found: Option<(DeviceRow, Option<String>)> = self
            .conn
            .query_row(
                "SELECT id, name, created_ms, last_seen_ms, revoked_ms, mac FROM paired_devices
                 WHERE cookie_hash = ?1",
                params![hash],
                |r| {
                    Ok((
                        DeviceRow {
                            id: r.get(0)?,
                            name: r.get(1)?,
                            created_ms: r.get::<_, i64>(2)? as u64,
                            last_seen_ms: r.get::<_, i64>(3)? as u64,
                            revoked_ms: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                        },
                        r.get(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let Some((device, mac)) = found else {
            return Ok(None);
        };
        let signed = mac.as_deref().is_some_and(|m| {
            super::super::key::same_text(
                &self.device_mac(&device.name, &hash, device.created_ms),
                m,
            )
        });
        if !signed
            || device.revoked_ms.is_some()
            || now.saturating_sub(device.last_seen_ms) > IDLE_LIMIT_MS
        {
            return Ok(None);
        }
        if now.saturating_sub(device.last_seen_ms) > SEEN_EVERY_MS {
            self.conn
                .execute(
                    "UPDATE paired_devices SET last_seen_ms = ?2 WHERE id = ?1",
                    params![device.id, now as i64],
                )
                .map_err(|e| self.sqlite(e))?;
        }
        Ok(Some(device))
    }

    /// Every device paired and not revoked, oldest first.
    pub fn devices(&self) -> Result<Vec<DeviceRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, name, created_ms, last_seen_ms FROM paired_devices
                 WHERE revoked_ms IS NULL ORDER BY id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(DeviceRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    created_ms: r.get::<_, i64>(2)? as u64,
                    last_seen_ms: r.get::<_, i64>(3)? as u64,
                    revoked_ms: None,
                })
            })
            .map_err(|e| self.sqlite(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite(e))
    }

    /// Revokes device `id`: its cookie answers nothing from now on. Whether it was paired.
    pub fn revoke_device(&self, id: i64, now: u64) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE paired_devices SET revoked_ms = ?2 WHERE id = ?1 AND revoked_ms IS NULL",
                params![id, now as i64],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(n == 1)
    }

    /// The page's anti-forgery token for the session cookie `cookie`: derived under the state
    /// key, so only this machine's airlock can make it, and a page from another origin (which
    /// cannot read the page) cannot know it.
    pub fn form_token(&self, cookie: &str) -> String {
        self.key.mac("page-form", &[cookie.as_bytes()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_device_is_found_by_its_cookie_until_it_is_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("airlock.db")).unwrap();
        let cookie = new_secret().unwrap();
        let device = store.pair_device("phone", &cookie, 1_000).unwrap();
        assert_eq!(
            store
                .device_by_cookie(&cookie, 2_000)
                .unwrap()
                .map(|d| d.name),
            Some("phone".to_string())
        );
        assert_eq!(store.device_by_cookie("guess", 2_000).unwrap(), None);
        assert_eq!(store.devices().unwrap().len(), 1);
        assert!(store.revoke_device(device.id, 3_000).unwrap());
        assert_eq!(store.device_by_cookie(&cookie, 4_000).unwrap(), None);
        assert!(store.devices().unwrap().is_empty());
    }

    #[test]
    fn a_device_row_written_outside_airlock_pairs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("airlock.db");
        let store = Store::open(&db).unwrap();
        let cookie = new_secret().unwrap();
        store.pair_device("phone", &cookie, 1_000).unwrap();
        let raw = rusqlite::Connection::open(&db).unwrap();
        raw.execute(
            "INSERT INTO paired_devices (name, cookie_hash, created_ms, last_seen_ms, mac)
             VALUES ('evil', ?1, 1, 1, 'ffff')",
            params![cookie_hash("forged")],
        )
        .unwrap();
        assert_eq!(store.device_by_cookie("forged", 2_000).unwrap(), None);
        // Renamed with sqlite3: the signature no longer verifies.
        raw.execute(
            "UPDATE paired_devices SET name = 'other' WHERE name = 'phone'",
            [],
        )
        .unwrap();
        assert_eq!(store.device_by_cookie(&cookie, 2_000).unwrap(), None);
    }

    #[test]
    fn a_device_unused_for_a_month_must_pair_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("airlock.db")).unwrap();
        let cookie = new_secret().unwrap();
        store.pair_device("phone", &cookie, 1_000).unwrap();
        assert!(
            store
                .device_by_cookie(&cookie, 1_000 + IDLE_LIMIT_MS + 1)
                .unwrap()
                .is_none()
        );
    }
}

#[cfg(test)]
mod bell_tests {
    use super::*;
    use crate::protocol::FrozenCall;

    #[test]
    fn a_request_and_an_answer_each_ring_the_bell_after_their_commit_so_a_waiter_wakes_to_find_them()
     {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("airlock.db")).unwrap();
        let frozen = FrozenCall::freeze("bash", &serde_json::json!({"command": "make"}));
        let now = crate::clock::now_ms();
        store
            .save_run("s", "s", std::path::Path::new("/w"), "live", None, now)
            .unwrap();
        let bell = dir.path().join(super::super::approvals::BELL);
        assert!(!bell.exists(), "nothing asked, nothing rung");
        let code = store
            .add_approval("s", "s", "c1", &frozen, "{}", now, 60_000)
            .unwrap();
        assert!(bell.exists(), "the new request rang the bell");
        std::fs::remove_file(&bell).unwrap();
        let watch = crate::store::watch::DirWatch::new(dir.path()).unwrap();
        store
            .decide(&code, r#"{"decision":"allow_once"}"#, now + 1)
            .unwrap();
        assert!(bell.exists(), "the answer rang the bell");
        // The bell's write is the last event: a waiter woken by it reads the answer.
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(3), watch.changed())
                .await
                .unwrap()
        });
        assert_eq!(
            store.approval_state_by_code(&code).unwrap().as_deref(),
            Some("approved")
        );
    }
}
