//! MCP tool pins: the tool definitions of each server as the user accepted them (the first
//! listing is accepted as it is), and the definition last seen when it differs. `crate::mcp::pins`
//! compares a listing with them; `airlock mcp accept` makes what was seen the accepted pin.
//!
//! An accepted pin is signed with the state key: one edited outside airlock does not verify and
//! counts as changed, so tampering with the database can only make airlock ask more.

use rusqlite::params;

use super::{Store, StoreError};
use crate::mcp::pins::{PinBook, PinnedTool};

/// The pins kept in the state database at a path: each question opens it, so no connection is
/// held across a server's life.
pub struct StatePins(pub std::path::PathBuf);

impl PinBook for StatePins {
    fn pins(&self, server: &str) -> Result<Option<Vec<PinnedTool>>, String> {
        Store::open(&self.0)
            .and_then(|store| store.mcp_pins(server))
            .map_err(|e| e.to_string())
    }

    fn record_listing(
        &self,
        server: &str,
        tools: &[(String, String)],
        now: u64,
    ) -> Result<(), String> {
        Store::open(&self.0)
            .and_then(|store| store.record_mcp_listing(server, tools, now))
            .map_err(|e| e.to_string())
    }
}

fn pin_fields<'a>(server: &'a str, tool: &'a str, definition: &'a str) -> [&'a [u8]; 3] {
    [server.as_bytes(), tool.as_bytes(), definition.as_bytes()]
}

