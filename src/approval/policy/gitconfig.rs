//! Git settings in a repository that make git run programs.
//!
//! `git status`, `git diff` and `git log -p` only read, unless the repository's own config tells
//! git to run something on the way: `core.fsmonitor` runs a program on `git status`,
//! `diff.external` on `git diff`, a `diff.<driver>.textconv` named by `.gitattributes` on
//! `git log -p` and `git show`, a `filter.<driver>` on any command that compares the worktree.
//! A workspace's `.git/config` came with the workspace (a tarball, a clone made by a script, the
//! agent's own earlier edit), so it is not the user's word the way `~/.gitconfig` is. Before a
//! git command is let through as read-only, the repository's config (and every file it
//! includes) is read, and each program-running setting found is a reason to ask.
//!
//! The alternative, running git with those settings overridden (`-c core.fsmonitor=`), would
//! change the command the person approved, so airlock asks instead and names the setting.

use std::path::{Path, PathBuf};

/// How deep `include.path` chains are followed before giving up (and asking).
const MAX_INCLUDE_DEPTH: usize = 8;
/// A config file bigger than this is not parsed; it asks.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// One program-running setting: `key` as git spells it (`diff.pdf.textconv`), and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramSetting {
    pub key: String,
    pub value: String,
    pub file: PathBuf,
}

/// What was found for the repository around `dir`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub settings: Vec<ProgramSetting>,
    /// A config that could not be read whole (too big, unreadable, includes too deep).
    pub unreadable: Option<String>,
}

/// Whether `section.sub.key` names a setting that makes git run a program. Keys are
/// lowercased, subsections kept.
fn runs_program(section: &str, sub: Option<&str>, key: &str, value: &str) -> bool {
    match (section, sub, key) {
        ("core", None, "fsmonitor") => !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "" | "0" | "1" | "yes" | "no" | "on" | "off"
        ),
        (
            "core",
            None,
            "pager" | "editor" | "sshcommand" | "askpass" | "gitproxy" | "hookspath",
        ) => true,
        ("sequence", None, "editor") => true,
        ("diff", None, "external") => true,
        ("diff", Some(_), "textconv" | "command") => true,
        ("filter", Some(_), "clean" | "smudge" | "process") => true,
        ("merge", Some(_), "driver") => true,
        ("pager", Some(_) | None, _) if section == "pager" => !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "" | "0" | "1" | "yes" | "no" | "on" | "off"
        ),
        ("gpg", _, "program") => true,
        ("credential", _, "helper") => true,
        ("difftool" | "mergetool", Some(_), "cmd") => true,
        ("uploadpack", None, "packobjectshook") => true,
        ("remote", Some(_), "uploadpack" | "receivepack") => true,
        ("alias", None, _) => value.trim_start().starts_with('!'),
        _ => false,
    }
}

/// The git directory of the repository that contains `dir`, if any: the nearest `.git`
/// directory, or the one a `.git` file points at (`gitdir: …`, worktrees and submodules).
pub fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    for ancestor in dir.ancestors() {
        let dot_git = ancestor.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dot_git);
        }
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        return Some(ancestor.join(target));
    }
    None
}

/// Every program-running setting in the config of the repository around `dir` (its own
/// `config`, a worktree's common `config`, and every file they include).
pub fn program_settings(dir: &Path) -> Findings {
    let mut findings = Findings::default();
    let Some(git_dir) = git_dir_of(dir) else {
        return findings;
    };
    // `config.worktree` is read too when `extensions.worktreeConfig` is set; reading it always
    // can only find more.
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        files.push(git_dir.join(common.trim()).join("config"));
    }
    for file in files {
        read_config(&file, 0, &mut findings);
    }
    findings
}

