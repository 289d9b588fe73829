//! The file tools: read, list, search, write, edit.
//!
//! Each works on the physical path the gate judged for its call (`Approved::judged_path`), never
//! on its argument resolved again: by the time a call runs (a human took a minute, a parked run
//! resumed the next day) a directory on the way may have become a symlink. `held` walks the
//! judged path without following links, so what was judged is what is touched, or nothing is.
//! The argument as the model wrote it is kept for messages.

mod held;

use std::io::Read;
use std::path::Path;

use nix::sys::stat::SFlag;
use serde_json::Value;

use super::{ToolError, ToolOutcome};
use held::{Judged, Verb};

pub fn string<'a>(args: &'a Value, key: &str, tool: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments(format!("`{tool}` needs a string `{key}`")))
}

/// Where a file tool works: the physical path the gate judged for this call, and the workspace
/// (paths inside it are shown relative to it).
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub workspace: &'a Path,
    pub judged: &'a Path,
}

impl<'a> Place<'a> {
    fn judged(self, raw: &'a str, verb: Verb) -> Judged<'a> {
        Judged {
            path: self.judged,
            raw,
            workspace: self.workspace,
            verb,
        }
    }
}

/// Largest file `read_file` returns in full; beyond it, the head and a note.
pub const MAX_READ_BYTES: usize = 256 * 1024;

pub fn read_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "read_file")?;
    let held = place.judged(raw, Verb::Read).hold(false)?;
    let (file, size) = held.open_regular()?;
    let mut bytes = Vec::with_capacity(size.min(MAX_READ_BYTES as u64) as usize);
    // Read no more than is shown: a file that grows while it is read cannot grow the read.
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| held.judged.cannot(e))?;
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

/// The text of the judged file, as `edit_file` would read it, for a preview: `Err` says why
/// there is none (not a regular file, larger than `max` bytes, a link, unreadable).
pub fn current_text(place: Place, raw: &str, max: u64) -> Result<String, String> {
    let held = place
        .judged(raw, Verb::Read)
        .hold(false)
        .map_err(|e| e.to_string())?;
    let (file, size) = held.open_regular().map_err(|e| e.to_string())?;
    if size > max {
        return Err(format!(
            "{raw} is {size} bytes, larger than an edit can be previewed ({max} bytes)"
        ));
    }
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| held.judged.cannot(e).to_string())?;
    Ok(text)
}

/// Largest file `edit_file` reads to change.
pub const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;

