//! The arguments a human approves, frozen: canonical JSON plus its SHA-256 digest.
//!
//! A `FrozenCall` is made once, when a request is created. Everything downstream (the approval
//! modal, a parked approval, the executor) works from the canonical text, and the executor re-checks
//! the digest, so the call that runs is byte for byte the call that was shown.

use std::io::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::digest::{capacity_for, hex, into_string, write_canonical};
use crate::protocol::FrozenCall;

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
    /// Freezes `args`: the canonical text is written once, and hashed as it is written (in
    /// blocks, while they are still in cache), so a 100 MB write is not read a second time.
    pub fn freeze(tool: &str, args: &Value) -> FrozenCall {
        let mut out = Hashing::new(tool, Vec::with_capacity(capacity_for(args)), true);
        write_canonical(args, &mut out);
        let (text, digest) = out.finish();
        FrozenCall {
            tool: tool.to_string(),
            canonical: into_string(text),
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
        parse_frozen(&self.canonical).map_err(|e| FrozenError::Corrupt {
            tool: self.tool.clone(),
            message: e.to_string(),
        })
    }

    /// True when `args` are exactly the frozen arguments (after canonicalisation). Hashed as
    /// the canonical text is written; the text itself is never kept.
    pub fn matches(&self, tool: &str, args: &Value) -> bool {
        if tool != self.tool {
            return false;
        }
        let mut out = Hashing::new(tool, Vec::with_capacity(2 * HASH_BLOCK), false);
        write_canonical(args, &mut out);
        out.finish().1 == self.digest
    }
}

/// The digest's input, `tool`, a NUL byte, then the canonical text, hashed as it is written: a
/// block at a time, while the block is still in cache. The text is kept (`freeze`), or dropped
/// once hashed (`matches`).
struct Hashing {
    hasher: Sha256,
    text: Vec<u8>,
    /// How much of `text` is hashed.
    hashed: usize,
    keep: bool,
}

/// Bytes hashed in one update: large enough that the hasher runs over many blocks at once, small
/// enough to still be in cache.
const HASH_BLOCK: usize = 64 * 1024;

impl Hashing {
    fn new(tool: &str, text: Vec<u8>, keep: bool) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(tool.as_bytes());
        hasher.update([0u8]);
        Hashing {
            hasher,
            text,
            hashed: 0,
            keep,
        }
    }

    fn finish(mut self) -> (Vec<u8>, String) {
        self.hasher.update(&self.text[self.hashed..]);
        (self.text, hex(&self.hasher.finalize()))
    }
}