fn read_config(file: &Path, depth: usize, findings: &mut Findings) {
    if depth > MAX_INCLUDE_DEPTH {
        findings.unreadable = Some(format!(
            "{} is included more than {MAX_INCLUDE_DEPTH} levels deep",
            file.display()
        ));
        return;
    }
    let meta = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            findings.unreadable = Some(format!("cannot read {}: {e}", file.display()));
            return;
        }
    };
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        findings.unreadable = Some(format!(
            "{} is not a regular file of at most 1 MiB",
            file.display()
        ));
        return;
    }
    let text = match std::fs::read(file) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            findings.unreadable = Some(format!("cannot read {}: {e}", file.display()));
            return;
        }
    };
    let mut section = String::new();
    let mut sub: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let mut rest = line;
        if let Some(header) = rest.strip_prefix('[') {
            let Some(close) = header.find(']') else {
                continue;
            };
            let inside = &header[..close];
            rest = header[close + 1..].trim();
            match inside.split_once(char::is_whitespace) {
                Some((name, subsection)) => {
                    section = name.to_ascii_lowercase();
                    sub = Some(subsection.trim().trim_matches('"').to_string());
                }
                // `[diff.pdf]`, the old spelling of a subsection.
                None => match inside.split_once('.') {
                    Some((name, subsection)) => {
                        section = name.to_ascii_lowercase();
                        sub = Some(subsection.to_string());
                    }
                    None => {
                        section = inside.to_ascii_lowercase();
                        sub = None;
                    }
                },
            }
            if rest.is_empty() {
                continue;
            }
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), unquote(v.trim())),
            None => (rest.trim().to_ascii_lowercase(), "true".to_string()),
        };
        if (section == "include" || section == "includeif") && key == "path" {
            let included = expand_include(file, &value);
            read_config(&included, depth + 1, findings);
            continue;
        }
        if runs_program(&section, sub.as_deref(), &key, &value) {
            let key = match &sub {
                Some(s) => format!("{section}.{s}.{key}"),
                None => format!("{section}.{key}"),
            };
            findings.settings.push(ProgramSetting {
                key,
                value,
                file: file.to_path_buf(),
            });
        }
    }
}

fn unquote(value: &str) -> String {
    let value = value
        .split_once(" #")
        .map(|(v, _)| v)
        .unwrap_or(value)
        .trim();
    value.trim_matches('"').to_string()
}

fn expand_include(config: &Path, path: &str) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/") {
        return crate::facts::paths::home_dir().join(rest);
    }
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        config.parent().unwrap_or(Path::new("/")).join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), config).unwrap();
        dir
    }

    fn keys(dir: &Path) -> Vec<String> {
        program_settings(dir)
            .settings
            .into_iter()
            .map(|s| s.key)
            .collect()
    }

    #[test]
    fn program_running_settings_are_found_in_every_spelling() {
        let dir = repo(
            "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ./watch.sh\n\
             [diff]\n\texternal = ./d.sh\n\
             [diff \"pdf\"]\n\ttextconv = ./conv.sh\n\
             [filter.lfs]\n\tsmudge = ./s.sh\n\
             [alias]\n\tst = status\n\tevil = !sh -c x\n\
             [CORE] PAGER = less\n",
        );
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        assert_eq!(
            keys(&dir.path().join("src")),
            [
                "core.fsmonitor",
                "diff.external",
                "diff.pdf.textconv",
                "filter.lfs.smudge",
                "alias.evil",
                "core.pager"
            ]
        );
    }

    #[test]
    fn an_ordinary_config_has_none() {
        let dir = repo(
            "[core]\n\tbare = false\n\tfsmonitor = false\n[remote \"origin\"]\n\turl = https://x/y.git\n\
             [branch \"main\"]\n\tremote = origin\n",
        );
        assert!(keys(dir.path()).is_empty());
    }

    #[test]
    fn included_files_are_read_too() {
        let dir = repo("[include]\n\tpath = extra.cfg\n");
        std::fs::write(
            dir.path().join(".git/extra.cfg"),
            "[core]\n\tfsmonitor = \"./w.sh\"\n",
        )
        .unwrap();
        assert_eq!(keys(dir.path()), ["core.fsmonitor"]);
    }

    #[test]
    fn a_git_file_pointing_elsewhere_is_followed() {
        let real = repo("[diff]\n\texternal = ./d.sh\n");
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(
            worktree.path().join(".git"),
            format!("gitdir: {}\n", real.path().join(".git").display()),
        )
        .unwrap();
        assert_eq!(keys(worktree.path()), ["diff.external"]);
    }

    #[test]
    fn a_worktree_config_is_read_too() {
        let dir = repo("[extensions]\n\tworktreeConfig = true\n");
        std::fs::write(
            dir.path().join(".git/config.worktree"),
            "[core]\n\tfsmonitor = ./w.sh\n",
        )
        .unwrap();
        assert_eq!(keys(dir.path()), ["core.fsmonitor"]);
    }

    #[test]
    fn an_include_loop_is_reported_not_followed_forever() {
        let dir = repo("[include]\n\tpath = config\n");
        assert!(program_settings(dir.path()).unreadable.is_some());
    }
}
