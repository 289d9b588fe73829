//! Links created earlier in the same command line: a path through one is judged where the link
//! will lead, never as the new, harmless-looking name in the workspace it is when airlock looks.

use super::*;
use crate::protocol::ReasonCode;
use crate::protocol::Subject;
use crate::protocol::Verdict;

/// The verdict of the command part whose label is `label`.
fn part<'v>(v: &'v Verdict, label: &str) -> &'v crate::protocol::Part {
    v.parts
        .iter()
        .find(|p| p.label == label)
        .unwrap_or_else(|| panic!("no part `{label}` in {:#?}", v.parts))
}

#[test]
fn a_write_through_a_link_to_home_made_earlier_is_denied_like_the_write_it_stands_for() {
    let w = world();
    assert_eq!(w.bash("echo x >> ~/.bashrc").ruling, Ruling::Deny);
    // The redirect after a `cd` in a `&&` chain opens where the `cd` went.
    assert_eq!(w.bash("cd ~ && echo x >> .bashrc").ruling, Ruling::Deny);
    check_table(
        &w,
        Ruling::Deny,
        &[
            "ln -s ~ h && echo x >> h/.bashrc",
            "ln -s ~ h; echo x >> h/.bashrc",
            "ln -s ~ h; cd h; echo x >> .bashrc",
            "ln -s ~ h && cd h && echo x >> .bashrc",
            "ln -sT ~ h && echo x >> h/.bashrc",
            "ln -sf ~ h && echo x >> h/.bashrc",
            "ln -sfn ~ h && echo x >> h/.bashrc",
            "ln --symbolic ~ h && echo x >> h/.bashrc",
            "ln -s -- ~ h && echo x >> h/.bashrc",
            "ln -s ~ ./h && echo x >> h/.bashrc",
            "ln -s ~ h && echo x | tee -a h/.bashrc",
            "ln -s ~ h && cp evil h/.bashrc",
            "ln -s ~ h && bash -c 'echo x >> h/.bashrc'",
            "bash -c 'ln -s ~ h' && echo x >> h/.bashrc",
            "(ln -s ~ h) && echo x >> h/.bashrc",
            "{ ln -s ~ h; } && echo x >> h/.bashrc",
            "echo $(ln -s ~ h) > /dev/null; echo x >> h/.bashrc",
            "ln -s ~ h | cat; echo x >> h/.bashrc",
            "ln -s ~ h && HOME=x echo x >> h/.bashrc",
            // Case-insensitive filesystems meet `H` through `h`.
            "ln -s ~ H && echo x >> h/.bashrc",
            // The working directory, reached through /proc, is the new link.
            "ln -s ~ h; cd h; echo x >> /proc/self/cwd/.bashrc",
        ],
    );
}

#[test]
fn links_to_links_moves_and_links_into_directories_are_followed() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            // A link to a link made before it.
            "ln -s ~ h; ln -s h g; echo x >> g/.bashrc",
            "ln -s ~ h; ln -s h/.ssh k; cat k/config",
            // A link made inside another one lands where that one leads.
            "ln -s ~ h; ln -s .ssh h/k; cat h/k/config",
            // A just-made link moved to a new name.
            "ln -s ~ h && mv h g && echo x >> g/.bashrc",
            "ln -s ~ h && mv -T h g && echo x >> g/.bashrc",
            "mkdir d && ln -s ~ h && mv h d/ && echo x >> d/h/.bashrc",
            // A directory holding a just-made link, moved.
            "mkdir d && ln -s ~ d/h && mv d e && echo x >> e/h/.bashrc",
            // `ln -s TARGET DIR` makes DIR/<name of TARGET>.
            "mkdir d && ln -s ~ d && echo x >> d/home/.bashrc",
            "ln -s ~ && echo x >> home/.bashrc",
            "ln -s -t src ~ && echo x >> src/home/.bashrc",
            "ln -s ~/.bashrc ~/.profile src/ && echo x >> src/.bashrc",
            // A copy that keeps a link as a link (`etc-link` already points to /etc).
            "cp -P etc-link e && cat e/shadow",
            "cp -a etc-link e && cat e/shadow",
        ],
    );
}

#[test]
fn reads_of_secrets_through_a_link_made_earlier_are_denied() {
    let w = world();
    assert_eq!(w.bash("cat /etc/shadow").ruling, Ruling::Deny);
    assert_eq!(w.bash("cat ~/.ssh/config").ruling, Ruling::Deny);
    check_table(
        &w,
        Ruling::Deny,
        &[
            "ln -s / r && cat r/etc/shadow",
            "ln -s ~/.ssh k && cat k/config",
            "ln -s ~ h && cat h/.ssh/*",
            "ln -s ~ h && cat h*/.ssh/config",
            "ln -s ~ h && cat ./h/../h/.ssh/config",
            "cp -as ~ h && cat h/.ssh/config",
            "ln -s ~ h && tar czf out.tgz h/.ssh",
        ],
    );
}

#[test]
fn a_hard_link_to_a_file_outside_the_workspace_is_judged_as_that_file() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            "ln ~/.bashrc x && echo x >> x",
            "link ~/.bashrc x && echo x >> x",
            "cp -l ~/.bashrc x && echo x >> x",
            "cp -s ~/.bashrc x && echo x >> x",
            "ln ~/.ssh/id_rsa x && cat x",
            "ln -sr ~/.bashrc x && echo x >> x",
        ],
    );
}

