//! User rules: allow / ask / deny per tool, with a pattern (a command prefix for bash, a glob for
//! paths), loaded from TOML. Each rule may carry `match` / `not_match` examples that are checked
//! when the file loads, so a rule that does not mean what its author thought fails loudly.
//!
//! Precedence is deny > ask > allow; an allow rule never lifts a hard deny (the policy applies
//! rules only to parts that ask), and a bash allow rule covers a part only when the part's whole
//! argv matches, so `cargo test *` never covers `cargo test && rm -rf src` as a whole.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::facts::shell::{self, ShellContext};
use crate::protocol::Ruling;

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("cannot read rules file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "rules file {path} is not valid: {message}\n  fix the TOML at the place named above; see README.md (Rules) for the format"
    )]
    Syntax { path: PathBuf, message: String },
    #[error("rules file {path}, {rule}: {message}")]
    Invalid {
        path: PathBuf,
        rule: String,
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    rule: Vec<RuleEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleEntry {
    action: Action,
    tool: String,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn ruling(self) -> Ruling {
        match self {
            Action::Allow => Ruling::Allow,
            Action::Ask => Ruling::Ask,
            Action::Deny => Ruling::Deny,
        }
    }
}

/// One rule, ready to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub action: Action,
    pub tool: String,
    /// For bash: the words of a command prefix (a last word `*` means "and any further words").
    /// For path tools: a glob. `None` matches every call of the tool.
    pub pattern: Option<String>,
    pub reason: Option<String>,
    /// "allow bash(cargo test *)", used in reasons.
    pub name: String,
}

/// Tools whose rule patterns are path globs.
pub const PATH_TOOLS: &[&str] = &["read_file", "list_dir", "search", "write_file", "edit_file"];

impl Rule {
    pub fn new(action: Action, tool: &str, pattern: Option<&str>) -> Rule {
        let verb = match action {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        };
        let name = match pattern {
            Some(p) => format!("{verb} {tool}({p})"),
            None => format!("{verb} {tool}"),
        };
        Rule {
            action,
            tool: tool.to_string(),
            pattern: pattern.map(str::to_string),
            reason: None,
            name,
        }
    }

    /// For a bash pattern ending in `*`: how many words it spells out before the `*`.
    pub fn prefix_len(&self) -> Option<usize> {
        let words: Vec<&str> = self.pattern.as_deref()?.split_whitespace().collect();
        match words.split_last() {
            Some((&"*", prefix)) => Some(prefix.len()),
            _ => None,
        }
    }

    /// Does this rule's pattern match one simple command's argv?
    pub fn matches_argv(&self, argv: &[String]) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let words: Vec<&str> = pattern.split_whitespace().collect();
        match words.split_last() {
            Some((&"*", prefix)) => {
                argv.len() >= prefix.len()
                    && prefix
                        .iter()
                        .zip(argv)
                        .all(|(p, a)| glob_match(p, a, false))
            }
            _ => {
                argv.len() == words.len()
                    && words.iter().zip(argv).all(|(p, a)| glob_match(p, a, false))
            }
        }
    }

    /// Does this rule's glob match a path? `relative` is the path inside the workspace (if it is
    /// inside), `absolute` the resolved path.
    pub fn matches_path(&self, relative: Option<&str>, absolute: &Path) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        if pattern.starts_with('/') {
            return glob_match(pattern, &absolute.to_string_lossy(), true);
        }
        relative.is_some_and(|r| glob_match(pattern, r, true))
    }
}

/// All rules, in file order.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

impl Rules {
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn load(path: &Path) -> Result<Rules, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Rules, RulesError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| RulesError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let invalid = |rule: String, message: String| RulesError::Invalid {
            path: path.to_path_buf(),
            rule,
            message,
        };
        let mut rules = Vec::new();
        for (action, list, key) in [
            (Action::Allow, &file.allow, "allow"),
            (Action::Ask, &file.ask, "ask"),
            (Action::Deny, &file.deny, "deny"),
        ] {
            for (i, spec) in list.iter().enumerate() {
                let (tool, pattern) = parse_short(spec).ok_or_else(|| {
                    invalid(
                        format!("{key}[{i}] = {spec:?}"),
                        "expected `tool` or `tool(pattern)`, e.g. \"bash(cargo test *)\"".into(),
                    )
                })?;
                let rule = Rule::new(action, &tool, pattern.as_deref());
                check_pattern(&rule).map_err(|m| invalid(rule.name.clone(), m))?;
                rules.push(rule);
            }
        }
        for (i, entry) in file.rule.iter().enumerate() {
            let mut rule = Rule::new(entry.action, &entry.tool, entry.pattern.as_deref());
            rule.reason = entry.reason.clone();
            let label = format!("[[rule]] #{} ({})", i + 1, rule.name);
            check_pattern(&rule).map_err(|m| invalid(label.clone(), m))?;
            let example_applies = |rule: &Rule, example: &str| {
                if rule.tool.starts_with("mcp:") {
                    return crate::approval::arg_rules::example_applies(rule, example)
                        .map_err(|m| invalid(label.clone(), m));
                }
                example_applies(rule, example)
            };
            for example in &entry.matches {
                if !example_applies(&rule, example)? {
                    return Err(invalid(
                        label,
                        format!(
                            "the `match` example {example:?} does not match this rule; fix the pattern or the example"
                        ),
                    ));
                }
            }
            for example in &entry.not_match {
                if example_applies(&rule, example)? {
                    return Err(invalid(
                        label,
                        format!(
                            "the `not_match` example {example:?} matches this rule; fix the pattern or the example"
                        ),
                    ));
                }
            }
            rules.push(rule);
        }
        Ok(Rules { rules })
    }

    pub fn for_tool<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules
            .iter()
            .filter(move |r| r.tool == tool || r.tool == "*")
    }
}

