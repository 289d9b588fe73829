//! The file tools: read, list, search, write, edit. Paths are taken as the policy judged them:
//! relative to the workspace, `~` as the home directory, no other expansion.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ToolError, ToolOutcome};

pub fn resolve(workspace: &Path, home: &Path, raw: &str) -> PathBuf {
    if raw == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.join(rest);
    }
    workspace.join(raw)
}

pub fn string<'a>(args: &'a Value, key: &str, tool: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments(format!("`{tool}` needs a string `{key}`")))
}

/// Largest file `read_file` returns in full; beyond it, the head and a note.
pub const MAX_READ_BYTES: usize = 256 * 1024;

pub fn read_file(workspace: &Path, home: &Path, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "read_file")?;
    let path = resolve(workspace, home, raw);
    let (file, size) = open_regular(&path, raw)?;
    let mut bytes = Vec::with_capacity(size.min(MAX_READ_BYTES as u64) as usize);
    // Read no more than is shown: a file that grows while it is read cannot grow the read.
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::Io(format!("cannot read {raw}: {e}")))?;
    let shown = &bytes[..bytes.len().min(MAX_READ_BYTES)];
    let mut text = String::from_utf8_lossy(shown).into_owned();
    if bytes.len() > MAX_READ_BYTES {
        let total = size.max(bytes.len() as u64);
        text.push_str(&format!(
            "\n… {} more bytes not shown (file is {} bytes)\n",
            total - MAX_READ_BYTES as u64,
            total
        ));
    }
    Ok(ToolOutcome::text(text))
}

/// Largest file `edit_file` reads to change.
pub const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;

/// Opens a file only if it is a regular file. A terminal, FIFO, socket or device would block the
/// tool (a FIFO waits for a writer, `/dev/tty` swallows the cockpit's keys) or never end
/// (`/dev/zero`), so they are refused before anything is read; `O_NONBLOCK` keeps the open itself
/// from waiting on a FIFO.
fn open_regular(path: &Path, raw: &str) -> Result<(std::fs::File, u64), ToolError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|e| ToolError::Io(format!("cannot read {raw}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::Io(format!("cannot read {raw}: {e}")))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory (use list_dir)"
        } else {
            "not a regular file (a terminal, FIFO, socket or device)"
        };
        return Err(ToolError::Failed(format!(
            "{raw} is {kind}: the file tools read and change regular files only"
        )));
    }
    Ok((file, meta.len()))
}

pub fn list_dir(workspace: &Path, home: &Path, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let path = resolve(workspace, home, raw);
    let mut entries: Vec<String> = std::fs::read_dir(&path)
        .map_err(|e| ToolError::Io(format!("cannot list {raw}: {e}")))?
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(t) if t.is_dir() => format!("{name}/"),
                Ok(t) if t.is_symlink() => format!("{name}@"),
                _ => name,
            }
        })
        .collect();
    entries.sort();
    Ok(ToolOutcome::text(entries.join("\n") + "\n"))
}

/// Most matches `search` reports.
pub const MAX_MATCHES: usize = 200;

pub fn search(workspace: &Path, home: &Path, args: &Value) -> Result<ToolOutcome, ToolError> {
    let pattern = string(args, "pattern", "search")?;
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let root = resolve(workspace, home, raw);
    let regex = regex::Regex::new(pattern).map_err(|e| {
        ToolError::InvalidArguments(format!(
            "`{pattern}` is not a valid regular expression: {e}"
        ))
    })?;
    let mut out = String::new();
    let mut matches = 0usize;
    let mut more = false;
    for entry in ignore::WalkBuilder::new(&root)
        .hidden(false)
        .build()
        .flatten()
    {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let shown = entry
            .path()
            .strip_prefix(workspace)
            .unwrap_or(entry.path())
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if matches == MAX_MATCHES {
                    more = true;
                    break;
                }
                matches += 1;
                out.push_str(&format!("{shown}:{}: {line}\n", number + 1));
            }
        }
        if more {
            break;
        }
    }
    if more {
        out.push_str(&format!(
            "… more than {MAX_MATCHES} matches; narrow the pattern or path\n"
        ));
    } else if matches == 0 {
        out.push_str("no matches\n");
    }
    Ok(ToolOutcome::text(out))
}

