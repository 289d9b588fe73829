//! The peer suites: the test cases of OpenAI Codex's command-safety module and Gemini CLI's
//! shell-parsing and shell-policy tests, converted to data in `tests/peers/*.jsonl` (sources,
//! commits and licence in `tests/peers/README.md`), run through the real binary as a user runs it
//! (`airlock policy check` on a scratch workspace, one process per rule set).
//!
//! Each case records what the peer expects and what airlock answers today. The suite fails when
//! airlock's answer changes (so a policy change that moves a peer case is seen and the data updated
//! on purpose), when a disagreement with the peer carries no reason, when a reason is left on a case
//! that now agrees, and when a reason still says TODO without being listed in [`KNOWN_GAPS`].
//! `AIRLOCK_UPDATE_PEERS=1 cargo test --test peers` rewrites the `airlock` fields and
//! `tests/peers/AGREEMENT.md`; never set it in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

const SUITES: [&str; 2] = ["codex", "gemini"];
const UPDATE_VAR: &str = "AIRLOCK_UPDATE_PEERS";

/// Cases where airlock is more permissive than a peer and nobody has yet decided whether the
/// policy or the data is wrong: each one's `why` starts with "TODO" and says what is open. They
/// are listed in the report and in AGREEMENT.md; remove an entry once the policy or the reason is
/// settled (the suite fails if an entry no longer matches a TODO case).
const KNOWN_GAPS: &[(&str, &str)] = &[];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Peer {
    /// Runs without asking.
    Safe,
    /// Asks (Codex: not on the known-safe list; Gemini: ASK_USER).
    Unsafe,
    /// Codex `command_might_be_dangerous` / Gemini `isDangerousCommand`: never auto-approved; the
    /// peer asks, or refuses when nobody can be asked.
    Dangerous,
    /// Refused by a deny rule (Gemini DENY).
    Deny,
}

impl Peer {
    /// The airlock answers that mean the same thing, as a range over allow < ask < deny.
    fn accepts(self) -> (Answer, Answer) {
        match self {
            Peer::Safe => (Answer::Allow, Answer::Allow),
            Peer::Unsafe => (Answer::Ask, Answer::Ask),
            Peer::Dangerous => (Answer::Ask, Answer::Deny),
            Peer::Deny => (Answer::Deny, Answer::Deny),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    Agree,
    Stricter,
    MorePermissive,
}

/// Airlock rules the case runs with, translated from the peer test's own rule setup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseRules {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ask: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deny: Vec<String>,
}

/// One line of a peer file. Field order is the file's key order, so an update rewrites only what
/// changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    argv: Option<Vec<String>>,
    peer: Peer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rules: Option<CaseRules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    source: String,
    airlock: Answer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

impl Case {
    fn relation_for(&self, answer: Answer) -> Relation {
        let (low, high) = self.peer.accepts();
        if answer < low {
            Relation::MorePermissive
        } else if answer > high {
            Relation::Stricter
        } else {
            Relation::Agree
        }
    }