pub fn list_dir(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    use nix::dir::Type;
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let held = place.judged(raw, Verb::List).hold(false)?;
    let mut dir = nix::dir::Dir::from_fd(held.open_dir_to_read()?)
        .map_err(|e| held.judged.cannot(std::io::Error::from(e)))?;
    let mut found = Vec::new();
    for entry in dir.iter() {
        let entry = entry.map_err(|e| held.judged.cannot(std::io::Error::from(e)))?;
        let name = entry.file_name().to_owned();
        if name.as_bytes() == b"." || name.as_bytes() == b".." {
            continue;
        }
        found.push((name, entry.file_type()));
    }
    let mut entries: Vec<String> = found
        .into_iter()
        .map(|(name, kind)| {
            // Some filesystems do not say in the listing: ask, without following a link.
            let kind = kind.or_else(|| {
                nix::sys::stat::fstatat(
                    &dir,
                    name.as_c_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .ok()
                .map(|stat| match held::kind(&stat) {
                    SFlag::S_IFDIR => Type::Directory,
                    SFlag::S_IFLNK => Type::Symlink,
                    _ => Type::File,
                })
            });
            let name = name.to_string_lossy().into_owned();
            match kind {
                Some(Type::Directory) => format!("{name}/"),
                Some(Type::Symlink) => format!("{name}@"),
                _ => name,
            }
        })
        .collect();
    entries.sort();
    Ok(ToolOutcome::text(entries.join("\n") + "\n"))
}

/// Most matches `search` reports.
pub const MAX_MATCHES: usize = 200;

/// Searches the judged path (a file, or a directory walked with `.gitignore` honoured). The walk
/// lists names; every file is then opened from the held directory without following a link, so
/// a directory swapped for a symlink while the search runs is skipped, not searched.
pub fn search(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let pattern = string(args, "pattern", "search")?;
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let regex = regex::Regex::new(pattern).map_err(|e| {
        ToolError::InvalidArguments(format!(
            "`{pattern}` is not a valid regular expression: {e}"
        ))
    })?;
    let judged = place.judged(raw, Verb::Search);
    let held = judged.hold(false)?;
    let mut found = Matches::default();
    let is_dir = held
        .stat()?
        .is_some_and(|stat| held::kind(&stat) == SFlag::S_IFDIR);
    if is_dir {
        for entry in ignore::WalkBuilder::new(place.judged)
            .hidden(false)
            .build()
            .flatten()
        {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(place.judged) else {
                continue;
            };
            let Ok(Some(file)) = held.open_below(rel) else {
                continue;
            };
            if found.search(&judged.shown(entry.path()), file, &regex) {
                break;
            }
        }
    } else {
        // One file: a missing path or a FIFO is an error worth telling, not "no matches".
        let (file, _) = held.open_regular()?;
        found.search(&judged.shown(place.judged), file, &regex);
    }
    Ok(ToolOutcome::text(found.report()))
}

/// What `search` found so far.
#[derive(Default)]
struct Matches {
    out: String,
    count: usize,
    more: bool,
}

impl Matches {
    /// Adds the matching lines of one file; true once there are more than can be shown.
    fn search(&mut self, shown: &str, mut file: std::fs::File, regex: &regex::Regex) -> bool {
        let mut text = String::new();
        if file.read_to_string(&mut text).is_err() {
            return false;
        }
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if self.count == MAX_MATCHES {
                    self.more = true;
                    return true;
                }
                self.count += 1;
                self.out
                    .push_str(&format!("{shown}:{}: {line}\n", number + 1));
            }
        }
        false
    }

    fn report(mut self) -> String {
        if self.more {
            self.out.push_str(&format!(
                "… more than {MAX_MATCHES} matches; narrow the pattern or path\n"
            ));
        } else if self.count == 0 {
            self.out.push_str("no matches\n");
        }
        self.out
    }
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

/// Writes the file whole, atomically (a temporary file, then a rename), creating missing
/// directories on the way; an existing file keeps its permissions.
pub fn write_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "write_file")?;
    let content = string(args, "content", "write_file")?;
    let held = place.judged(raw, Verb::Write).hold(true)?;
    let existed = held.replace(content.as_bytes())?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(ToolOutcome::text(format!(
        "{verb} {raw} ({} lines)\n",
        content.lines().count()
    )))
}

/// Replaces one exact piece of text (or every occurrence), reading and writing the file in the
/// same held directory.
pub fn edit_file(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    let raw = string(args, "path", "edit_file")?;
    let old = string(args, "old", "edit_file")?;
    let new = string(args, "new", "edit_file")?;
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let held = place.judged(raw, Verb::Edit).hold(false)?;
    let (file, size) = held.open_regular()?;
    if size > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "{raw} is {size} bytes; edit_file changes files up to {MAX_EDIT_BYTES} bytes (use bash with a streaming tool such as sed for bigger ones)"
        )));
    }
    let mut current = String::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_string(&mut current)
        .map_err(|e| held.judged.cannot(e))?;
    let updated = apply_edit(&current, old, new, replace_all)
        .map_err(|why| ToolError::Failed(format!("{raw}: {why}")))?;
    held.replace(updated.as_bytes())?;
    Ok(ToolOutcome::text(format!("edited {raw}\n")))
}

#[cfg(test)]
mod tests;
