//! Reading the workspace into a manifest: every file, link and directory with its mode and (for
//! a file) its content's hash, its content kept in the store. Incremental: a file whose size,
//! times, inode and mode are those of the last scan is not read again.
//!
//! Never kept: `.git` (a repository's index and history are the user's; undo never touches
//! them), sockets, pipes and devices. Kept by size and time only: files over `Limits::max_file`, and the
//! files of a directory that is build output or ignored by the workspace's `.gitignore` when it
//! holds more than `Limits::bulky_dir` bytes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::objects::Objects;

/// What is kept by size and time only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A file larger than this.
    pub max_file: u64,
    /// The files of a build or ignored directory holding more than this.
    pub bulky_dir: u64,
    /// New content one read keeps at most (a first read of a huge repository does not copy it
    /// all into the state directory): past it, files are kept by size and time only.
    pub new_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file: 128 << 20,
            bulky_dir: 64 << 20,
            new_bytes: 2 << 30,
        }
    }
}
/// Directory names that are build output wherever they are.
const BUILD_DIRS: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    "dist",
    "build",
];

/// What a path is, as undo restores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// `hash`: its content in the store; `None` when it was not kept.
    File {
        mode: u32,
        size: u64,
        hash: Option<String>,
    },
    Link {
        target: String,
    },
    Dir {
        mode: u32,
    },
}

impl Entry {
    pub fn is_dir(&self) -> bool {
        matches!(self, Entry::Dir { .. })
    }
}

/// What says a file is unchanged since it was last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub mode: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub entry: Entry,
    pub stamp: Stamp,
}

/// The workspace at one moment, by relative path (`/`-separated).
pub type Manifest = BTreeMap<String, Item>;

/// Whether two items of one path differ as undo sees them: another entry, or a file whose
/// content was not kept and whose stamp moved.
pub fn differ(a: &Item, b: &Item) -> bool {
    if a.entry != b.entry {
        return true;
    }
    matches!(a.entry, Entry::File { hash: None, .. }) && a.stamp != b.stamp
}

/// What one scan found it could not keep, said once.
#[derive(Debug, Default)]
pub struct Scan {
    pub manifest: Manifest,
    /// Paths it could not read (vanished while read, unreadable, names that are not UTF-8).
    pub skipped: Vec<String>,
}

struct Walk<'a> {
    root: &'a Path,
    previous: &'a Manifest,
    objects: &'a Objects,
    limits: Limits,
    ignore: Option<ignore::gitignore::Gitignore>,
    out: Scan,
    /// New content kept by this walk so far (bytes).
    kept: u64,
    /// Directories found but not walked yet (the root's, shared out between two threads).
    defer: Option<Vec<(PathBuf, String, bool)>>,
}

/// Reads the workspace at `root`; files unchanged since `previous` keep their hash unread.
pub fn scan(root: &Path, previous: &Manifest, objects: &Objects, limits: Limits) -> Scan {
    let ignore = {
        let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
        let file = root.join(".gitignore");
        if file.is_file() && builder.add(&file).is_none() {
            builder.build().ok()
        } else {
            None
        }
    };
    let mut walk = Walk {
        root,
        previous,
        objects,
        limits,
        ignore,
        out: Scan::default(),
        kept: 0,
        defer: Some(Vec::new()),
    };
    walk.dir(root, "", false);
    // The root's directories are walked by two threads (a machine has two cores at least
    // here): most of a read of an unchanged workspace is one `statx` per path.
    let deferred = walk.defer.take().unwrap_or_default();
    let (mine, theirs): (Vec<_>, Vec<_>) = deferred
        .into_iter()
        .enumerate()
        .partition(|(i, _)| i % 2 == 0);
    let mut other = Walk {
        root,
        previous,
        objects,
        limits,
        ignore: walk.ignore.clone(),
        out: Scan::default(),
        // Each of the two threads may keep half the budget of new content.
        kept: limits.new_bytes / 2,
        defer: None,
    };
    walk.kept = walk.kept.max(limits.new_bytes / 2);
    std::thread::scope(|scope| {
        if !theirs.is_empty() {
            scope.spawn(|| {
                for (_, (path, rel, bulky)) in theirs {
                    other.dir(&path, &rel, bulky);
                }
            });
        }
        for (_, (path, rel, bulky)) in mine {
            walk.dir(&path, &rel, bulky);
        }
    });
    walk.out.manifest.append(&mut other.out.manifest);
    walk.out.skipped.append(&mut other.out.skipped);
    walk.out
}

/// A directory's entries: each name (`Err`: not UTF-8, shown lossily) and what `fstatat` said
/// of it (`None`: it could not be looked at).
type Listing = Vec<(Result<String, String>, Option<Meta>)>;

/// What `fstatat` says of one path, as the walk needs it.
struct Meta {
    kind: u32,
    mode: u32,
    size: u64,
    stamp: Stamp,
}

impl Meta {
    fn of(st: &nix::sys::stat::FileStat) -> Meta {
        let size = u64::try_from(st.st_size).unwrap_or(0);
        Meta {
            kind: st.st_mode & nix::sys::stat::SFlag::S_IFMT.bits(),
            mode: st.st_mode,
            size,
            stamp: Stamp {
                size,
                mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec,
                ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
                ino: st.st_ino,
                mode: st.st_mode,
            },
        }
    }

    fn is(&self, kind: nix::sys::stat::SFlag) -> bool {
        self.kind == kind.bits()
    }
}

