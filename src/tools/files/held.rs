//! Opening exactly the path the gate judged, and nothing a later swap puts in its place.
//!
//! The gate judged a physical path: every symlink on the way already followed, so the path it
//! hands over (`Approved::judged_path`) has none. Opening it by name would follow whatever link
//! appeared since (a directory `sub` replaced by a link to `/home/me/.ssh` between the judgement
//! and the write), so nothing here opens a path by name. The walk starts at `/` and opens one
//! component at a time with `openat(dir, name, O_NOFOLLOW)`, holding each directory open while
//! it looks up the next; the last component is opened (or replaced) relative to the held
//! directory, again without following. A component that became a symlink makes the tool refuse,
//! saying which one, and touch nothing.
//!
//! Writes go through a temporary file created in the held directory (`O_CREAT|O_EXCL|
//! O_NOFOLLOW`) and renamed over the last name in that same directory (`renameat`), so a write is
//! atomic and lands in the directory that was walked, whatever happens to the names around it.
//! Missing directories are created with `mkdirat` under the held one, never following a link.
//! A last name that is a symlink is refused, not replaced; one that turns into a link in the
//! instant between that check and the rename is replaced by the new file (`rename` never follows
//! a link), so even then nothing outside the held directory is touched.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::output::ToolError;

/// How directories on the way are opened: only to look names up in them.
#[cfg(any(target_os = "linux", target_os = "android"))]
const LOOKUP: OFlag = OFlag::O_PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const LOOKUP: OFlag = OFlag::O_RDONLY;

/// What a file tool does with its path, for its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Read,
    List,
    Search,
    Write,
    Edit,
}

impl Verb {
    fn doing(self) -> &'static str {
        match self {
            Verb::Read => "read",
            Verb::List => "list",
            Verb::Search => "search",
            Verb::Write => "write",
            Verb::Edit => "edit",
        }
    }

    fn nothing(self) -> &'static str {
        match self {
            Verb::Read => "nothing was read",
            Verb::List => "nothing was listed",
            Verb::Search => "nothing was searched",
            Verb::Write => "nothing was written",
            Verb::Edit => "nothing was changed",
        }
    }
}

/// A file tool's call on its judged path: the path, the argument as the model wrote it and the
/// workspace (both for messages), and what the tool is doing.
#[derive(Debug, Clone, Copy)]
pub struct Judged<'a> {
    pub path: &'a Path,
    pub raw: &'a str,
    pub workspace: &'a Path,
    pub verb: Verb,
}

/// The directory that holds a judged path's last component, reached without following any
/// symlink and held open, with that last component's name.
#[derive(Debug)]
pub struct Held<'a> {
    pub judged: Judged<'a>,
    dir: OwnedFd,
    /// The held directory's path, for messages.
    dir_path: PathBuf,
    name: OsString,
}

impl<'a> Judged<'a> {
    /// A path as messages show it: relative inside the workspace, absolute elsewhere.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// "cannot read notes.txt: ..."
    pub fn cannot(&self, why: impl std::fmt::Display) -> ToolError {
        ToolError::Io(format!("cannot {} {}: {why}", self.verb.doing(), self.raw))
    }

    fn errno(&self, at: &Path, e: Errno) -> ToolError {
        if at == self.path {
            self.cannot(std::io::Error::from(e))
        } else {
            self.cannot(format!("{}: {}", self.shown(at), std::io::Error::from(e)))
        }
    }

    /// The refusal for a component that is a symlink where the judged path had none.
    fn symlink(&self, at: &Path) -> ToolError {
        let shown = self.shown(at);
        let why = if at.starts_with("/dev") || at.starts_with("/proc") {
            format!(
                "`{shown}` is a symlink, and the file tools do not follow symlinks under /dev or /proc"
            )
        } else {
            format!(
                "`{shown}` changed since the call was approved: it is now a symlink, which airlock does not follow"
            )
        };
        ToolError::Failed(format!("{why}; {}", self.verb.nothing()))
    }

