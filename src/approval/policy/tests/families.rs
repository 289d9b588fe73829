//! Issue 11's families: each a rule about what a construct does, tested by its members.

use super::*;

#[test]
fn credential_files_named_the_windows_way_are_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            r"cat 'C:\Users\me\.ssh\id_rsa'",
            r"cat 'C:\Users\me\.aws\credentials'",
            "cat C:/Users/me/.ssh/id_ed25519",
            r"cat 'D:\keys\deploy.key'",
            r"cat 'c:\users\me\.config\gcloud\credentials.db'",
        ],
    );
}

#[test]
fn a_key_named_in_an_interpreters_inline_code_is_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            r#"python3 -c 'print(open("/root/.ssh/id_rsa").read())'"#,
            r#"python3 -c "import os; print(open(os.path.expanduser('~/.ssh/id_ed25519')).read())""#,
            r#"perl -e 'open F, "<$ENV{HOME}/.ssh/id_rsa"; print <F>; open G, "</etc/shadow"'"#,
            r#"node -e 'console.log(require("fs").readFileSync("/home/me/.aws/credentials", "utf8"))'"#,
            r#"ruby -e 'puts File.read("~/.ssh/id_rsa")'"#,
            r#"awk 'BEGIN { while ((getline l < "/root/.ssh/id_rsa") > 0) print l }'"#,
        ],
    );
}

#[test]
fn an_interpreter_one_liner_without_a_credential_still_only_asks() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            r#"python3 -c 'print(open("README.md").read())'"#,
            r#"node -e 'console.log(6 / 3)'"#,
        ],
    );
}

#[test]
fn a_search_through_every_file_of_the_home_directory_is_denied() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            r#"grep -r "PRIVATE KEY" ~"#,
            "grep -rl BEGIN $HOME",
            "grep -R password /",
            "rg --hidden 'BEGIN OPENSSH' ~",
            "rg -uu token ~/",
            "ag -u secret ~",
        ],
    );
    // rg skips hidden directories unless told otherwise: the keys are not searched.
    check_table(&world(), Ruling::Ask, &["rg TODO ~"]);
}

#[test]
fn another_projects_env_file_is_denied_and_template_env_files_are_plain_reads() {
    let w = world();
    std::fs::write(w.outside().join(".env"), "KEY=1\n").unwrap();
    check_table(
        &w,
        Ruling::Deny,
        &["cat ../other-project/.env", "cat ~/.env"],
    );
    for name in [".env.example", ".env.sample", ".env.template", ".env.dist"] {
        std::fs::write(w.policy.paths.workspace.join(name), "KEY=\n").unwrap();
    }
    check_table(
        &w,
        Ruling::Allow,
        &[
            "cat .env.example",
            "cat .env.sample",
            "head .env.template",
            "cat .env.dist",
        ],
    );
    let read = w.tool("read_file", json!({"path": ".env.example"}));
    assert_eq!(read.ruling, Ruling::Allow, "{:#?}", read.reason_lines());
    check_table(&w, Ruling::Ask, &["cat .env", "cat .env.local"]);
}

#[test]
fn printing_a_variable_that_holds_no_secret_is_allowed_and_a_secret_looking_one_asks() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &[
            "printenv PATH",
            "printenv HOME SHELL",
            "echo $PATH",
            "echo \"$SHELL\"",
        ],
    );
    check_table(
        &w,
        Ruling::Ask,
        &[
            "printenv GITHUB_TOKEN",
            "echo $OPENAI_API_KEY",
            "printenv DATABASE_URL",
            "printenv",
            "env",
        ],
    );
}

#[test]
fn option_values_of_read_only_programs_are_not_read_as_paths() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "cut -d / -f 2 src/main.rs",
            "cut -d/ -f2 src/main.rs",
            "paste -d / src/main.rs src/tokenizer.rs",
            "column -s / -t src/main.rs",
            "head -n 5 src/main.rs",
            "diff <(ls) <(ls -a)",
        ],
    );
}

#[test]
fn a_read_only_program_that_writes_a_file_or_runs_a_program_is_judged_by_that() {
    let w = world();
    check_table(
        &w,
        Ruling::Ask,
        &[
            "base64 -o out.txt src/main.rs",
            "base64 --output=out.txt src/main.rs",
            "iconv -f utf8 -t ascii -o out.txt src/main.rs",
            "rg --hostname-bin ./x foo",
            "rg --pre ./x foo",
        ],
    );
    check_table(&w, Ruling::Deny, &["base64 -o ~/.bashrc src/main.rs"]);
}

