use super::*;
use std::path::Path;

fn ctx() -> ShellContext {
    ShellContext {
        home: PathBuf::from("/home/u"),
        cwd: PathBuf::from("/work/ws"),
    }
}

fn programs(command: &str) -> Vec<String> {
    let facts = analyze(command, &ctx());
    assert_eq!(facts.parse_error, None, "{command}");
    facts.commands.iter().map(SimpleCommand::display).collect()
}

#[test]
fn every_simple_command_is_found_in_lists_pipes_and_control_flow() {
    let cases: &[(&str, &[&str])] = &[
        ("a && b || c; d & e\nf", &["a", "b", "c", "d", "e", "f"]),
        ("a | b |& c", &["a", "b", "c"]),
        ("(a; (b))", &["a", "b"]),
        (
            "echo $(a) `b` <(c) >(d)",
            &["a", "b", "c", "d", "echo $(a) `b` <(c) >(d)"],
        ),
        (
            "if a; then b; elif c; then d; else e; fi",
            &["a", "b", "c", "d", "e"],
        ),
        ("for x in 1 2; do a $x; done", &["a $x"]),
        ("while a; do b; done", &["a", "b"]),
        ("case $x in y) a;; *) b;; esac", &["a", "b"]),
        ("f() { a; }; f", &["a", "f"]),
        ("function g { a; }", &["a"]),
        ("cat <<EOF\n$(a)\nEOF", &["a", "cat"]),
        ("! a", &["a"]),
        ("{ a; b; } > out", &["a", "b"]),
        ("x=$(a) b", &["a", "b"]),
        ("[[ -f $(a) ]]", &["a"]),
    ];
    for (command, expected) in cases {
        let mut got = programs(command);
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{command}");
    }
}

#[test]
fn wrappers_are_unwrapped_and_shell_strings_parsed_recursively() {
    assert_eq!(programs("sudo env FOO=1 nice rm -rf /"), vec!["rm -rf /"]);
    assert_eq!(
        programs("bash -c 'ls && sh -c \"rm x\"'"),
        vec!["ls", "rm x"]
    );
    assert_eq!(
        programs("find . -name '*.o' -exec rm {} +"),
        vec!["find . -name *.o", "rm ."]
    );
    assert_eq!(
        programs("eval 'rm -rf /'"),
        vec!["eval rm -rf /", "rm -rf /"]
    );
    assert_eq!(
        programs("bash <<'EOF'\nrm -rf ~\nEOF"),
        vec!["bash", "rm -rf ~"]
    );
    assert_eq!(programs("bash <<< 'rm -rf ~'"), vec!["bash", "rm -rf ~"]);
    assert_eq!(programs("/usr/bin/env /bin/rm x"), vec!["rm x"]);
}

