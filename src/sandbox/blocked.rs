//! After a sandboxed run: what the sandbox refused, told to the model in plain words.
//!
//! The kernel does not tell the parent which access Landlock refused, so this reads the
//! command's output the way a person would: a line saying "Permission denied" or "Operation not
//! permitted" about a path the plan does not let the command read (a protected place) or write
//! (outside the workspace and temp) is a refusal by the sandbox, and so is "No such file or
//! directory" about a protected place (the launcher covers those with an empty directory); a
//! line about a failed connection or name lookup, in a profile without the network, is a
//! refused network call. A refusal whose line names no path, or names one the plan allows, is
//! not blamed on the sandbox.

use std::path::{Path, PathBuf};

use super::Profile;
use super::plan::Plan;

/// Words in an error line that mean the kernel refused a file access.
const DENIED: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "read-only file system",
    "EACCES",
    "EPERM",
    "EROFS",
];

/// What a covered protected place answers (see `plan`), as C programs and Node say it:
/// blamed on the sandbox only for a protected path.
const MISSING: &[&str] = &[
    "No such file or directory",
    "no such file or directory",
    "ENOENT",
];

/// Words that mean a network call failed the way it does with the network cut.
const NETWORK: &[&str] = &[
    "Network is unreachable",
    "ENETUNREACH",
    "Couldn't connect to server",
    "Could not connect to server",
    "Failed to connect",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "getaddrinfo failed",
    "No address associated with hostname",
];

/// At most this many refusals are listed.
const MAX_LISTED: usize = 8;

/// One thing the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Read(PathBuf),
    Write(PathBuf),
    Network(String),
}

/// The refusals the output shows, in the order first seen, without repeats.
pub fn refusals(plan: &Plan, output: &str) -> Vec<Refusal> {
    let mut found: Vec<Refusal> = Vec::new();
    for line in output.lines() {
        // The result marks error output line by line.
        let line = line.strip_prefix("[stderr] ").unwrap_or(line);
        let network_line = NETWORK.iter().any(|n| line.contains(n))
            || line.contains("/dev/tcp/")
            || line.contains("/dev/udp/")
            || (line.contains("connect") && DENIED.iter().any(|d| line.contains(d)));
        let refusal = if network_line {
            (!plan.network).then(|| Refusal::Network(shorten(line.trim())))
        } else if DENIED.iter().any(|d| line.contains(d)) {
            paths_in(line, &plan.workspace).into_iter().find_map(|p| {
                if plan.is_protected(&p) && !plan.may_write(&p) {
                    Some(Refusal::Read(p))
                } else if !plan.may_write(&p) {
                    Some(Refusal::Write(p))
                } else {
                    None
                }
            })
        } else if MISSING.iter().any(|m| line.contains(m)) {
            // A protected place the launcher covered shows as an empty directory.
            paths_in(line, &plan.workspace)
                .into_iter()
                .find(|p| plan.is_protected(p) && !plan.may_write(p))
                .map(Refusal::Read)
        } else {
            None
        };
        if let Some(r) = refusal
            && !found.contains(&r)
        {
            found.push(r);
        }
    }
    found
}

/// The note added to a run's result when the sandbox refused something; `None` when nothing
/// in the output points at it.
pub fn explain(plan: &Plan, output: &str) -> Option<String> {
    let profile = plan.profile;
    let mut note = listed(
        plan,
        output,
        &format!(
            "[sandbox] this command ran in the sandbox `{}` ({}), which refused:\n",
            profile.as_str(),
            profile.describe()
        ),
    )?;
    let wider = match profile {
        Profile::ReadOnly => "\"workspace-write\" (writes the workspace), \"network\" or \"off\"",
        Profile::WorkspaceWrite => "\"network\" (adds the network) or \"off\" (no sandbox)",
        Profile::Network | Profile::Off => "\"off\" (no sandbox)",
    };
    note.push_str(&format!(
        "If the task needs this, you may call bash again with \"sandbox\": {wider}; that is a \
         new request, and the user sees the wider profile before deciding. Do not try to get \
         around the sandbox otherwise.\n"
    ));
    Some(note)
}

/// The same note for a tool of MCP server `server`, which airlock started under `plan`: its
/// error `output` names what the sandbox refused. Only the user can widen a server's sandbox.
pub fn explain_for_server(plan: &Plan, output: &str, server: &str) -> Option<String> {
    let profile = plan.profile;
    let mut note = listed(
        plan,
        output,
        &format!(
            "[sandbox] MCP server `{server}` runs in the sandbox `{}` ({}), which refused:\n",
            profile.as_str(),
            profile.describe()
        ),
    )?;
    note.push_str(&format!(
        "A server's sandbox is set by the user (`sandbox` in [mcp_servers.{server}] of their \
         config); a call cannot widen it. Tell the user if the task needs more, and do not try \
         to get around the sandbox.\n"
    ));
    Some(note)
}