#[test]
fn a_link_made_by_a_part_that_may_run_later_counts_for_the_paths_before_it() {
    check_table(
        &world(),
        Ruling::Deny,
        &[
            // Pipeline stages and `&` jobs run at the same time as what follows them.
            "echo x | tee -a h/.bashrc | ln -s ~ h",
            "cat h/.bashrc > h/.profile | ln -s ~ h",
            "echo x >> h/.bashrc & ln -s ~ h",
            "sleep 1 && echo x >> h/.bashrc & ln -s ~ h",
            // A trap handler runs at exit, a function when it is called.
            "trap 'echo x >> h/.bashrc' EXIT; ln -s ~ h",
            "f() { echo x >> h/.bashrc; }; ln -s ~ h; f",
            // A loop runs its body again, after the link.
            "for i in 1 2; do echo x >> h/.bashrc; ln -s ~ h; done",
            "while true; do ln -s ~ h > h/.bashrc; done",
            // Run twice, `ln -s /etc h` makes `/etc/etc` the second time.
            "for i in 1 2; do ln -s /etc h; done",
        ],
    );
}

#[test]
fn a_link_whose_target_or_name_is_computed_makes_the_paths_through_it_unknown() {
    let w = world_with(crate::approval::policy::Mode::AutoEdit, Rules::empty());
    for (command, label) in [
        ("ln -s \"$X\" h && cat h/notes", "cat h/notes"),
        ("ln -s \"$(pwd)/..\" h && cat h/notes", "cat h/notes"),
        ("ln -s ~ \"$L\" && cat notes", "cat notes"),
        ("echo h | xargs ln -s ~; cat h/notes", "cat h/notes"),
        ("ln -s ~/.ss* k && cat k/id_rsa.pub", "cat k/id_rsa.pub"),
    ] {
        let v = w.bash(command);
        assert_ne!(
            v.ruling,
            Ruling::Allow,
            "{command}: {:#?}",
            v.reason_lines()
        );
        let p = part(&v, label);
        assert_eq!(p.ruling, Ruling::Ask, "{command}: {:#?}", v.reason_lines());
        assert!(
            v.reasons
                .iter()
                .any(|r| r.code == ReasonCode::UnknownPath && r.ruling == Ruling::Ask),
            "{command}: {:#?}",
            v.reason_lines()
        );
    }
}

#[test]
fn a_redirect_through_a_new_link_offers_no_grant_for_the_name_it_seems_to_write() {
    let v = world().bash("ln -s ~/notes n && echo x >> n/todo");
    assert!(
        v.parts
            .iter()
            .all(|p| !matches!(&p.subject, Some(Subject::Path(path)) if path.ends_with("n/todo"))),
        "{:#?}",
        v.parts
    );
    assert!(
        v.reason_lines()
            .iter()
            .any(|l| l.contains("through `n`, a link this command creates")),
        "{:#?}",
        v.reason_lines()
    );
}

#[test]
fn ordinary_links_inside_the_workspace_are_judged_as_before() {
    let w = world();
    // The link resolves from its own directory: `src/lib` -> `src`, inside the workspace.
    let alone = w.bash("ln -s ../src src/lib");
    let with_ls = w.bash("ln -s ../src src/lib && ls src/lib");
    assert_eq!(with_ls.ruling, alone.ruling);
    assert_eq!(part(&with_ls, "ls src/lib").ruling, Ruling::Allow);
    assert_eq!(
        with_ls.reason_lines().len(),
        alone.reason_lines().len() + 1,
        "{:#?}",
        with_ls.reason_lines()
    );
    // A link's own name is written, not followed, by the command that makes it; a path used
    // before the link exists is judged as it is.
    check_table(
        &w,
        Ruling::Ask,
        &[
            "ln -s ../shared lib && ls lib",
            "ln -sf ../shared lib",
            "rm -f lib && ln -s ../shared lib",
            "mkdir vendor && ln -s ../../lib vendor/",
            "mkdir d && ln -s /etc d",
            "echo x >> h/notes; ln -s ~ h",
            "ln -s ~ h 2> /dev/null",
            "cp -r src copy && echo x >> copy/main.rs",
            "mv src/main.rs src/app.rs && echo x >> src/app.rs",
        ],
    );
}

#[test]
fn a_copy_that_keeps_links_is_judged_as_the_original_only_through_those_links() {
    let w = world();
    let home = w.policy.paths.home.clone();
    std::fs::create_dir_all(home.join("proj")).unwrap();
    std::fs::write(home.join("proj/a.txt"), "a\n").unwrap();
    std::os::unix::fs::symlink(home.join(".bashrc"), home.join("proj/rc")).unwrap();
    // The copied file is a file of its own in the workspace...
    assert_eq!(
        part(&w.bash("cp -a ~/proj p && echo x >> p/a.txt"), ">> p/a.txt").ruling,
        Ruling::Ask
    );
    // ...but the copied link still leads to ~/.bashrc.
    assert_eq!(
        w.bash("cp -a ~/proj p && echo x >> p/rc").ruling,
        Ruling::Deny
    );
}