fn parse_short(spec: &str) -> Option<(String, Option<String>)> {
    let spec = spec.trim();
    match spec.split_once('(') {
        Some((tool, rest)) => {
            let pattern = rest.strip_suffix(')')?;
            let tool = tool.trim();
            (!tool.is_empty()).then(|| (tool.to_string(), Some(pattern.trim().to_string())))
        }
        None => (!spec.is_empty() && !spec.contains(')')).then(|| (spec.to_string(), None)),
    }
}

fn check_pattern(rule: &Rule) -> Result<(), String> {
    if rule.tool.starts_with("mcp:") {
        return crate::approval::arg_rules::check(rule);
    }
    if let Some(p) = &rule.pattern {
        if p.trim().is_empty() {
            return Err(
                "the pattern is empty; leave it out to match every call of the tool".into(),
            );
        }
        if rule.tool == "bash" && p.split_whitespace().next() == Some("*") {
            return Err("a bash pattern must start with a program name, not `*`".into());
        }
    }
    Ok(())
}

/// Whether a rule applies to an example: for bash an allow rule must cover every simple command of
/// the example; ask and deny rules apply when they match any one. For path tools the example is a
/// workspace-relative or absolute path.
fn example_applies(rule: &Rule, example: &str) -> Result<bool, RulesError> {
    if rule.tool == "bash" {
        let ctx = ShellContext {
            home: PathBuf::from("/home/user"),
            cwd: PathBuf::from("/workspace"),
        };
        let facts = shell::analyze(example, &ctx);
        let argvs: Vec<Vec<String>> = facts
            .commands
            .iter()
            .filter_map(|c| c.literal_argv())
            .collect();
        if facts.parse_error.is_some() || argvs.is_empty() {
            return Ok(false);
        }
        return Ok(match rule.action {
            Action::Allow => {
                argvs.len() == facts.commands.len() && argvs.iter().all(|a| rule.matches_argv(a))
            }
            Action::Ask | Action::Deny => argvs.iter().any(|a| rule.matches_argv(a)),
        });
    }
    let absolute = Path::new(example);
    let relative = (!example.starts_with('/')).then_some(example);
    Ok(rule.matches_path(relative, absolute))
}

/// Glob matching: `*` any run of characters (not `/` when `paths`), `**` any run including `/`,
/// `?` one character, `[abc]` / `[!abc]` / `[a-z]` a class.
pub fn glob_match(pattern: &str, text: &str, paths: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob_at(&p, &t, paths)
}