impl Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if !self.keep && bytes.len() >= HASH_BLOCK {
            // Only hashed: a long piece is hashed where it is, not copied first.
            self.hasher.update(&self.text);
            self.text.clear();
            self.hasher.update(bytes);
            return Ok(bytes.len());
        }
        self.text.extend_from_slice(bytes);
        if self.text.len() - self.hashed >= HASH_BLOCK {
            self.hasher.update(&self.text[self.hashed..]);
            if self.keep {
                self.hashed = self.text.len();
            } else {
                self.text.clear();
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The frozen text parsed back, as `serde_json::from_str` parses it, but without its string
/// buffer: serde_json builds every string that holds an escape (a file's newlines) in a buffer
/// and then copies it out, so a 100 MB `content` was in memory three times (text, buffer,
/// value). Here each container is split into its members' raw text (`RawValue` borrows, no
/// copy), and a string is decoded straight into its one allocation. Anything the fast path
/// does not take as plainly valid (a raw control character, a surrogate escape, whitespace,
/// malformed text) is left to serde_json, so what is accepted, and what it decodes to, is what
/// serde_json says. Containers are split only [`SPLIT_LEVELS`] deep (each split reads its part
/// of the text once more, so a deeply nested text is not read once per level); below that,
/// serde_json parses.
fn parse_frozen(text: &str) -> Result<Value, serde_json::Error> {
    parse_at(text, 0)
}

/// How many levels of containers `parse_frozen` splits itself: a call's arguments, and the
/// objects and arrays in them (a large string is rarely deeper).
const SPLIT_LEVELS: usize = 3;

fn parse_at(text: &str, level: usize) -> Result<Value, serde_json::Error> {
    use serde_json::value::RawValue;
    if level >= SPLIT_LEVELS && text.as_bytes().first() != Some(&b'"') {
        return nested(text, level);
    }
    match text.as_bytes().first() {
        Some(b'{') => {
            // Sorted, the last of a repeated key kept: as a parsed `Map` holds them.
            let members: std::collections::BTreeMap<String, &RawValue> =
                serde_json::from_str(text)?;
            members
                .into_iter()
                .map(|(key, raw)| Ok((key, parse_at(raw.get(), level + 1)?)))
                .collect::<Result<serde_json::Map<_, _>, _>>()
                .map(Value::Object)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text)?;
            items
                .into_iter()
                .map(|raw| parse_at(raw.get(), level + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Some(b'"') => match decoded_string(text) {
            Some(decoded) => Ok(Value::String(decoded)),
            None => serde_json::from_str(text),
        },
        _ => serde_json::from_str(text),
    }
}

/// `text`, a value `level` containers deep in the frozen text, parsed by serde_json as it would
/// parse it there: inside `level` arrays, so its limit on nesting counts the levels above too.
fn nested(text: &str, level: usize) -> Result<Value, serde_json::Error> {
    let wrapped = format!("{}{text}{}", "[".repeat(level), "]".repeat(level));
    let mut value: Value = serde_json::from_str(&wrapped)?;
    for _ in 0..level {
        if let Value::Array(items) = &mut value
            && let Some(inner) = items.pop()
        {
            value = inner;
        }
    }
    Ok(value)
}

/// A JSON string literal (the whole of `literal`) decoded, if it is plainly valid: no raw
/// control character, no unescaped quote, escapes among `\" \\ \/ \b \f \n \r \t \uXXXX` with
/// no surrogate. `None` otherwise (serde_json then decides).
fn decoded_string(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let mut out = String::with_capacity(inner.len());
    let mut at = 0;
    while at < bytes.len() {
        let plain = bytes[at..]
            .iter()
            .position(|&b| b == b'\\' || b == b'"' || b < 0x20)
            .map_or(bytes.len(), |n| at + n);
        // `at` and `plain` sit on ASCII bytes (or the ends), so both are character boundaries.
        out.push_str(inner.get(at..plain)?);
        if plain == bytes.len() {
            break;
        }
        if bytes[plain] != b'\\' {
            return None;
        }
        let escaped = *bytes.get(plain + 1)?;
        at = plain + 2;
        out.push(match escaped {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = inner.get(at..at + 4)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                at += 4;
                // A surrogate (half of a pair, or alone) is not a char: serde_json decides.
                char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
            }
            _ => return None,
        });
    }
    Some(out)
}

fn digest_of(tool: &str, canonical: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0u8]);
    hasher.update(canonical.as_bytes());
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::canonical_json;
    use serde_json::json;

    /// must never change, however freezing is implemented.
    #[test]
    fn the_digest_of_a_fixed_call_never_changes() {
        let args = json!({
            "path": "src/a.txt",
            "content": "line one\nline \"two\"\t\u{1}é✓\\\n",
            "extra": {"z": [3, -1, 2.5, true, null], "a": "x"},
        });
        let frozen = FrozenCall::freeze("write_file", &args);
        assert_eq!(
            frozen.canonical,
            r#"{"content":"line one\nline \"two\"\t\u0001é✓\\\n","extra":{"a":"x","z":[3,-1,2.5,true,null]},"path":"src/a.txt"}"#
        );
        assert_eq!(
            frozen.digest,
            "e846c036c5dca4a836a4393ccc48104ba0f1233faf54c0007a19db2fa854f619"
        );
        assert!(frozen.matches("write_file", &args));
        assert_eq!(frozen.verified_args().unwrap(), args);
    }

    #[test]
    fn a_large_call_hashed_as_it_is_written_has_the_digest_of_its_whole_text() {
        // Pieces of every size around the hash block: escapes every few bytes, long runs
        // without any, and one run longer than a block.
        let mut content = String::new();
        for i in 0..20_000 {
            content.push_str(&"x".repeat(i % 97));
            content.push(if i % 3 == 0 { '\n' } else { '"' });
        }
        content.push_str(&"y".repeat(3 * HASH_BLOCK + 5));
        let args = json!({"path": "big.txt", "content": content, "n": [1, 2.5]});
        let frozen = FrozenCall::freeze("write_file", &args);
        assert_eq!(frozen.canonical, canonical_json(&args));
        assert_eq!(frozen.digest, digest_of("write_file", &frozen.canonical));
        assert!(frozen.matches("write_file", &args));
        assert_eq!(frozen.verified_args().unwrap(), args);
    }

    #[test]
    fn frozen_text_parses_back_as_serde_json_parses_it() {
        for text in [
            r#"{"a":{"c":null,"z":[{"x":1,"y":2}]},"b":1}"#,
            r#"{"s":"a\"b\n\u0001é\\\/\b\f\r\t\u00e9\u2028x"}"#,
            r#"{"pair":"\ud83d\ude00","lone":"x"}"#,
            r#""\ud800""#,
            r#""\udc00\ud800""#,
            "{\"raw tab\":\"a\tb\"}",
            r#""a"b""#,
            r#""a\x""#,
            r#""a\u12""#,
            r#""a\u12é""#,
            r#""a\"#,
            r#""\""#,
            r#""""#,
            r#"{"k":"v","k":"w"}"#,
            r#"{ "spaced" : [ 1 , "two" ] }"#,
            r#"[1,-2.5,1e300,true,false,null,[],{},"",[[["deep"]]]]"#,
            r#"{"a":1}x"#,
            r#"{"a":1"#,
            "   ",
            "",
            "nul",
            "7",
        ] {
            let ours = parse_frozen(text);
            let theirs = serde_json::from_str::<Value>(text);
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{text:?}: {ours:?} / {theirs:?}"
            );
            if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                assert_eq!(ours, theirs, "{text:?}");
            }
        }
    }

    #[test]
    fn deeply_nested_text_parses_back_as_serde_json_parses_it() {
        for depth in (120..136).chain([300, 5000]) {
            for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
                let text = format!("{}\"x\"{}", open.repeat(depth), close.repeat(depth));
                let ours = parse_frozen(&text);
                let theirs = serde_json::from_str::<Value>(&text);
                assert_eq!(ours.is_ok(), theirs.is_ok(), "{open} x {depth}");
                if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                    assert_eq!(ours, theirs, "{open} x {depth}");
                }
            }
        }
    }

    #[test]
    fn any_string_frozen_and_parsed_back_is_the_same_string() {
        let palette = [
            'a',
            'z',
            ' ',
            '"',
            '\\',
            '/',
            '\n',
            '\r',
            '\t',
            '\u{0}',
            '\u{1}',
            '\u{1f}',
            '\u{7f}',
            'é',
            '✓',
            '\u{2028}',
            '\u{feff}',
            '😀',
            '\u{10ffff}',
            'u',
            '0',
        ];
        // A fixed xorshift sequence: the same strings every run.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for _ in 0..seed % 40 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push(palette[(seed % palette.len() as u64) as usize]);
            }
            let args = json!({"s": text, "a": [text, {"k": text}]});
            let frozen = FrozenCall::freeze("t", &args);
            assert_eq!(frozen.verified_args().unwrap(), args, "{text:?}");
        }
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