/// The entries of directory `dir`, each with what `fstatat` says of it, looked up from the
/// directory's descriptor (a path lookup from the root for each entry cost a third of a read).
/// Never follows a link, the directory's own included.
/// A name that is not UTF-8 comes as `Err` (shown lossily): it cannot be a manifest key.
fn entries_of(dir: &Path) -> nix::Result<Listing> {
    use nix::fcntl::{AtFlags, OFlag};
    let fd = nix::fcntl::open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
        nix::sys::stat::Mode::empty(),
    )?;
    let mut listing = nix::dir::Dir::from_fd(nix::unistd::dup(&fd)?)?;
    let mut out = Vec::new();
    for entry in listing.iter() {
        let entry = entry?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let meta = nix::sys::stat::fstatat(&fd, name, AtFlags::AT_SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| Meta::of(&st));
        let name = match std::str::from_utf8(bytes) {
            Ok(name) => Ok(name.to_string()),
            Err(_) => Err(String::from_utf8_lossy(bytes).into_owned()),
        };
        out.push((name, meta));
    }
    Ok(out)
}

impl Walk<'_> {
    /// Walks directory `dir` (`rel` to the root); `bulky`: its files are kept by stamp only.
    fn dir(&mut self, dir: &Path, rel: &str, bulky: bool) {
        let Ok(entries) = entries_of(dir) else {
            if !rel.is_empty() {
                self.out.skipped.push(rel.to_string());
            }
            return;
        };
        let mut found: Vec<(String, Meta)> = Vec::with_capacity(entries.len());
        for (name, meta) in entries {
            let child_rel = |name: &str| {
                if rel.is_empty() {
                    name.to_string()
                } else {
                    format!("{rel}/{name}")
                }
            };
            match (name, meta) {
                (Ok(name), _) if name == ".git" => {}
                (Ok(name), Some(meta)) => found.push((child_rel(&name), meta)),
                (Ok(name) | Err(name), _) => self.out.skipped.push(child_rel(&name)),
            }
        }
        use nix::sys::stat::SFlag;
        for (child, meta) in found {
            let stamp = meta.stamp;
            let path = || dir.join(name_of(&child));
            if meta.is(SFlag::S_IFDIR) {
                let path = path();
                let bulky = bulky
                    || (self.build_or_ignored(&path, name_of(&child))
                        && was_bulky(self.previous, &child)
                            .unwrap_or_else(|| too_big(&path, self.limits.bulky_dir)));
                self.out.manifest.insert(
                    child.clone(),
                    Item {
                        entry: Entry::Dir {
                            mode: meta.mode & 0o7777,
                        },
                        stamp: Stamp {
                            mtime_ns: 0,
                            ctime_ns: 0,
                            size: 0,
                            ..stamp
                        },
                    },
                );
                match self.defer.as_mut() {
                    Some(later) => later.push((path, child, bulky)),
                    None => self.dir(&path, &child, bulky),
                }
            } else if meta.is(SFlag::S_IFLNK) {
                match fs::read_link(path())
                    .ok()
                    .and_then(|t| t.to_str().map(str::to_string))
                {
                    Some(target) => {
                        self.out.manifest.insert(
                            child,
                            Item {
                                entry: Entry::Link { target },
                                stamp: Stamp::default(),
                            },
                        );
                    }
                    None => self.out.skipped.push(child),
                }
            } else if meta.is(SFlag::S_IFREG) {
                let hash = if bulky || meta.size > self.limits.max_file {
                    None
                } else {
                    match self.previous.get(&child) {
                        Some(Item {
                            entry: Entry::File { hash: Some(h), .. },
                            stamp: was,
                        }) if *was == stamp => Some(h.clone()),
                        // Not kept before and unchanged: still not kept (a read never goes on
                        // copying, piece by piece, what an earlier one left out).
                        Some(Item {
                            entry: Entry::File { hash: None, .. },
                            stamp: was,
                        }) if *was == stamp => None,
                        _ if self.kept + meta.size > self.limits.new_bytes => None,
                        _ => match self.objects.put(&path(), meta.size) {
                            Ok(h) => {
                                self.kept += meta.size;
                                Some(h)
                            }
                            Err(_) => {
                                self.out.skipped.push(child);
                                continue;
                            }
                        },
                    }
                };
                self.out.manifest.insert(
                    child,
                    Item {
                        entry: Entry::File {
                            mode: meta.mode & 0o7777,
                            size: meta.size,
                            hash,
                        },
                        stamp,
                    },
                );
            }
        }
    }

    fn build_or_ignored(&self, path: &Path, name: &str) -> bool {
        BUILD_DIRS.contains(&name)
            || self.ignore.as_ref().is_some_and(|g| {
                path.strip_prefix(self.root)
                    .is_ok_and(|rel| g.matched(rel, true).is_ignore())
            })
    }
}

fn name_of(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Whether the last scan kept the files under `dir` by stamp only (`None`: it had none).
fn was_bulky(previous: &Manifest, dir: &str) -> Option<bool> {
    let prefix = format!("{dir}/");
    previous
        .range(prefix.clone()..)
        .take_while(|(path, _)| path.starts_with(&prefix))
        .find_map(|(_, item)| match &item.entry {
            Entry::File { hash, .. } => Some(hash.is_none()),
            _ => None,
        })
}

/// Whether the files under `dir` hold more than `limit` bytes (stops counting there).
fn too_big(dir: &Path, limit: u64) -> bool {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
                if total > limit {
                    return true;
                }
            }
        }
    }
    false
}