impl Store {
    /// The pins of `server`, or `None` when its tools were never listed.
    pub fn mcp_pins(&self, server: &str) -> Result<Option<Vec<PinnedTool>>, StoreError> {
        let known: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM mcp_servers WHERE server = ?1",
                params![server],
                |r| r.get(0),
            )
            .map_err(|e| self.sqlite(e))?;
        if known == 0 {
            return Ok(None);
        }
        let mut statement = self
            .conn
            .prepare(
                "SELECT tool, definition, mac, seen_definition FROM mcp_pins
                 WHERE server = ?1 ORDER BY tool",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = statement
            .query_map(params![server], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(|e| self.sqlite(e))?;
        let mut pins = Vec::new();
        for row in rows {
            let (tool, accepted, mac, seen) = row.map_err(|e| self.sqlite(e))?;
            let signed = accepted.as_deref().is_some_and(|d| {
                self.key
                    .verify("mcp_pin", &pin_fields(server, &tool, d), mac.as_deref())
            });
            pins.push(PinnedTool {
                tool,
                accepted,
                signed,
                seen,
            });
        }
        Ok(Some(pins))
    }

    /// Records one listing of `server`'s tools (`(name, canonical definition)`), in one
    /// transaction: the first listing of a server is accepted as it is; later, a tool whose
    /// definition differs from its accepted pin (or that has none) keeps it as `seen`.
    pub fn record_mcp_listing(
        &self,
        server: &str,
        tools: &[(String, String)],
        now: u64,
    ) -> Result<(), StoreError> {
        let tx = self.write_transaction()?;
        let first = tx
            .execute(
                "INSERT OR IGNORE INTO mcp_servers (server, first_seen_ms) VALUES (?1, ?2)",
                params![server, now as i64],
            )
            .map_err(|e| self.sqlite(e))?
            == 1;
        for (tool, definition) in tools {
            if first {
                let mac = self
                    .key
                    .mac("mcp_pin", &pin_fields(server, tool, definition));
                tx.execute(
                    "INSERT INTO mcp_pins (server, tool, definition, mac, updated_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![server, tool, definition, mac, now as i64],
                )
                .map_err(|e| self.sqlite(e))?;
            } else {
                tx.execute(
                    "INSERT INTO mcp_pins (server, tool, seen_definition, updated_ms)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(server, tool) DO UPDATE SET
                        seen_definition = CASE WHEN mcp_pins.definition IS ?3 THEN NULL ELSE ?3 END,
                        updated_ms = ?4",
                    params![server, tool, definition, now as i64],
                )
                .map_err(|e| self.sqlite(e))?;
            }
        }
        tx.commit().map_err(|e| self.sqlite(e))
    }

    /// Accepts every definition last seen for `server` as its new pin; the number accepted.
    pub fn accept_mcp_tools(&self, server: &str, now: u64) -> Result<usize, StoreError> {
        let pins = self.mcp_pins(server)?.unwrap_or_default();
        let tx = self.write_transaction()?;
        let mut accepted = 0;
        for pin in pins {
            // An unsigned pin with nothing newer seen is accepted again as it stands.
            let Some(definition) = pin.seen.or(pin.accepted.filter(|_| !pin.signed)) else {
                continue;
            };
            let mac = self
                .key
                .mac("mcp_pin", &pin_fields(server, &pin.tool, &definition));
            accepted += tx
                .execute(
                    "UPDATE mcp_pins SET definition = ?3, mac = ?4, seen_definition = NULL,
                        updated_ms = ?5 WHERE server = ?1 AND tool = ?2",
                    params![server, pin.tool, definition, mac, now as i64],
                )
                .map_err(|e| self.sqlite(e))?;
        }
        tx.commit().map_err(|e| self.sqlite(e))?;
        Ok(accepted)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::db::scratch_store;

    fn listing(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn the_first_listing_is_accepted_and_a_changed_one_is_kept_aside_until_accepted() {
        let (_dir, store) = scratch_store();
        assert_eq!(store.mcp_pins("fs").unwrap(), None);
        store
            .record_mcp_listing("fs", &listing(&[("read", "v1")]), 1)
            .unwrap();
        let pins = store.mcp_pins("fs").unwrap().unwrap();
        assert_eq!(pins[0].accepted.as_deref(), Some("v1"));
        assert!(pins[0].signed && pins[0].seen.is_none());

        store
            .record_mcp_listing("fs", &listing(&[("read", "v2"), ("write", "w1")]), 2)
            .unwrap();
        let pins = store.mcp_pins("fs").unwrap().unwrap();
        assert_eq!(pins[0].accepted.as_deref(), Some("v1"));
        assert_eq!(pins[0].seen.as_deref(), Some("v2"));
        assert_eq!(pins[1].accepted, None);
        assert_eq!(pins[1].seen.as_deref(), Some("w1"));

        assert_eq!(store.accept_mcp_tools("fs", 3).unwrap(), 2);
        let pins = store.mcp_pins("fs").unwrap().unwrap();
        assert_eq!(pins[0].accepted.as_deref(), Some("v2"));
        assert_eq!(pins[1].accepted.as_deref(), Some("w1"));
        assert!(pins.iter().all(|p| p.signed && p.seen.is_none()));
    }

    #[test]
    fn a_listing_back_to_the_accepted_definition_clears_what_was_seen() {
        let (_dir, store) = scratch_store();
        store
            .record_mcp_listing("s", &listing(&[("t", "v1")]), 1)
            .unwrap();
        store
            .record_mcp_listing("s", &listing(&[("t", "v2")]), 2)
            .unwrap();
        store
            .record_mcp_listing("s", &listing(&[("t", "v1")]), 3)
            .unwrap();
        let pins = store.mcp_pins("s").unwrap().unwrap();
        assert_eq!(pins[0].seen, None);
    }

    #[test]
    fn a_pin_edited_outside_airlock_does_not_verify() {
        let (_dir, store) = scratch_store();
        store
            .record_mcp_listing("s", &listing(&[("t", "v1")]), 1)
            .unwrap();
        store
            .conn
            .execute("UPDATE mcp_pins SET definition = 'evil'", [])
            .unwrap();
        let pins = store.mcp_pins("s").unwrap().unwrap();
        assert_eq!(pins[0].accepted.as_deref(), Some("evil"));
        assert!(!pins[0].signed);
    }
}