    /// Walks to the directory holding the last component. `create` makes missing directories on
    /// the way (`write_file` into a new subdirectory), each under the one held before it.
    pub fn hold(self, create: bool) -> Result<Held<'a>, ToolError> {
        let mut names = Vec::new();
        for component in self.path.components() {
            match component {
                Component::RootDir => {}
                Component::Normal(name) => names.push(name.to_os_string()),
                // The gate hands over resolved paths only; anything else is not one it judged.
                _ => {
                    return Err(ToolError::Tampered(format!(
                        "{} is not a resolved absolute path; {}",
                        self.path.display(),
                        self.verb.nothing()
                    )));
                }
            }
        }
        if !self.path.has_root() {
            return Err(ToolError::Tampered(format!(
                "{} is not an absolute path; {}",
                self.path.display(),
                self.verb.nothing()
            )));
        }
        // `/` itself is held as `.` in `/`.
        let name = names.pop().unwrap_or_else(|| OsString::from("."));
        let root = openat(
            AT_FDCWD,
            "/",
            LOOKUP | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| self.errno(Path::new("/"), e))?;
        let mut dir_path = PathBuf::from("/");
        let dir = self.descend(
            root,
            &mut dir_path,
            names.iter().map(OsString::as_os_str),
            create,
        )?;
        Ok(Held {
            judged: self,
            dir,
            dir_path,
            name,
        })
    }

    /// Opens `names` one by one below `dir` (whose path is `at`), never following a symlink;
    /// `at` ends as the path of the directory returned.
    fn descend<'n>(
        &self,
        mut dir: OwnedFd,
        at: &mut PathBuf,
        names: impl Iterator<Item = &'n OsStr>,
        create: bool,
    ) -> Result<OwnedFd, ToolError> {
        for name in names {
            at.push(name);
            dir = match open_dir(dir.as_fd(), name) {
                Ok(next) => next,
                Err(Errno::ENOENT) if create => {
                    match mkdirat(dir.as_fd(), name, Mode::from_bits_truncate(0o777)) {
                        // Made by someone else meanwhile: opened below like any other.
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(e) => return Err(self.errno(at, e)),
                    }
                    open_dir(dir.as_fd(), name)
                        .map_err(|e| self.why_not(dir.as_fd(), name, at, e))?
                }
                Err(e) => return Err(self.why_not(dir.as_fd(), name, at, e)),
            };
        }
        Ok(dir)
    }

    /// The error for `name` in `dir` (path `at`) that could not be opened with `e`.
    fn why_not(&self, dir: BorrowedFd, name: &OsStr, at: &Path, e: Errno) -> ToolError {
        match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) if kind(&stat) == SFlag::S_IFLNK => self.symlink(at),
            Ok(stat) if e == Errno::ENOTDIR || kind(&stat) != SFlag::S_IFDIR => {
                self.cannot(format!("{} is not a directory", self.shown(at)))
            }
            _ => self.errno(at, e),
        }
    }
}