#[test]
fn quoting_tricks_are_seen_through_and_flagged() {
    let facts = analyze(r#"r""m -rf / ; \rm x ; $'\x72\x6d' y"#, &ctx());
    let names: Vec<_> = facts.commands.iter().map(|c| c.display()).collect();
    assert_eq!(names, vec!["rm -rf /", "rm x", "rm y"]);
    assert!(facts.commands.iter().all(|c| c.name_disguised));
    assert!(!analyze("rm x", &ctx()).commands[0].name_disguised);
}

#[test]
fn a_command_name_built_from_a_variable_is_dynamic() {
    let facts = analyze("$CMD -rf /", &ctx());
    assert!(facts.commands[0].argv[0].is_dynamic());
    let facts = analyze("x=rm; $x -rf /", &ctx());
    assert_eq!(facts.commands[0].display(), "rm -rf /");
}

#[test]
fn redirect_targets_are_collected_with_their_command() {
    let facts = analyze(
        "echo hi > out.txt 2>&1 >> log < in; cat > ~/.bashrc",
        &ctx(),
    );
    let targets: Vec<_> = facts
        .redirects
        .iter()
        .map(|r| (r.target.display().to_string(), r.op, r.owner))
        .collect();
    assert_eq!(
        targets,
        vec![
            ("out.txt".into(), RedirectOp::Write, Some(0)),
            ("log".into(), RedirectOp::Append, Some(0)),
            ("in".into(), RedirectOp::Read, Some(0)),
            ("~/.bashrc".into(), RedirectOp::Write, Some(1)),
        ]
    );
}

#[test]
fn cd_moves_later_commands_and_is_forgotten_after_a_subshell() {
    let facts = analyze("cd sub && ls; (cd /etc; cat passwd); cat x", &ctx());
    let cwd: Vec<_> = facts.commands.iter().map(|c| c.cwd.clone()).collect();
    assert_eq!(cwd[1], Cwd::Known(PathBuf::from("/work/ws/sub")));
    assert_eq!(cwd[3], Cwd::Known(PathBuf::from("/etc")));
    // After `cd sub && ls`, the `cd` may have failed: unknown.
    assert_eq!(cwd[4], Cwd::Unknown);
    let facts = analyze("cd /tmp; cat x", &ctx());
    assert_eq!(facts.commands[1].cwd, Cwd::Known(PathBuf::from("/tmp")));
    let facts = analyze("if a; then cd /; fi; cat x", &ctx());
    assert_eq!(facts.commands[2].cwd, Cwd::Unknown);
}

#[test]
fn pipes_record_what_feeds_a_command() {
    let facts = analyze("echo aGk= | base64 -d | bash", &ctx());
    assert_eq!(
        facts.commands[2].stdin,
        Stdin::Pipe {
            producers: vec!["echo".into(), "base64".into()],
            decoded: true,
        }
    );
}

#[test]
fn environment_reads_and_assignments_are_recorded() {
    let facts = analyze(
        "echo $HOME $AWS_SECRET_ACCESS_KEY; x=1; echo $x; export PATH=/tmp:$PATH",
        &ctx(),
    );
    let reads: Vec<_> = facts.env_reads.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(reads, vec!["AWS_SECRET_ACCESS_KEY"]);
    let assigned: Vec<_> = facts
        .assignments
        .iter()
        .map(|a| (a.name.as_str(), a.exported))
        .collect();
    assert_eq!(assigned, vec![("x", false), ("PATH", true)]);
}

#[test]
fn unparseable_commands_report_where() {
    let facts = analyze("echo 'unterminated", &ctx());
    assert!(facts.parse_error.is_some());
    let facts = analyze("bash -c 'if then'", &ctx());
    assert!(
        facts
            .parse_error
            .as_deref()
            .unwrap_or("")
            .contains("nested")
    );
}

#[test]
fn arithmetic_on_a_variable_holding_code_is_opaque() {
    let facts = analyze("x='a[$(id)]'; echo $((x))", &ctx());
    assert!(!facts.opaque.is_empty(), "{facts:?}");
    let _ = Path::new("/");
}

#[test]
fn absurdly_deep_nesting_is_refused_instead_of_exhausting_the_stack() {
    // Test threads have small stacks, so this would abort the process if the walk recursed freely.
    for (open, close) in [
        ("$(", ")"),
        ("(", ")"),
        ("{ ", "; }"),
        ("if true; then ", "; fi"),
    ] {
        let command = format!("{}ls{}", open.repeat(5000), close.repeat(5000));
        let facts = analyze(&command, &ctx());
        assert!(facts.parse_error.is_some(), "{open}");
    }
}

#[test]
fn a_long_chain_of_commands_is_read_in_full_without_deep_recursion() {
    let command = vec!["cat a"; 3000].join(" && ") + " || rm -rf /";
    let facts = analyze(&command, &ctx());
    assert_eq!(facts.parse_error, None);
    assert_eq!(facts.commands.len(), 3001);
    assert_eq!(facts.commands[3000].display(), "rm -rf /");
}

/// The order of every command, by its text.
fn orders(command: &str) -> Vec<(String, Order)> {
    let facts = analyze(command, &ctx());
    assert_eq!(facts.parse_error, None, "{command}");
    facts
        .commands
        .iter()
        .map(|c| (c.display(), c.order.clone()))
        .collect()
}

#[test]
fn the_walk_records_which_commands_may_run_after_those_written_later() {
    let anytime = |command: &str| -> Vec<String> {
        orders(command)
            .into_iter()
            .filter(|(_, o)| o.anytime)
            .map(|(c, _)| c)
            .collect()
    };
    assert_eq!(anytime("a & b; c"), ["a"]);
    assert_eq!(anytime("a && b & c"), ["a", "b"]);
    assert_eq!(anytime("trap 'a' EXIT; b"), ["a"]);
    assert_eq!(anytime("f() { a; }; b; f"), ["a"]);
    assert_eq!(anytime("cat <(a) >(b); c"), ["a", "b"]);
    assert_eq!(anytime("a; b $(c); d"), Vec::<String>::new());
    for (command, o) in orders("a; b; c") {
        assert!(o.together.is_empty() && !o.repeats, "{command}");
    }
    assert_eq!(
        orders("a; b")
            .iter()
            .map(|(_, o)| o.after)
            .collect::<Vec<_>>(),
        [0, 1]
    );
}

#[test]
fn pipeline_stages_and_loop_bodies_share_a_group_and_loop_bodies_repeat() {
    let o = orders("x | y; for i in 1; do z; w; done; v");
    let group = |name: &str| o.iter().find(|(c, _)| c == name).unwrap().1.clone();
    assert!(!group("x").together.is_empty());
    assert_eq!(group("x").together, group("y").together);
    assert_eq!(group("z").together, group("w").together);
    assert_ne!(group("x").together, group("z").together);
    assert!(group("z").repeats && !group("x").repeats);
    assert!(group("v").together.is_empty());
    // A loop inside a nested string still shares ids with nothing outside it.
    let nested = orders("a | b; bash -c 'c | d'");
    assert_ne!(nested[0].1.together, nested[2].1.together);
}

#[test]
fn a_redirect_opens_before_its_own_command_and_after_the_ones_before_it() {
    let facts = analyze("a; b > f; { c; } > g; d && e > h", &ctx());
    let after: Vec<(String, usize)> = facts
        .redirects
        .iter()
        .map(|r| (r.target.display().to_string(), r.order.after))
        .collect();
    // `a` is 0, `b` 1, `c` 2; the grammar hangs `> h` on the list `d && e`, so both count.
    assert_eq!(after, [("f".into(), 1), ("g".into(), 3), ("h".into(), 5)]);
}

#[test]
fn a_redirect_opens_in_the_directory_its_own_command_starts_in() {
    let cwd_of = |command: &str| -> Vec<Cwd> {
        analyze(command, &ctx())
            .redirects
            .iter()
            .map(|r| r.cwd.clone())
            .collect()
    };
    let home = || Cwd::Known(PathBuf::from("/home/u"));
    let ws = || Cwd::Known(PathBuf::from("/work/ws"));
    // The grammar hangs `> f` on the whole list; it belongs to the command after `cd`.
    assert_eq!(cwd_of("cd ~ && echo x >> .bashrc"), [home()]);
    assert_eq!(cwd_of("true && cd ~ && echo x >> .bashrc"), [home()]);
    assert_eq!(cwd_of("cd ~ || echo x >> .bashrc"), [Cwd::Unknown]);
    // A redirect on a group or on `cd` itself opens before the `cd` runs.
    assert_eq!(cwd_of("{ cd ~; } > notes"), [ws()]);
    assert_eq!(cwd_of("cd ~ > notes"), [ws()]);
}