/// The new content an edit produces, or why it cannot be applied.
pub fn apply_edit(
    current: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, String> {
    if old.is_empty() {
        return Err("`old` is empty; give the exact text to replace".into());
    }
    let count = current.matches(old).count();
    match (count, replace_all) {
        (0, _) => Err("the text to replace was not found in the file; read the file again and copy the text exactly".into()),
        (1, _) | (_, true) => Ok(current.replace(old, new)),
        (n, false) => Err(format!(
            "the text to replace appears {n} times; include more surrounding text to make it unique, or set replace_all"
        )),
    }
}

/// Writes atomically: a temporary file in the same directory, then a rename, so a crash never
/// leaves a half-written file.
pub fn write_atomic(path: &Path, content: &str) -> Result<(), ToolError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| ToolError::Io(format!("cannot create {}: {e}", dir.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.airlock-{}.tmp", std::process::id()));
    std::fs::write(&tmp, content)
        .map_err(|e| ToolError::Io(format!("cannot write {}: {e}", path.display())))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ToolError::Io(format!("cannot replace {}: {e}", path.display()))
    })
}

pub fn write_file(workspace: &Path, home: &Path, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "write_file")?;
    let content = string(args, "content", "write_file")?;
    let path = resolve(workspace, home, raw);
    let existed = path.exists();
    write_atomic(&path, content)?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(ToolOutcome::text(format!(
        "{verb} {raw} ({} lines)\n",
        content.lines().count()
    )))
}

pub fn edit_file(workspace: &Path, home: &Path, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "edit_file")?;
    let old = string(args, "old", "edit_file")?;
    let new = string(args, "new", "edit_file")?;
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let path = resolve(workspace, home, raw);
    let (file, size) = open_regular(&path, raw)?;
    if size > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "{raw} is {size} bytes; edit_file changes files up to {MAX_EDIT_BYTES} bytes (use bash with a streaming tool such as sed for bigger ones)"
        )));
    }
    let mut current = String::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_string(&mut current)
        .map_err(|e| ToolError::Io(format!("cannot read {raw}: {e}")))?;
    let updated = apply_edit(&current, old, new, replace_all)
        .map_err(|why| ToolError::Failed(format!("{raw}: {why}")))?;
    write_atomic(&path, &updated)?;
    Ok(ToolOutcome::text(format!("edited {raw}\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_replaces_one_exact_occurrence_and_refuses_ambiguity() {
        assert_eq!(apply_edit("a b a", "b", "c", false).unwrap(), "a c a");
        assert!(
            apply_edit("a b a", "a", "c", false)
                .unwrap_err()
                .contains("2 times")
        );
        assert_eq!(apply_edit("a b a", "a", "c", true).unwrap(), "c b c");
        assert!(
            apply_edit("abc", "x", "y", false)
                .unwrap_err()
                .contains("not found")
        );
        assert!(apply_edit("abc", "", "y", false).is_err());
    }

    #[test]
    fn writes_are_atomic_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn search_respects_gitignore_and_reports_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/x.rs"), "fn needle() {}\n").unwrap();
        std::fs::write(dir.path().join("a.rs"), "// hay\nfn needle() {}\n").unwrap();
        let out = search(
            dir.path(),
            dir.path(),
            &serde_json::json!({"pattern": "needle"}),
        )
        .unwrap();
        assert_eq!(out.content, "a.rs:2: fn needle() {}\n");
    }

    #[test]
    fn read_file_refuses_a_fifo_a_device_and_a_directory_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for raw in ["pipe", "/dev/zero", "/dev/null", "."] {
            let err = read_file(dir.path(), dir.path(), &serde_json::json!({"path": raw}))
                .unwrap_err()
                .to_string();
            assert!(err.contains("regular files only"), "{raw}: {err}");
        }
    }

    #[test]
    fn edit_file_refuses_a_fifo_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        nix::unistd::mkfifo(&dir.path().join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let args = serde_json::json!({"path": "pipe", "old": "a", "new": "b"});
        let err = edit_file(dir.path(), dir.path(), &args)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn read_file_reads_only_what_it_shows_of_a_big_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![b'x'; MAX_READ_BYTES + 10]).unwrap();
        let out = read_file(dir.path(), dir.path(), &serde_json::json!({"path": "big"})).unwrap();
        assert!(out.content.ends_with(&format!(
            "… 10 more bytes not shown (file is {} bytes)\n",
            MAX_READ_BYTES + 10
        )));
    }
}