fn glob_at(p: &[char], t: &[char], paths: bool) -> bool {
    let Some(&first) = p.first() else {
        return t.is_empty();
    };
    match first {
        '*' => {
            let double = p.get(1) == Some(&'*');
            let rest = if double { &p[2..] } else { &p[1..] };
            // `**/` also matches zero directories.
            if double && rest.first() == Some(&'/') && glob_at(&rest[1..], t, paths) {
                return true;
            }
            for i in 0..=t.len() {
                if glob_at(rest, &t[i..], paths) {
                    return true;
                }
                if i < t.len() && paths && !double && t[i] == '/' {
                    return false;
                }
            }
            false
        }
        '?' => !(t.is_empty() || paths && t[0] == '/') && glob_at(&p[1..], &t[1..], paths),
        '[' => {
            let Some(close) = class_end(p) else {
                return !t.is_empty() && t[0] == '[' && glob_at(&p[1..], &t[1..], paths);
            };
            let Some(&c) = t.first() else { return false };
            let class = &p[1..close];
            let (negate, class) = match class.first() {
                Some('!' | '^') => (true, &class[1..]),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if class[i] == '[' && class.get(i + 1) == Some(&':') {
                    // A POSIX class such as `[:alpha:]`.
                    let name: String = class[i + 2..].iter().take_while(|c| **c != ':').collect();
                    hit |= posix_class(&name, c);
                    i += name.chars().count() + 4;
                    continue;
                }
                if i + 2 < class.len() && class[i + 1] == '-' {
                    hit |= class[i] <= c && c <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit != negate && glob_at(&p[close + 1..], &t[1..], paths)
        }
        c => !t.is_empty() && t[0] == c && glob_at(&p[1..], &t[1..], paths),
    }
}

/// The index of the `]` closing a bracket expression that starts at `p[0]`, skipping `[:...:]`
/// classes and a leading `]` or `!]`.
fn class_end(p: &[char]) -> Option<usize> {
    let mut j = 1;
    if matches!(p.get(j), Some('!' | '^')) {
        j += 1;
    }
    if p.get(j) == Some(&']') {
        j += 1;
    }
    while j < p.len() {
        if p[j] == '[' && p.get(j + 1) == Some(&':') {
            let close = p[j + 2..].windows(2).position(|w| w == [':', ']'])?;
            j += close + 4;
            continue;
        }
        if p[j] == ']' {
            return Some(j);
        }
        j += 1;
    }
    None
}

fn posix_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        "word" => c.is_alphanumeric() || c == '_',
        // An unknown class matches anything: a glob that matches more is judged on more paths.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Rules, RulesError> {
        Rules::parse(text, Path::new("rules.toml"))
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_bash_prefix_with_a_star_matches_longer_commands_only_with_that_prefix() {
        let rule = Rule::new(Action::Allow, "bash", Some("cargo test *"));
        assert!(rule.matches_argv(&argv("cargo test")));
        assert!(rule.matches_argv(&argv("cargo test --release -p x")));
        assert!(!rule.matches_argv(&argv("cargo publish")));
        assert!(!rule.matches_argv(&argv("cargo")));
        let exact = Rule::new(Action::Allow, "bash", Some("git status"));
        assert!(exact.matches_argv(&argv("git status")));
        assert!(!exact.matches_argv(&argv("git status --porcelain")));
    }

    #[test]
    fn path_globs_treat_slash_as_a_boundary_except_for_double_star() {
        assert!(glob_match("src/**", "src/a/b.rs", true));
        assert!(glob_match("src/*.rs", "src/a.rs", true));
        assert!(!glob_match("src/*.rs", "src/a/b.rs", true));
        assert!(glob_match("**/*.md", "README.md", true));
        assert!(glob_match("**/*.md", "docs/x/y.md", true));
        assert!(!glob_match("src/**", "srcx/a", true));
        assert!(glob_match("[!.]*", "a", true));
        assert!(!glob_match("[!.]*", ".env", true));
    }

    #[test]
    fn examples_are_checked_when_the_rules_load() {
        let ok = parse(
            r#"
            [[rule]]
            action = "allow"
            tool = "bash"
            pattern = "cargo test *"
            match = ["cargo test", "cargo test --release"]
            not_match = ["cargo publish", "cargo test && rm -rf src"]
            "#,
        );
        assert!(ok.is_ok(), "{ok:?}");
        let bad = parse(
            r#"
            [[rule]]
            action = "allow"
            tool = "bash"
            pattern = "cargo test"
            match = ["cargo test --release"]
            "#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad.contains("[[rule]] #1 (allow bash(cargo test))"),
            "{bad}"
        );
        assert!(bad.contains("cargo test --release"), "{bad}");
        let bad = parse(
            r#"
            [[rule]]
            action = "deny"
            tool = "write_file"
            pattern = "src/**"
            not_match = ["src/main.rs"]
            "#,
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("not_match"), "{bad}");
    }

    #[test]
    fn shorthand_lists_load_in_order_with_their_actions() {
        let rules = parse(
            r#"
            allow = ["bash(cargo test *)", "write_file(src/**)"]
            ask = ["bash(git push *)"]
            deny = ["bash(curl *)", "read_file"]
            "#,
        )
        .unwrap();
        let names: Vec<_> = rules.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "allow bash(cargo test *)",
                "allow write_file(src/**)",
                "ask bash(git push *)",
                "deny bash(curl *)",
                "deny read_file"
            ]
        );
    }

    #[test]
    fn unknown_keys_and_bad_patterns_are_load_errors_that_name_the_place() {
        let err = parse("alow = [\"bash(ls)\"]").unwrap_err().to_string();
        assert!(err.contains("rules.toml") && err.contains("alow"), "{err}");
        let err = parse("allow = [\"bash(* x)\"]").unwrap_err().to_string();
        assert!(err.contains("must start with a program"), "{err}");
        let err = parse("allow = [\"bash(ls\"]").unwrap_err().to_string();
        assert!(err.contains("allow[0]"), "{err}");
    }
}