/// `head` and a line per refusal `output` shows; `None` when it shows none.
fn listed(plan: &Plan, output: &str, head: &str) -> Option<String> {
    let found = refusals(plan, output);
    if found.is_empty() {
        return None;
    }
    let profile = plan.profile;
    let mut note = head.to_string();
    for refusal in found.iter().take(MAX_LISTED) {
        let line = match refusal {
            Refusal::Read(p) => format!(
                "reading {}: a protected place (keys, credentials, .env files or airlock's own state)",
                p.display()
            ),
            Refusal::Write(p) if plan.read_only.contains(p) => format!(
                "writing {}: a file airlock reads as policy (config or rules), read-only to every command",
                p.display()
            ),
            Refusal::Write(p) => format!(
                "writing {}: outside what `{}` may write",
                p.display(),
                profile.as_str()
            ),
            Refusal::Network(line) => format!("a network call: {line}"),
        };
        note.push_str(&format!("  - {line}\n"));
    }
    if found.len() > MAX_LISTED {
        note.push_str(&format!("  - and {} more\n", found.len() - MAX_LISTED));
    }
    Some(note)
}

/// The paths an error line names: what stands just before `: Permission denied` (`bash: line
/// 1: out.txt: Permission denied`, `touch: cannot touch 'x': ...`; a relative one is taken from
/// the workspace), then every word starting with `/`, cut at the quotes and colons error
/// messages put around them.
fn paths_in(line: &str, workspace: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(before) = DENIED
        .iter()
        .find_map(|d| line.find(&format!(": {d}")).map(|at| &line[..at]))
    {
        let last = before.rsplit(": ").next().unwrap_or(before);
        let quoted = last
            .split(['\'', '‘', '’', '"', '`'])
            .nth(1)
            .filter(|q| !q.is_empty());
        let word = quoted.unwrap_or(last).trim();
        if !word.is_empty() && !word.contains(' ') {
            paths.push(workspace.join(word));
        }
    }
    paths.extend(
        line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '‘' | '’' | ','))
            .filter_map(|word| {
                let word = word.trim_end_matches([':', ')', ']', '.', ';']);
                let word = word.trim_start_matches(['(', '[']);
                word.starts_with('/').then(|| Path::new(word).to_path_buf())
            }),
    );
    paths
}

fn shorten(line: &str) -> String {
    const MAX: usize = 200;
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(network: bool) -> Plan {
        Plan {
            profile: if network {
                Profile::Network
            } else {
                Profile::WorkspaceWrite
            },
            workspace: "/work/ws".into(),
            read: vec!["/usr".into(), "/work".into(), "/home/me/notes".into()],
            read_covered: vec!["/usr".into(), "/work".into(), "/home".into()],
            covers: vec!["/home/me/.ssh".into()],
            listed: Vec::new(),
            racy_until: None,
            write: vec!["/work/ws".into()],
            network,
            temp: None,
            protected: vec!["/home/me/.ssh".into()],
            hidden: vec!["/tmp/tmux-1000".into()],
            read_only: vec!["/work/ws/.airlock/config.toml".into()],
            pinned: vec!["/work/ws/.airlock".into()],
            writable_mounts: vec!["/work/ws".into()],
        }
    }

    #[test]
    fn a_refused_write_to_a_policy_file_is_explained_as_one() {
        let note = explain(
            &plan(false),
            "bash: line 1: /work/ws/.airlock/config.toml: Read-only file system",
        )
        .unwrap();
        assert!(
            note.contains("writing /work/ws/.airlock/config.toml: a file airlock reads as policy"),
            "{note}"
        );
    }

    #[test]
    fn a_covered_protected_place_that_looks_missing_is_a_refused_read_and_a_missing_file_is_not() {
        let output = "cat: /home/me/.ssh/id_rsa: No such file or directory\n\
                      cat: /home/me/notes/gone.txt: No such file or directory\n\
                      ENOENT: no such file or directory, open '/home/me/.ssh/config'\n\
                      ENOENT: no such file or directory, open '/home/me/notes/x'\n";
        assert_eq!(
            refusals(&plan(false), output),
            vec![
                Refusal::Read("/home/me/.ssh/id_rsa".into()),
                Refusal::Read("/home/me/.ssh/config".into())
            ]
        );
    }

    #[test]
    fn a_refused_read_write_and_connection_are_each_named() {
        let output = "cat: /home/me/.ssh/id_rsa: Permission denied\n\
                      bash: line 1: /home/me/x: Permission denied\n\
                      bash: line 2: /dev/tcp/127.0.0.1/4001: Network is unreachable\n\
                      curl: (7) Failed to connect to 127.0.0.1 port 4000 after 0 ms: Couldn't connect to server\n";
        let found = refusals(&plan(false), output);
        assert_eq!(
            found,
            vec![
                Refusal::Read("/home/me/.ssh/id_rsa".into()),
                Refusal::Write("/home/me/x".into()),
                Refusal::Network("bash: line 2: /dev/tcp/127.0.0.1/4001: Network is unreachable".into()),
                Refusal::Network(
                    "curl: (7) Failed to connect to 127.0.0.1 port 4000 after 0 ms: Couldn't connect to server".into()
                ),
            ]
        );
        let note = explain(&plan(false), output).unwrap();
        assert!(note.contains("\"sandbox\": \"network\""), "{note}");
    }

    #[test]
    fn a_permission_error_the_plan_allows_or_a_failed_connection_with_network_is_not_blamed() {
        let output = "touch: cannot touch '/work/ws/ro/f': Permission denied\n\
                      bash: line 1: ro/g: Permission denied\n\
                      curl: (7) Failed to connect to 127.0.0.1 port 4000: Connection refused\n";
        assert_eq!(explain(&plan(true), output), None);
        assert_eq!(explain(&plan(false), "all tests passed\n"), None);
    }
}
