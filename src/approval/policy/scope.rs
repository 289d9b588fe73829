//! What "allow for session" covers for one simple command: the program and its subcommand
//! (`cargo test`, `git push`, `npm run build`), never a bare multi-purpose program like `git`.

/// Programs whose first word after options picks what they do; a grant must name that word.
/// Each comes with its global options that take a separate value.
const MULTI_PURPOSE: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
        ],
    ),
    (
        "cargo",
        &["--config", "-Z", "--color", "-C", "--manifest-path"],
    ),
    ("npm", &["--prefix", "-w", "--workspace"]),
    ("pnpm", &["-C", "--dir", "--filter", "-F"]),
    ("yarn", &["--cwd"]),
    ("bun", &["--cwd"]),
    ("go", &["-C"]),
    (
        "docker",
        &[
            "-H",
            "--host",
            "--context",
            "-c",
            "--config",
            "-l",
            "--log-level",
        ],
    ),
    ("podman", &["--url", "--connection"]),
    (
        "kubectl",
        &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "-s",
            "--server",
            "--cluster",
            "--user",
        ],
    ),
    ("helm", &["-n", "--namespace", "--kube-context"]),
    ("gh", &["-R", "--repo"]),
    ("aws", &["--profile", "--region", "--output"]),
    ("gcloud", &["--project", "--account"]),
    ("pip", &[]),
    ("pip3", &[]),
    ("uv", &["--directory", "--project"]),
    ("poetry", &["-C", "--directory"]),
    ("python", &["-m", "-W", "-X"]),
    ("python3", &["-m", "-W", "-X"]),
    ("node", &["-r", "--require", "--import", "--loader"]),
    ("deno", &[]),
    ("ruby", &["-r", "-I"]),
    ("perl", &["-I", "-M"]),
    ("bash", &["-o", "-O", "--rcfile"]),
    ("sh", &["-o"]),
    ("zsh", &["-o"]),
    (
        "make",
        &["-C", "-f", "--file", "--directory", "-j", "-l", "-o", "-W"],
    ),
    ("just", &["-f", "--justfile", "-d", "--working-directory"]),
    ("systemctl", &[]),
    ("rustup", &["--toolchain"]),
    ("terraform", &["-chdir"]),
    ("mvn", &["-f", "-P", "-pl"]),
    ("gradle", &["-p", "-b"]),
    ("dotnet", &[]),
    ("npx", &["-p", "--package"]),
    ("curl", &[]),
    ("wget", &[]),
    (
        "ssh",
        &["-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D"],
    ),
];

/// Package-manager subcommands whose next word names what runs (`npm run build`).
const RUNNERS: &[&str] = &["run", "run-script", "exec", "x", "dlx", "test-script"];

/// The grant prefix for one literal argv, or `None` when no safe prefix exists.
pub fn command_prefix(argv: &[String]) -> Option<Vec<String>> {
    let program = argv.first()?;
    let Some((_, value_opts)) = MULTI_PURPOSE.iter().find(|(p, _)| p == program) else {
        // A single-purpose program: everything up to its first operand.
        let end = argv
            .iter()
            .skip(1)
            .position(|a| !a.starts_with('-'))
            .map(|i| i + 2)
            .unwrap_or(argv.len());
        return Some(argv[..end].to_vec());
    };
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if program == "cargo" && a.starts_with('+') {
            i += 1;
            continue;
        }
        if !a.starts_with('-') {
            break;
        }
        if a == "-m" && program.starts_with("python") {
            // `python -m pytest`: the module is what runs.
            return (i + 1 < argv.len()).then(|| argv[..i + 2].to_vec());
        }
        if value_opts.contains(&a.as_str()) {
            i += 2;
        } else if a.contains('=') || a.starts_with("--") || a.len() == 2 {
            // A flag, or an option with its value attached.
            i += 1;
        } else {
            // `-xyz`: a cluster whose last letter may take the next word. Not safe to scope.
            return None;
        }
    }
    let sub = argv.get(i)?;
    let mut end = i + 1;
    let is_package_manager = matches!(
        program.as_str(),
        "npm" | "pnpm" | "yarn" | "bun" | "uv" | "poetry"
    );
    if is_package_manager && RUNNERS.contains(&sub.as_str()) {
        let next = argv[end..].iter().position(|a| !a.starts_with('-'))?;
        end += next + 1;
    }
    let _ = sub;
    Some(argv[..end].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix(s: &str) -> Option<String> {
        let argv: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        command_prefix(&argv).map(|p| p.join(" "))
    }

    #[test]
    fn grants_name_the_subcommand_never_a_bare_multi_purpose_program() {
        assert_eq!(
            prefix("cargo test --release").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            prefix("cargo +nightly test").as_deref(),
            Some("cargo +nightly test")
        );
        assert_eq!(
            prefix("git -C sub push origin").as_deref(),
            Some("git -C sub push")
        );
        assert_eq!(
            prefix("npm run build -- --watch").as_deref(),
            Some("npm run build")
        );
        assert_eq!(
            prefix("python3 -m pytest -x").as_deref(),
            Some("python3 -m pytest")
        );
        assert_eq!(
            prefix("python3 script.py arg").as_deref(),
            Some("python3 script.py")
        );
        assert_eq!(prefix("git"), None);
        assert_eq!(prefix("git --no-pager"), None);
        assert_eq!(prefix("curl -sSLo out https://x"), None);
        assert_eq!(
            prefix("pytest -x tests/unit").as_deref(),
            Some("pytest -x tests/unit")
        );
        assert_eq!(prefix("./run.sh fast").as_deref(), Some("./run.sh fast"));
    }
}