    fn is_todo(&self) -> bool {
        self.why
            .as_deref()
            .is_some_and(|w| w.trim_start().starts_with("TODO"))
    }
}

/// A suite's cases with the answers the binary gives now.
struct Suite {
    name: &'static str,
    cases: Vec<Case>,
    answers: Vec<Answer>,
}

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

fn load(name: &str) -> Vec<Case> {
    let path = peers_dir().join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// The scratch world every case runs in: a workspace holding the few files the peers' commands
/// name, and a home and state directory of its own, so nothing of the machine's is consulted.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["ws", "home", "state"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        for (file, text) in [
            ("Cargo.toml", "[package]\nname = \"peers\"\n"),
            ("file.txt", "one\n"),
            ("input.txt", "in\n"),
            ("input", "in\n"),
        ] {
            std::fs::write(dir.path().join("ws").join(file), text).unwrap();
        }
        World { dir }
    }

    /// Every command through one `airlock policy check` run with these rules; answers in order.
    fn check(&self, rules: Option<&CaseRules>, commands: &[&str]) -> Vec<Answer> {
        let root = self.dir.path();
        let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
        command
            .args(["policy", "check", "--workspace"])
            .arg(root.join("ws"))
            .env("HOME", root.join("home"))
            .env("AIRLOCK_HOME", root.join("state"))
            .env("XDG_CONFIG_HOME", root.join("home/.config"))
            .env_remove("AIRLOCK_RULES")
            .env_remove("AIRLOCK_MODE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(rules) = rules {
            let path = root.join("rules.toml");
            std::fs::write(&path, toml::to_string(rules).unwrap()).unwrap();
            command.arg("--rules").arg(path);
        }
        let mut input = String::new();
        for (id, c) in commands.iter().enumerate() {
            let call = serde_json::json!({"id": id, "tool": "bash", "args": {"command": c}});
            writeln!(input, "{call}").unwrap();
        }
        let mut child = command.spawn().expect("the airlock binary runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "policy check failed: {stderr}");
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
            .collect();
        assert_eq!(
            lines.len(),
            commands.len(),
            "one verdict per case: {stderr}"
        );
        lines
            .iter()
            .enumerate()
            .map(|(i, v)| {
                assert_eq!(v["id"], i, "verdicts come back in input order: {v}");
                serde_json::from_value(v["decision"].clone())
                    .unwrap_or_else(|e| panic!("case {i}: no decision in {v}: {e}"))
            })
            .collect()
    }
}

fn run(name: &'static str, world: &World) -> Suite {
    let cases = load(name);
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        let key = serde_json::to_string(&case.rules).unwrap();
        groups.entry(key).or_default().push(i);
    }
    let mut answers = vec![Answer::Ask; cases.len()];
    for indices in groups.values() {
        let rules = cases[indices[0]].rules.as_ref();
        let commands: Vec<&str> = indices.iter().map(|&i| cases[i].command.as_str()).collect();
        for (&i, answer) in indices.iter().zip(world.check(rules, &commands)) {
            answers[i] = answer;
        }
    }
    Suite {
        name,
        cases,
        answers,
    }
}

/// Both suites, run once per test process and shared by the tests below.
fn suites() -> &'static [Suite] {
    static SUITES_RUN: OnceLock<Vec<Suite>> = OnceLock::new();
    SUITES_RUN.get_or_init(|| {
        let world = World::new();
        SUITES.iter().map(|name| run(name, &world)).collect()
    })
}

fn updating() -> bool {
    std::env::var(UPDATE_VAR).is_ok_and(|v| v == "1")
}

/// A value's name as the peer files spell it (`safe`, `ask`, ...).
fn label(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn describe(case: &Case) -> String {
    let rules = case
        .rules
        .as_ref()
        .map(|r| format!(" with rules {}", serde_json::to_string(r).unwrap()))
        .unwrap_or_default();
    format!("{:?}{rules} ({})", case.command, case.source)
}

/// POSIX shell quoting as Python's `shlex.quote`: words of safe characters stay bare, anything
/// else goes in single quotes with `'` written as `'"'"'`.
fn shlex_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\"'\"'"))
    }
}