#[test]
fn looking_at_a_device_is_not_reading_it() {
    let w = world();
    // A raw disk's name and type are not its contents: looking at its node is allowed...
    check_table(
        &w,
        Ruling::Allow,
        &[
            "stat /dev/sda",
            "stat -c %t /dev/sda",
            "stat --format=%t:%T /dev/nvme0n1",
            "ls -l /dev/sda",
        ],
    );
    // ...reading it is refused.
    check_table(&w, Ruling::Deny, &["cat /dev/sda", "file -s /dev/sda"]);
}

#[test]
fn git_pointed_at_a_directory_outside_reads_it() {
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "git -C ~ log -p",
            "git -C / status",
            "git -C ../other-project diff",
        ],
    );
    check_table(&world(), Ruling::Allow, &["git -C src log", "git status"]);
}

#[test]
fn read_only_git_asks_in_a_repository_whose_config_runs_programs() {
    let cases = [
        (
            "[core]\n\tfsmonitor = ./.watch\n",
            "git status",
            "core.fsmonitor",
        ),
        ("[diff]\n\texternal = ./d.sh\n", "git diff", "diff.external"),
        (
            "[diff \"bin\"]\n\ttextconv = ./c.sh\n",
            "git log -p",
            "diff.bin.textconv",
        ),
        (
            "[diff \"bin\"]\n\ttextconv = ./c.sh\n",
            "git -C src show HEAD",
            "diff.bin.textconv",
        ),
    ];
    for (config, command, key) in cases {
        let w = world();
        std::fs::write(w.policy.paths.workspace.join(".git/config"), config).unwrap();
        let v = w.bash(command);
        assert_eq!(v.ruling, Ruling::Ask, "{command}: {:#?}", v.reason_lines());
        assert!(
            v.reason_lines().iter().any(|l| l.contains(key)),
            "{command}: {:#?}",
            v.reason_lines()
        );
    }
}

#[test]
fn read_only_git_in_an_ordinary_repository_is_still_allowed() {
    let w = world();
    std::fs::write(
        w.policy.paths.workspace.join(".git/config"),
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n",
    )
    .unwrap();
    check_table(&w, Ruling::Allow, &["git status", "git diff", "git log -p"]);
}

#[test]
fn dry_runs_of_destructive_commands_only_read() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "git clean -n",
            "git clean -nd",
            "git clean --dry-run -d",
            "rsync -n -a src/ backup/",
            "rsync --dry-run -av src/ backup/",
        ],
    );
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "git clean -fd",
            "rsync -a src/ backup/",
            "rsync -n -a src/ host:backup/",
            "rsync -n -e ssh src/ backup/",
            "rsync -n --exclude x src/ backup/",
            "rsync -n --log-file=log src/ backup/",
        ],
    );
}

#[test]
fn a_pager_variable_naming_a_plain_pager_does_not_ask_and_any_other_value_does() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &[
            "GIT_PAGER=cat git log",
            "PAGER=less git diff",
            "GIT_PAGER= git log",
            "LESS=-R git log",
        ],
    );
    check_table(
        &w,
        Ruling::Ask,
        &[
            "GIT_PAGER='sh -c id' git log",
            "PAGER=./x git log",
            "GIT_PAGER=$X git log",
            "LESSOPEN='|./x %s' git log",
        ],
    );
}

