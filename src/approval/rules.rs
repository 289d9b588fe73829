//! User rules: allow / ask / deny per tool, with a pattern (a command prefix for bash, a glob for
//! paths), loaded from TOML. Each rule may carry `match` / `not_match` examples that are checked
//! when the file loads, so a rule that does not mean what its author thought fails loudly.
//!
//! Precedence is deny > ask > allow; an allow rule never lifts a hard deny (the policy applies
//! rules only to parts that ask), and a bash allow rule covers a part only when the part's whole
//! argv matches, so `cargo test *` never covers `cargo test && rm -rf src` as a whole.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::facts::glob::{Glob, GlobError};
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
                        .all(|(p, a)| self.holds(Glob::word(p), a))
            }
            _ => {
                argv.len() == words.len()
                    && words
                        .iter()
                        .zip(argv)
                        .all(|(p, a)| self.holds(Glob::word(p), a))
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
            return self.holds(Glob::path(pattern), &absolute.to_string_lossy());
        }
        relative.is_some_and(|r| self.holds(Glob::path(pattern), r))
    }

    /// A glob too large to compile fails closed: an allow rule does not apply, an ask or deny
    /// rule does. Only a rule built in code can hold one; loading compiles every glob first.
    fn holds(&self, glob: Result<Glob, GlobError>, text: &str) -> bool {
        match glob {
            Ok(glob) => glob.is_match(text),
            Err(_) => self.action != Action::Allow,
        }
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
        crate::approval::arg_rules::check(rule)?;
        return check_mcp_globs(rule);
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
        Glob::path(p).map_err(|e| e.to_string())?;
        for word in p.split_whitespace() {
            Glob::word(word).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Compiles the globs of an `mcp:` rule (server, tool, each argument's), so none fails when a
/// call is judged, where `glob_match` would read a failure as a match.
fn check_mcp_globs(rule: &Rule) -> Result<(), String> {
    let names = rule.tool.strip_prefix("mcp:").unwrap_or(&rule.tool);
    let (server, tool) = names.split_once('/').unwrap_or((names, "*"));
    let arguments = match &rule.pattern {
        Some(pattern) => crate::approval::arg_rules::parse(pattern)?,
        None => Vec::new(),
    };
    for name in [server, tool] {
        Glob::word(name).map_err(|e| e.to_string())?;
    }
    for argument in arguments {
        Glob::path(&argument.glob).map_err(|e| e.to_string())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::glob::glob_match;

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
    fn a_glob_too_large_to_compile_is_a_load_error_that_names_the_rule() {
        let huge = "[[:alpha:]]".repeat(1000);
        let err = parse(&format!("deny = [\"read_file({huge})\"]"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("deny read_file(") && err.contains("too large"),
            "{err}"
        );
        let err = parse(&format!("allow = [\"mcp:fs/write_file(path={huge})\"]"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("too large"), "{err}");
    }

    #[test]
    fn a_rule_built_with_a_glob_too_large_to_compile_never_allows_but_still_asks_and_denies() {
        let huge = "[[:alpha:]]".repeat(1000);
        let path = Path::new("/workspace/src/a.rs");
        let allow = Rule::new(Action::Allow, "read_file", Some(&huge));
        assert!(!allow.matches_path(Some("src/a.rs"), path));
        assert!(!allow.matches_argv(&argv("ls")));
        for action in [Action::Ask, Action::Deny] {
            let rule = Rule::new(action, "read_file", Some(&huge));
            assert!(rule.matches_path(Some("src/a.rs"), path));
            assert!(rule.matches_argv(&argv("ls")));
        }
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