#[test]
fn every_peer_case_gets_the_answer_recorded_for_airlock() {
    let mut changed = Vec::new();
    for suite in suites() {
        for (case, &answer) in suite.cases.iter().zip(&suite.answers) {
            if case.airlock != answer {
                changed.push(format!(
                    "{}: {} was {}, is now {}",
                    suite.name,
                    describe(case),
                    label(case.airlock),
                    label(answer)
                ));
            }
        }
    }
    if updating() {
        for suite in suites() {
            let mut text = String::new();
            for (case, &answer) in suite.cases.iter().zip(&suite.answers) {
                let mut case = case.clone();
                case.airlock = answer;
                writeln!(text, "{}", serde_json::to_string(&case).unwrap()).unwrap();
            }
            let path = peers_dir().join(format!("{}.jsonl", suite.name));
            std::fs::write(&path, text).unwrap();
        }
        return;
    }
    assert!(
        changed.is_empty(),
        "airlock's answer changed on {} peer case(s); if that is intended, run \
         `{UPDATE_VAR}=1 cargo test --test peers` and give each new disagreement its why:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn every_disagreement_with_a_peer_says_why_and_every_todo_is_a_known_gap() {
    let mut problems = Vec::new();
    for suite in suites() {
        for case in &suite.cases {
            let relation = case.relation_for(case.airlock);
            let why = case.why.as_deref().map(str::trim).unwrap_or("");
            let listed = KNOWN_GAPS.contains(&(suite.name, case.command.as_str()));
            match relation {
                Relation::Agree if !why.is_empty() => problems.push(format!(
                    "{}: {} agrees with the peer now; remove its why",
                    suite.name,
                    describe(case)
                )),
                Relation::Stricter | Relation::MorePermissive if why.is_empty() => {
                    problems.push(format!(
                        "{}: {} is {} than the peer and says nothing about why",
                        suite.name,
                        describe(case),
                        if relation == Relation::Stricter {
                            "stricter"
                        } else {
                            "more permissive"
                        }
                    ))
                }
                _ => {}
            }
            if case.is_todo() && !(listed && relation == Relation::MorePermissive) {
                problems.push(format!(
                    "{}: {} has a TODO reason but is not a more-permissive case in KNOWN_GAPS",
                    suite.name,
                    describe(case)
                ));
            }
        }
    }
    for (suite_name, command) in KNOWN_GAPS {
        let still_open = suites()
            .iter()
            .filter(|s| s.name == *suite_name)
            .flat_map(|s| &s.cases)
            .any(|c| c.command == *command && c.is_todo());
        if !still_open {
            problems.push(format!(
                "KNOWN_GAPS lists {suite_name}: {command:?}, which is no longer a TODO case; remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn peer_files_are_what_their_readme_says() {
    for suite in suites() {
        assert!(!suite.cases.is_empty(), "{} has no cases", suite.name);
        for case in &suite.cases {
            assert!(
                !case.command.trim().is_empty(),
                "{}: empty command",
                suite.name
            );
            let (file, test) = case.source.split_once(':').unwrap_or_else(|| {
                panic!("{}: source {:?} is not file:test", suite.name, case.source)
            });
            assert!(
                !test.trim().is_empty(),
                "{}: {:?} names no test",
                suite.name,
                case.source
            );
            let prefix = match suite.name {
                "codex" => "codex-rs/shell-command/src/command_safety/",
                _ => "packages/core/src/",
            };
            assert!(
                file.starts_with(prefix),
                "{}: unexpected source file {file}",
                suite.name
            );
            if suite.name == "codex" {
                // Codex cases are argv vectors, joined into one bash command with shlex quoting.
                let argv = case
                    .argv
                    .as_ref()
                    .unwrap_or_else(|| panic!("codex: {:?} keeps no argv", case.command));
                let joined: Vec<String> = argv.iter().map(|w| shlex_quote(w)).collect();
                assert_eq!(
                    joined.join(" "),
                    case.command,
                    "codex: argv and command differ"
                );
            }
        }
    }
}

#[test]
fn shlex_quoting_keeps_safe_words_bare_and_quotes_the_rest() {
    assert_eq!(shlex_quote("1,5p"), "1,5p");
    assert_eq!(shlex_quote("--output=/tmp/x"), "--output=/tmp/x");
    assert_eq!(shlex_quote("git status"), "'git status'");
    assert_eq!(shlex_quote("'git status'"), "''\"'\"'git status'\"'\"''");
    assert_eq!(shlex_quote(""), "''");
    assert_eq!(shlex_quote("*.py"), "'*.py'");
}

#[test]
fn a_case_is_placed_against_the_peer_by_the_order_allow_ask_deny() {
    let case = |peer| Case {
        command: "x".into(),
        argv: None,
        peer,
        rules: None,
        context: None,
        source: "f:t".into(),
        airlock: Answer::Ask,
        why: None,
    };
    assert_eq!(
        case(Peer::Safe).relation_for(Answer::Allow),
        Relation::Agree
    );
    assert_eq!(
        case(Peer::Safe).relation_for(Answer::Ask),
        Relation::Stricter
    );
    assert_eq!(
        case(Peer::Unsafe).relation_for(Answer::Allow),
        Relation::MorePermissive
    );
    assert_eq!(
        case(Peer::Unsafe).relation_for(Answer::Deny),
        Relation::Stricter
    );
    assert_eq!(
        case(Peer::Dangerous).relation_for(Answer::Deny),
        Relation::Agree
    );
    assert_eq!(
        case(Peer::Dangerous).relation_for(Answer::Ask),
        Relation::Agree
    );
    assert_eq!(
        case(Peer::Dangerous).relation_for(Answer::Allow),
        Relation::MorePermissive
    );
    assert_eq!(
        case(Peer::Deny).relation_for(Answer::Ask),
        Relation::MorePermissive
    );
}

/// The agreement report: one summary line per suite, then every disagreement with its reason.
fn agreement_report() -> String {
    let mut lines = String::new();
    let mut details = String::new();
    for suite in suites() {
        let mut agree = 0;
        let mut stricter = Vec::new();
        let mut permissive = Vec::new();
        for (case, &answer) in suite.cases.iter().zip(&suite.answers) {
            match case.relation_for(answer) {
                Relation::Agree => agree += 1,
                Relation::Stricter => stricter.push((case, answer)),
                Relation::MorePermissive => permissive.push((case, answer)),
            }
        }
        let gaps = permissive.iter().filter(|(c, _)| c.is_todo()).count();
        writeln!(
            lines,
            "- {}: {agree}/{} agree; airlock stricter on {} (reasons given), more permissive on {} \
             ({} justified, {gaps} known gaps)",
            suite.name,
            suite.cases.len(),
            stricter.len(),
            permissive.len(),
            permissive.len() - gaps,
        )
        .unwrap();
        for (title, cases) in [
            ("more permissive than the peer", &permissive),
            ("stricter than the peer", &stricter),
        ] {
            if cases.is_empty() {
                continue;
            }
            writeln!(details, "\n## {}: {title}\n", suite.name).unwrap();
            for (case, answer) in cases.iter() {
                writeln!(
                    details,
                    "- `` {} `` (peer {}, airlock {}){}: {}",
                    case.command.replace('\n', "\\n"),
                    label(case.peer),
                    label(*answer),
                    case.rules
                        .as_ref()
                        .map(|r| format!(", rules {}", serde_json::to_string(r).unwrap()))
                        .unwrap_or_default(),
                    case.why.as_deref().unwrap_or("(no reason given)")
                )
                .unwrap();
            }
        }
    }
    format!(
        "# Peer suites: agreement\n\nGenerated by `{UPDATE_VAR}=1 cargo test --test peers` from \
         `tests/peers/*.jsonl` (see README.md there); do not edit by hand.\n\n{lines}{details}"
    )
}

#[test]
fn peer_suites_agreement_is_reported() {
    let report = agreement_report();
    for line in report
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains(" agree; "))
    {
        eprintln!("{}", &line[2..]);
    }
    for (suite, command) in KNOWN_GAPS {
        eprintln!("known gap ({suite}): {command:?}");
    }
    let path = peers_dir().join("AGREEMENT.md");
    if updating() {
        std::fs::write(&path, &report).unwrap();
        return;
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == report,
        "{} is not what the peer suites give now; run `{UPDATE_VAR}=1 cargo test --test peers` \
         and review the diff",
        path.display()
    );
}