impl Held<'_> {
    fn leaf(&self) -> PathBuf {
        if self.name == "." {
            self.dir_path.clone()
        } else {
            self.dir_path.join(&self.name)
        }
    }

    /// The last component as it is now, not following a link: `None` when it does not exist.
    /// A symlink is refused.
    pub fn stat(&self) -> Result<Option<FileStat>, ToolError> {
        match fstatat(
            self.dir.as_fd(),
            self.name.as_os_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(stat) if kind(&stat) == SFlag::S_IFLNK => Err(self.judged.symlink(&self.leaf())),
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(self.judged.errno(&self.leaf(), e)),
        }
    }

    /// Opens the last component for reading if it is a regular file, with its size. A terminal,
    /// FIFO, socket or device would block the tool (a FIFO waits for a writer, `/dev/tty`
    /// swallows the cockpit's keys) or never end (`/dev/zero`), so they are refused before
    /// anything is read; `O_NONBLOCK` keeps the open itself from waiting on a FIFO.
    pub fn open_regular(&self) -> Result<(File, u64), ToolError> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(
            self.dir.as_fd(),
            self.name.as_os_str(),
            flags,
            Mode::empty(),
        )
        .map_err(|e| self.refusal(e))?;
        let stat = fstat(&fd).map_err(|e| self.judged.errno(&self.leaf(), e))?;
        let kind = kind(&stat);
        if kind != SFlag::S_IFREG {
            let what = if kind == SFlag::S_IFDIR {
                "a directory (use list_dir)"
            } else {
                "not a regular file (a terminal, FIFO, socket or device)"
            };
            return Err(ToolError::Failed(format!(
                "{} is {what}: the file tools read and change regular files only",
                self.judged.raw
            )));
        }
        Ok((File::from(fd), stat.st_size.max(0) as u64))
    }

    /// Opens the last component as a directory to read its entries.
    pub fn open_dir_to_read(&self) -> Result<OwnedFd, ToolError> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        openat(
            self.dir.as_fd(),
            self.name.as_os_str(),
            flags,
            Mode::empty(),
        )
        .map_err(|e| self.refusal(e))
    }

    /// Opens the regular file `rel` (a relative path of plain names) below the last component,
    /// which must be a directory, never following a link. `Ok(None)` when it is not a regular
    /// file (search skips those); a symlink on the way is refused.
    pub fn open_below(&self, rel: &Path) -> Result<Option<File>, ToolError> {
        let mut names = Vec::new();
        for component in rel.components() {
            match component {
                Component::Normal(name) => names.push(name),
                Component::CurDir => {}
                _ => {
                    return Err(self
                        .judged
                        .cannot(format!("{} is not below it", rel.display())));
                }
            }
        }
        let Some(last) = names.pop() else {
            return Ok(None);
        };
        let mut at = self.dir_path.clone();
        let start = open_dir(self.dir.as_fd(), &self.name).map_err(|e| self.refusal(e))?;
        if self.name != "." {
            at.push(&self.name);
        }
        let dir = self
            .judged
            .descend(start, &mut at, names.into_iter(), false)?;
        at.push(last);
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(dir.as_fd(), last, flags, Mode::empty())
            .map_err(|e| self.judged.why_not_file(dir.as_fd(), last, &at, e))?;
        let stat = fstat(&fd).map_err(|e| self.judged.errno(&at, e))?;
        Ok((kind(&stat) == SFlag::S_IFREG).then(|| File::from(fd)))
    }

    /// The error for the last component that could not be opened with `e`.
    fn refusal(&self, e: Errno) -> ToolError {
        self.judged
            .why_not_file(self.dir.as_fd(), &self.name, &self.leaf(), e)
    }

    /// Replaces (or creates) the last component with `content`, atomically: a temporary file in
    /// the held directory, renamed over the name. An existing file keeps its permissions. Only a
    /// regular file is replaced: a symlink (it changed since it was judged), a directory, a device
    /// or a FIFO is refused. Returns whether a file was replaced.
    pub fn replace(&self, content: &[u8]) -> Result<bool, ToolError> {
        let existing = self.stat()?;
        if let Some(stat) = &existing
            && kind(stat) != SFlag::S_IFREG
        {
            return Err(ToolError::Failed(format!(
                "{} is not a regular file: the file tools read and change regular files only; {}",
                self.judged.raw,
                self.judged.verb.nothing()
            )));
        }
        let (tmp, file) = self.create_temporary()?;
        let written = (|| -> Result<(), ToolError> {
            let mut file = file;
            file.write_all(content).map_err(|e| self.judged.cannot(e))?;
            if let Some(stat) = &existing {
                let mode = Mode::from_bits_truncate((stat.st_mode & 0o7777) as _);
                // Best effort, as `cp` does: a mode the owner cannot set is not a reason to fail.
                let _ = fchmod(&file, mode);
            }
            renameat(
                self.dir.as_fd(),
                tmp.as_os_str(),
                self.dir.as_fd(),
                self.name.as_os_str(),
            )
            .map_err(|e| self.judged.errno(&self.leaf(), e))
        })();
        if written.is_err() {
            let _ = unlinkat(
                self.dir.as_fd(),
                tmp.as_os_str(),
                UnlinkatFlags::NoRemoveDir,
            );
        }
        written.map(|()| existing.is_some())
    }

    /// A new, empty temporary file in the held directory, named after the last component.
    fn create_temporary(&self) -> Result<(OsString, File), ToolError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Short enough that the name stays under the 255-byte limit whatever the file is called.
        let stem: String = self.name.to_string_lossy().chars().take(64).collect();
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let mut last = Errno::EEXIST;
        for _ in 0..16 {
            let tmp = OsString::from(format!(
                ".{stem}.airlock-{}-{}.tmp",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match openat(
                self.dir.as_fd(),
                tmp.as_os_str(),
                flags,
                Mode::from_bits_truncate(0o666),
            ) {
                Ok(fd) => return Ok((tmp, File::from(fd))),
                Err(Errno::EEXIST) => last = Errno::EEXIST,
                Err(e) => {
                    last = e;
                    break;
                }
            }
        }
        Err(self.judged.cannot(format!(
            "cannot create a temporary file in {}: {}",
            self.judged.shown(&self.dir_path),
            std::io::Error::from(last)
        )))
    }
}

impl Judged<'_> {
    /// The error for a last component `name` in `dir` (path `at`) that could not be opened.
    fn why_not_file(&self, dir: BorrowedFd, name: &OsStr, at: &Path, e: Errno) -> ToolError {
        match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) if kind(&stat) == SFlag::S_IFLNK => self.symlink(at),
            _ => self.errno(at, e),
        }
    }
}

fn open_dir(dir: BorrowedFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    let flags = LOOKUP | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, name, flags, Mode::empty())
}

/// The file type bits of a `stat`.
pub fn kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits())
}