#[test]
fn a_program_found_first_in_a_path_directory_the_agent_can_write_asks() {
    use std::os::unix::fs::PermissionsExt;
    let mut w = world();
    let bin = w.policy.paths.workspace.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["rg", "echo"] {
        std::fs::write(bin.join(name), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    w.policy.paths.program_dirs = vec![bin.clone(), "/usr/bin".into(), "/bin".into()];
    let v = w.bash("rg foo src");
    assert_eq!(v.ruling, Ruling::Ask, "{:#?}", v.reason_lines());
    assert!(
        v.reason_lines()
            .iter()
            .any(|l| l.contains("bin/rg") && l.contains("PATH")),
        "{:#?}",
        v.reason_lines()
    );
    // Programs not planted there, and bash's own builtins, are judged as before.
    check_table(&w, Ruling::Allow, &["ls src", "echo hi", "cat src/main.rs"]);
}

fn with_allow_rules(rules: &[&str]) -> World {
    let list: Vec<String> = rules.iter().map(|r| format!("{r:?}")).collect();
    let rules = Rules::parse(
        &format!("allow = [{}]", list.join(", ")),
        std::path::Path::new("r.toml"),
    )
    .unwrap();
    world_with(Mode::Default, rules)
}

#[test]
fn a_prefix_allow_rule_does_not_lift_a_deletion_or_program_run_an_option_adds() {
    let w = with_allow_rules(&["bash(find *)", "bash(sort *)", "bash(rg *)"]);
    check_table(
        &w,
        Ruling::Ask,
        &[
            "find . -name '*.tmp' -delete",
            "find . -exec rm {} ;",
            "find . -exec ./fix.sh {} ;",
            "sort -o {tmp}/out src/main.rs",
            "rg --pre ./x foo",
        ],
    );
    check_table(
        &w,
        Ruling::Allow,
        &["find . -name '*.rs'", "sort src/main.rs"],
    );
}

#[test]
fn a_prefix_allow_rule_still_lifts_what_its_own_words_name() {
    let w = with_allow_rules(&["bash(rm *)", "bash(cargo test *)", "bash(git clean *)"]);
    check_table(
        &w,
        Ruling::Allow,
        &["rm -rf build", "cargo test --release", "git clean -fdx"],
    );
}

#[test]
fn an_allow_rule_that_spells_out_the_whole_command_lifts_what_it_matches() {
    let w = with_allow_rules(&["bash(find . -name * -delete)"]);
    check_table(&w, Ruling::Allow, &["find . -name '*.tmp' -delete"]);
}

#[test]
fn read_only_git_against_a_computed_revision_is_allowed_and_option_values_are_not_files() {
    check_table(
        &world(),
        Ruling::Allow,
        &[
            "git diff $(git merge-base HEAD main)",
            "git log $(git rev-parse --short HEAD)..main",
            "git log -n 5 --author me --since yesterday",
            "git log --grep /etc/passwd",
        ],
    );
    // A substitution that can print a path is still a path airlock cannot check.
    check_table(
        &world(),
        Ruling::Ask,
        &[
            "git diff $(git rev-parse --show-toplevel)/../x",
            "git diff $(git rev-parse --no-revs ~/.bashrc)",
            "git diff $(cat list)",
        ],
    );
}

#[test]
fn a_variable_that_makes_a_shell_or_interpreter_load_code_asks_and_says_why() {
    let w = world();
    let cases = [
        ("env BASH_ENV=./x.sh bash -c 'echo hi'", "sources a file"),
        ("ENV=./x.sh sh -i -c 'echo hi'", "sources a file"),
        ("LD_PRELOAD=./evil.so ls", "dynamic linker"),
        ("env LD_PRELOAD=./evil.so bash -c ls", "dynamic linker"),
        ("PYTHONSTARTUP=x.py python3 -i", "interpreter"),
        ("NODE_OPTIONS='--require ./x.js' node -v", "interpreter"),
        ("PERL5OPT=-Mevil perl -v", "interpreter"),
        ("GIT_EXTERNAL_DIFF=./x git diff", "git runs programs"),
        ("GIT_SSH_COMMAND=./x git status", "git runs programs"),
        ("EDITOR=./x git commit", "runs the command line"),
        ("LESSOPEN='|./x %s' less README.md", "runs the command line"),
    ];
    for (command, why) in cases {
        let v = w.bash(command);
        assert_ne!(v.ruling, Ruling::Allow, "{command}");
        assert!(
            v.reason_lines().iter().any(|l| l.contains(why)),
            "{command}: {:#?}",
            v.reason_lines()
        );
    }
    // Formatting and locale settings on a replaced shell stay harmless.
    check_table(
        &w,
        Ruling::Allow,
        &["LC_ALL=C bash -c 'ls src'", "env TZ=UTC sh -c 'ls'"],
    );
}

#[test]
fn a_search_of_the_home_through_a_link_made_earlier_is_denied_too() {
    check_table(
        &world(),
        Ruling::Deny,
        &["ln -s ~ h && grep -r 'PRIVATE KEY' h"],
    );
}

#[test]
fn a_loop_over_a_glob_with_a_read_only_body_is_judged_by_every_name_it_matches() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &[
            "for f in src/*.rs; do wc -l \"$f\"; done",
            "for f in src/*; do head \"$f\"; done",
            "for f in src/*.rs; do echo \"== $f\"; cat $f; done",
        ],
    );
    // The names a pattern matches include symlinks out of the workspace; a reassigned or
    // computed variable is unknown again.
    check_table(
        &w,
        Ruling::Deny,
        &["for f in *; do cat \"$f\"/id_rsa; done"],
    );
    check_table(
        &w,
        Ruling::Ask,
        &[
            "for f in src/*.rs; do f=$(cat list); head \"$f\"; done",
            "for f in $(cat list); do head \"$f\"; done",
            "for f in src/*.rs; do rm \"$f\"; done",
            "for c in ls rm; do $c -rf src; done",
        ],
    );
}

