//! Rules for MCP tools: `mcp:SERVER/TOOL(key=glob, key=glob)`. The tool part may be a glob
//! (`mcp:fs/*`) or left out (`mcp:fs`, every tool of the server); the pattern, when given, lists
//! argument matchers that must all hold. A literal `,` in a glob is written `[,]`.
//!
//! Deny and ask rules are meant to catch: they also match a path written another way (`./a`,
//! `a//b`), and an array argument when any element matches. Allow rules are meant to let
//! through only what they name: a value with a `..` component or a hidden character never
//! matches one, and an array only when every element matches.

use serde_json::Value;

use crate::approval::rules::{Action, Rule};
use crate::facts::glob::glob_match;

/// One `key=glob`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgMatcher {
    pub key: String,
    pub glob: String,
}

/// Parses a rule pattern into its matchers.
pub fn parse(pattern: &str) -> Result<Vec<ArgMatcher>, String> {
    let mut matchers = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    let mut pieces = Vec::new();
    for c in pattern.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    pieces.push(current);
    for piece in pieces {
        let Some((key, glob)) = piece.split_once('=') else {
            return Err(format!(
                "`{}` is not an argument matcher; write `key=glob`, e.g. `path=src/**`",
                piece.trim()
            ));
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.".contains(c))
        {
            return Err(format!("`{key}` is not an argument name"));
        }
        matchers.push(ArgMatcher {
            key: key.to_string(),
            glob: glob.trim().to_string(),
        });
    }
    Ok(matchers)
}

/// Checks an `mcp:` rule's tool and pattern when the rules load.
pub fn check(rule: &Rule) -> Result<(), String> {
    let rest = rule.tool.strip_prefix("mcp:").unwrap_or(&rule.tool);
    let server = rest.split_once('/').map_or(rest, |(s, _)| s);
    if server != "*" {
        crate::mcp::config::check_name(server).map_err(|_| {
            format!(
                "`{}` does not name an MCP server; write `mcp:SERVER/TOOL`, e.g. `mcp:fs/write_file`",
                rule.tool
            )
        })?;
    }
    if let Some(pattern) = &rule.pattern {
        parse(pattern)?;
    }
    Ok(())
}

/// Whether a rule's tool (`mcp:SERVER`, `mcp:SERVER/TOOL`, globs allowed) names this tool.
pub fn names_tool(rule_tool: &str, server: &str, tool: &str) -> bool {
    let Some(rest) = rule_tool.strip_prefix("mcp:") else {
        return false;
    };
    let (s, t) = rest.split_once('/').unwrap_or((rest, "*"));
    glob_match(s, server, false) && glob_match(t, tool, false)
}

/// Whether the rule's argument matchers all hold for `args` (a rule without a pattern matches
/// every call).
pub fn matches(rule: &Rule, args: &Value) -> bool {
    let Some(pattern) = &rule.pattern else {
        return true;
    };
    let Ok(matchers) = parse(pattern) else {
        return false;
    };
    let allow = rule.action == Action::Allow;
    matchers.iter().all(|m| {
        let Some(value) = args.get(&m.key) else {
            return false;
        };
        match value {
            Value::Array(items) if allow => {
                !items.is_empty() && items.iter().all(|v| value_matches(&m.glob, v, true))
            }
            Value::Array(items) => items.iter().any(|v| value_matches(&m.glob, v, false)),
            v => value_matches(&m.glob, v, allow),
        }
    })
}

fn value_matches(glob: &str, value: &Value, allow: bool) -> bool {
    let text = match value {
        Value::String(s) => s.clone(),
        other => crate::digest::canonical_json(other),
    };
    if allow {
        let hidden = text
            .chars()
            .any(|c| c.is_control() || crate::visible::is_hidden(c));
        let climbs = text.split('/').any(|part| part == "..");
        !hidden && !climbs && glob_match(glob, &text, true)
    } else {
        glob_match(glob, &text, true) || glob_match(glob, &normalized(&text), true)
    }
}

/// A path written the plain way: no `.` components, no doubled or trailing `/`.
fn normalized(text: &str) -> String {
    let absolute = text.starts_with('/');
    let parts: Vec<&str> = text
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// A rule's `match` / `not_match` example: a JSON object of arguments.
pub fn example_applies(rule: &Rule, example: &str) -> Result<bool, String> {
    let args: Value = serde_json::from_str(example)
        .map_err(|e| format!("the example {example:?} is not a JSON object of arguments ({e})"))?;
    if !args.is_object() {
        return Err(format!(
            "the example {example:?} is not a JSON object of arguments"
        ));
    }
    Ok(matches(rule, &args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::rules::Rules;
    use serde_json::json;
    use std::path::Path;

    fn rule(action: Action, tool: &str, pattern: Option<&str>) -> Rule {
        Rule::new(action, tool, pattern)
    }

    #[test]
    fn a_rule_names_a_server_a_tool_or_a_glob_of_tools() {
        assert!(names_tool("mcp:fs/write_file", "fs", "write_file"));
        assert!(!names_tool("mcp:fs/write_file", "fs", "read_file"));
        assert!(names_tool("mcp:fs", "fs", "anything"));
        assert!(names_tool("mcp:fs/read_*", "fs", "read_text_file"));
        assert!(!names_tool("mcp:fs", "fs2", "x"));
        assert!(!names_tool("write_file", "fs", "write_file"));
    }

    #[test]
    fn every_matcher_must_hold() {
        let r = rule(
            Action::Ask,
            "mcp:fs/write_file",
            Some("path=src/**, mode=fast"),
        );
        assert!(matches(&r, &json!({"path": "src/a.rs", "mode": "fast"})));
        assert!(!matches(&r, &json!({"path": "src/a.rs", "mode": "slow"})));
        assert!(!matches(&r, &json!({"path": "src/a.rs"})));
    }

    #[test]
    fn a_deny_rule_catches_a_path_written_another_way() {
        let r = rule(Action::Deny, "mcp:fs/write_file", Some("path=secret/**"));
        assert!(matches(&r, &json!({"path": "./secret/key"})));
        assert!(matches(&r, &json!({"path": "secret//key"})));
        let paths = rule(
            Action::Deny,
            "mcp:fs/read_multiple_files",
            Some("paths=secret/**"),
        );
        assert!(matches(&paths, &json!({"paths": ["ok", "secret/k"]})));
    }

    #[test]
    fn an_allow_rule_never_matches_a_climbing_path_or_hidden_characters() {
        let r = rule(
            Action::Allow,
            "mcp:fs/write_file",
            Some("path=/work/src/**"),
        );
        assert!(matches(&r, &json!({"path": "/work/src/a.rs"})));
        assert!(!matches(&r, &json!({"path": "/work/src/../../etc/passwd"})));
        assert!(!matches(&r, &json!({"path": "/work/src/a\u{202e}sr.txt"})));
        let star = rule(Action::Allow, "mcp:fs/write_file", Some("path=/work/src/*"));
        assert!(!matches(&star, &json!({"path": "/work/src/a/b"})));
        let paths = rule(
            Action::Allow,
            "mcp:fs/read_multiple_files",
            Some("paths=src/**"),
        );
        assert!(!matches(
            &paths,
            &json!({"paths": ["src/a", "/etc/passwd"]})
        ));
        assert!(!matches(&paths, &json!({"paths": []})));
        assert!(matches(&paths, &json!({"paths": ["src/a", "src/b"]})));
    }

    #[test]
    fn numbers_and_booleans_match_their_json_text() {
        let r = rule(Action::Ask, "mcp:s/t", Some("count=1*, dry=false"));
        assert!(matches(&r, &json!({"count": 12, "dry": false})));
        assert!(!matches(&r, &json!({"count": 2, "dry": false})));
    }

    #[test]
    fn mcp_rules_load_with_their_examples_checked() {
        let ok = Rules::parse(
            r#"
            deny = ["mcp:fs/write_file(path=.env*)"]
            [[rule]]
            action = "allow"
            tool = "mcp:fs/write_file"
            pattern = "path=src/**"
            match = ['{"path": "src/a.rs", "content": "x"}']
            not_match = ['{"path": "src/../x"}', '{"path": "docs/a"}']
            "#,
            Path::new("rules.toml"),
        );
        assert!(ok.is_ok(), "{ok:?}");
        let bad = Rules::parse(
            r#"
            [[rule]]
            action = "ask"
            tool = "mcp:fs/write_file"
            pattern = "path=src/**"
            match = ['{"path": "docs/a"}']
            "#,
            Path::new("rules.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("does not match this rule"), "{bad}");
        let bad = Rules::parse(
            "allow = [\"mcp:fs/write_file(src/**)\"]",
            Path::new("rules.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("key=glob"), "{bad}");
        let bad = Rules::parse("allow = [\"mcp:a__b/x\"]", Path::new("rules.toml"))
            .unwrap_err()
            .to_string();
        assert!(bad.contains("does not name an MCP server"), "{bad}");
    }
}
