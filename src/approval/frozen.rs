//! The arguments a human approves, frozen: canonical JSON plus its SHA-256 digest.
//!
//! A `FrozenCall` is made once, when a request is created. Everything downstream (the approval
//! modal, a parked approval, the executor) works from the canonical text, and the executor re-checks
//! the digest, so the call that runs is byte for byte the call that was shown.

use serde_json::Value;
use sha2::{Digest, Sha256};

pub use crate::protocol::FrozenCall;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrozenError {
    #[error(
        "the arguments of this `{tool}` call do not match the digest that was approved \
         (approved {approved}, found {found}); they were changed after approval, so nothing runs"
    )]
    DigestMismatch {
        tool: String,
        approved: String,
        found: String,
    },
    #[error("the frozen arguments of this `{tool}` call are not valid JSON: {message}")]
    Corrupt { tool: String, message: String },
}

impl FrozenCall {
    pub fn freeze(tool: &str, args: &Value) -> FrozenCall {
        let canonical = canonical_json(args);
        let digest = digest_of(tool, &canonical);
        FrozenCall {
            tool: tool.to_string(),
            canonical,
            digest,
        }
    }

    /// A short form of the digest for display ("sha256:1a2b3c4d5e6f").
    pub fn short_digest(&self) -> String {
        format!("sha256:{}", &self.digest[..12.min(self.digest.len())])
    }

    /// Recomputes the digest over the canonical text and parses it back. Fails if either the text
    /// or the digest was changed since freezing.
    pub fn verified_args(&self) -> Result<Value, FrozenError> {
        let found = digest_of(&self.tool, &self.canonical);
        if found != self.digest {
            return Err(FrozenError::DigestMismatch {
                tool: self.tool.clone(),
                approved: self.digest.clone(),
                found,
            });
        }
        serde_json::from_str(&self.canonical).map_err(|e| FrozenError::Corrupt {
            tool: self.tool.clone(),
            message: e.to_string(),
        })
    }

    /// True when `args` are exactly the frozen arguments (after canonicalisation).
    pub fn matches(&self, tool: &str, args: &Value) -> bool {
        tool == self.tool && digest_of(tool, &canonical_json(args)) == self.digest
    }
}

/// Keys sorted at every level, no whitespace. Written straight out, key by key, rather than
/// serialising a `Value` (another crate in the tree turns on serde_json's `preserve_order`, so
/// object order is insertion order) and without rebuilding a sorted copy (a 2 MiB file write
/// would be copied once more for nothing).
pub fn canonical_json(value: &Value) -> String {
    fn write(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                out.push(b'{');
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    // Writing JSON into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut *out, key);
                    out.push(b':');
                    write(item, out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            scalar => {
                let _ = serde_json::to_writer(&mut *out, scalar);
            }
        }
    }
    let mut out = Vec::new();
    write(value, &mut out);
    // serde_json writes valid UTF-8; the lossy path is never taken.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn digest_of(tool: &str, canonical: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0u8]);
    hasher.update(canonical.as_bytes());
    hex(&hasher.finalize())
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level_and_drops_whitespace() {
        let value: Value =
            serde_json::from_str(r#"{ "b": 1, "a": { "z": [ {"y": 2, "x": 1} ], "c": null } }"#)
                .unwrap();
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":null,"z":[{"x":1,"y":2}]},"b":1}"#
        );
    }

    #[test]
    fn canonical_json_escapes_strings_and_writes_numbers_as_serde_json_does() {
        let value = json!({"s": "a\"b\n\u{1}é\\", "n": 1.5, "i": -3, "t": true, "e": [], "o": {}});
        assert_eq!(
            canonical_json(&value),
            r#"{"e":[],"i":-3,"n":1.5,"o":{},"s":"a\"b\n\u0001é\\","t":true}"#
        );
        // The canonical text parses back to the same value.
        assert_eq!(
            serde_json::from_str::<Value>(&canonical_json(&value)).unwrap(),
            value
        );
    }

    #[test]
    fn the_same_arguments_in_another_key_order_freeze_to_the_same_digest() {
        let a = FrozenCall::freeze("bash", &json!({"command": "ls", "timeout_ms": 5}));
        let b: Value = serde_json::from_str(r#"{"timeout_ms":5,   "command":"ls"}"#).unwrap();
        assert!(a.matches("bash", &b));
        assert_eq!(a, FrozenCall::freeze("bash", &b));
    }

    #[test]
    fn an_argument_changed_after_freezing_is_refused() {
        let mut frozen = FrozenCall::freeze("bash", &json!({"command": "cargo test"}));
        assert!(frozen.verified_args().is_ok());
        frozen.canonical = r#"{"command":"cargo test; rm -rf ~"}"#.into();
        let err = frozen.verified_args().unwrap_err();
        assert!(matches!(err, FrozenError::DigestMismatch { .. }), "{err}");
        assert!(!frozen.matches("bash", &json!({"command": "cargo test; rm -rf ~"})));
    }

    #[test]
    fn the_digest_binds_the_tool_name() {
        let args = json!({"path": "a.txt"});
        let frozen = FrozenCall::freeze("read_file", &args);
        assert!(!frozen.matches("write_file", &args));
        let mut renamed = frozen.clone();
        renamed.tool = "write_file".into();
        assert!(renamed.verified_args().is_err());
    }
}