#[test]
fn what_bash_refuses_to_parse_is_denied_by_one_rule() {
    check_table(
        &world(),
        Ruling::Deny,
        &["ls ;; ls", "echo $((1+2)))", "ls | ;", "fi", "cat <<EOF"],
    );
    check_table(&world(), Ruling::Allow, &["case x in a) ls ;; esac"]);
}

#[test]
fn sort_keys_and_separators_are_values_and_its_temporary_directory_is_written() {
    let w = world();
    check_table(
        &w,
        Ruling::Allow,
        &["sort -k 2 -t , src/main.rs", "sort -k2,2n -t: src/main.rs"],
    );
    check_table(&w, Ruling::Deny, &["sort -T ~/.ssh src/main.rs"]);
}

#[test]
fn make_dry_run_reads_a_plain_makefile_and_asks_when_the_makefile_runs_something_anyway() {
    let w = world();
    let ws = &w.policy.paths.workspace;
    std::fs::write(ws.join("Makefile"), "all:\n\tcc -o app main.c\n").unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(
        ws.join("sub/Makefile"),
        "V := $(shell id)\nall:\n\techo $(V)\n",
    )
    .unwrap();
    check_table(
        &w,
        Ruling::Allow,
        &["make -n", "make --dry-run all", "make -nk all"],
    );
    let v = w.bash("make -n -C sub");
    assert_eq!(v.ruling, Ruling::Ask, "{:#?}", v.reason_lines());
    assert!(
        v.reason_lines()
            .iter()
            .any(|l| l.contains("line 1 of Makefile uses `$(shell")),
        "{:#?}",
        v.reason_lines()
    );
    check_table(
        &w,
        Ruling::Ask,
        &[
            "make -n CC='$(shell id)'",
            "make -n -j4",
            "make -n -f missing.mk",
            "make",
        ],
    );
}

#[test]
fn a_file_url_is_the_file_it_names_and_other_urls_are_not_paths() {
    let w = world();
    check_table(
        &w,
        Ruling::Deny,
        &[
            "curl file:///etc/shadow",
            "curl -o x FILE:///etc/shadow",
            "wget file://localhost/etc/shad%6fw",
            "curl --url=file:///etc/shadow",
        ],
    );
    let v = w.bash("xdg-open https://example.com/a/b");
    assert!(
        !v.reason_lines().iter().any(|l| l.contains("reads https:")),
        "{:#?}",
        v.reason_lines()
    );
}

#[test]
fn a_command_that_reads_or_draws_on_a_terminal_asks_and_says_it_touches_the_terminal() {
    let w = world();
    let attacks = [
        r"printf '\0337\033[28;2H SAFE \0338' > /dev/tty",
        "cat /dev/tty",
        "stty -echo < /dev/tty",
        "tput clear > /dev/tty",
        "echo y > /dev/pts/1",
        "cat /dev/pts/0",
        "exec 3>/dev/tty",
        "echo hi > /dev/console",
        "cat /dev/vcs1",
        "echo x >/dev/tty1",
        "head -c 1 /dev/ptmx",
    ];
    check_table(&w, Ruling::Ask, &attacks);
    for attack in attacks {
        let verdict = w.bash(attack);
        assert!(
            verdict
                .reasons
                .iter()
                .any(|r| r.code == ReasonCode::TouchesTerminal && r.message.contains("terminal")),
            "{attack}: {:?}",
            verdict.reasons
        );
    }
    // The command's own streams and the harmless devices still only read or write nothing.
    check_table(
        &w,
        Ruling::Allow,
        &[
            "echo hi > /dev/null",
            "echo hi > /dev/stdout",
            "echo hi >&2 2>/dev/stderr",
            "head -c 4 /dev/urandom",
        ],
    );
}
