//! Canonical JSON and hex: the one way airlock writes a value it hashes, signs or compares (frozen
//! calls, audit records, MCP tool definitions, the state key's seals).
//!
//! A leaf: imports nothing of the crate.

use std::io::Write;

use serde_json::Value;

/// Keys sorted at every level, no whitespace. Written straight out, key by key, rather than
/// serialising a `Value` (another crate in the tree turns on serde_json's `preserve_order`, so
/// object order is insertion order) and without rebuilding a sorted copy (a 2 MiB file write
/// would be copied once more for nothing).
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(capacity_for(value));
    write_canonical(value, &mut out);
    into_string(out)
}

pub fn write_canonical(value: &Value, out: &mut impl Write) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            put(out, b"{");
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    put(out, b",");
                }
                // Writing JSON into a Vec or a `Hashing` cannot fail.
                let _ = serde_json::to_writer(&mut *out, key);
                put(out, b":");
                write_canonical(item, out);
            }
            put(out, b"}");
        }
        Value::Array(items) => {
            put(out, b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    put(out, b",");
                }
                write_canonical(item, out);
            }
            put(out, b"]");
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

fn put(out: &mut impl Write, bytes: &[u8]) {
    // None of the writers here can fail.
    let _ = out.write_all(bytes);
}

/// Room for the canonical text of `value`: its strings and a little for quotes, separators and
/// escapes (a newline every 50 bytes adds 2 %), so a large write is not grown by doubling.
pub fn capacity_for(value: &Value) -> usize {
    fn unescaped(value: &Value) -> usize {
        match value {
            Value::Object(map) => {
                2 + map
                    .iter()
                    .map(|(k, v)| k.len() + 4 + unescaped(v))
                    .sum::<usize>()
            }
            Value::Array(items) => 2 + items.iter().map(|v| 1 + unescaped(v)).sum::<usize>(),
            Value::String(s) => s.len() + 2,
            _ => 24,
        }
    }
    let bytes = unescaped(value);
    bytes + bytes / 32
}

pub fn into_string(bytes: Vec<u8>) -> String {
    // serde_json writes valid UTF-8; the lossy path is never taken.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Lower-case hex of `bytes`.
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

    /// Parked approvals store digests: the canonical text and its digest of the same arguments

    #[test]
    fn hex_writes_two_lower_case_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
    }
}
