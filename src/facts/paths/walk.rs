//! Resolution: a path argument turned into the place it lands, the way the kernel walks it
//! (symlinks followed, `..` after a link climbing out of its target) and the way tools that
//! normalise first read it. `/dev/fd`, `/dev/std*` and `/proc` magic links are taken for what
//! they mean, `..` out of them included.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use super::PathContext;

/// How many symlinks one resolution may follow (Linux's `MAXSYMLINKS`).
pub(super) const MAX_SYMLINK_HOPS: usize = 40;

/// Expands `~`, `~/x`, `~user/x` and anchors relative paths at `cwd`.
pub(super) fn expand(ctx: &PathContext, cwd: &Path, raw: &str) -> PathBuf {
    let Some(after_tilde) = raw.strip_prefix('~') else {
        // `join` with an absolute `raw` replaces `cwd`, as intended.
        return cwd.join(raw);
    };
    let (user, tail) = after_tilde.split_once('/').unwrap_or((after_tilde, ""));
    let base = if user.is_empty() {
        ctx.home.clone()
    } else {
        ctx.home
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join(user)
    };
    let base = if base.is_absolute() {
        base
    } else {
        cwd.join(base)
    };
    // `~//etc` is `$HOME/etc`, not `/etc`: never let the tail be absolute.
    let tail = tail.trim_start_matches('/');
    if tail.is_empty() {
        base
    } else {
        base.join(tail)
    }
}

/// One step of a path walk.
pub(super) enum Step {
    Root,
    Up,
    Name(OsString),
}

pub(super) fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Up),
            Component::Normal(name) => Some(Step::Name(name.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Removes `.`, empty components and `..` (popping, never above `/`)
/// without touching the filesystem. `path` must be absolute.
pub(super) fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for step in steps(path) {
        match step {
            Step::Root => out = PathBuf::from("/"),
            Step::Up => {
                out.pop();
            }
            Step::Name(name) => out.push(name),
        }
    }
    out
}

pub(super) enum Walk {
    Resolved(PathBuf),
    TooManySymlinks,
}

/// What the walk should do with a candidate before looking at the disk.
pub(super) enum Special {
    /// Follow the disk as usual.
    None,
    /// Take the name literally: its meaning depends on the process that
    /// opens it (`/dev/stdout`, `/proc/self/...`), not on airlock.
    Literal,
    /// The name is a magic link to this directory.
    Jump(PathBuf),
}

/// Resolves an absolute path component by component, following symlinks
/// like the kernel does. Past the first missing component nothing can be a
/// symlink, so the rest is joined lexically (`..` still pops).
pub(super) fn walk(start: &Path, cwd: Option<&Path>) -> Walk {
    let mut pending = steps(start);
    pending.reverse();
    let mut current = PathBuf::from("/");
    let mut hops = 0usize;
    while let Some(step) = pending.pop() {
        let name = match step {
            Step::Root => {
                current = PathBuf::from("/");
                continue;
            }
            Step::Up => {
                current = through_proc(current);
                current.pop();
                continue;
            }
            Step::Name(name) => name,
        };
        let candidate = current.join(&name);
        match special(&candidate, cwd) {
            Special::Literal => {
                current = candidate;
                continue;
            }
            Special::Jump(target) => {
                current = target;
                continue;
            }
            Special::None => {}
        }
        let is_symlink = fs::symlink_metadata(&candidate)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_symlink {
            current = candidate;
            continue;
        }
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return Walk::TooManySymlinks;
        }
        match fs::read_link(&candidate) {
            // Relative targets continue from the link's directory, which is
            // `current`; absolute ones start with `Step::Root`.
            Ok(target) => pending.extend(steps(&target).into_iter().rev()),
            Err(_) => current = candidate,
        }
    }
    Walk::Resolved(current)
}

/// `/dev/fd` and the `/dev/std*` names are links into `/proc/self/fd`, kept literal while a walk
/// goes down them (what they name depends on the process that opens them). Climbing out of one
/// climbs out of its target: `/dev/fd/..` is `/proc/self`, so `/dev/fd/../../1/environ` is
/// `/proc/1/environ`.
fn through_proc(current: PathBuf) -> PathBuf {
    const LINKS: &[(&str, &str)] = &[
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ];
    for (link, target) in LINKS {
        if let Ok(rest) = current.strip_prefix(link) {
            return Path::new(target).join(rest);
        }
    }
    current
}

/// The longest existing prefix resolved physically, the rest lexically.
pub(super) fn physical_or_lexical(path: &Path) -> PathBuf {
    match walk(path, None) {
        Walk::Resolved(p) => p,
        Walk::TooManySymlinks => lexical_normalize(path),
    }
}

pub(super) fn special(candidate: &Path, cwd: Option<&Path>) -> Special {
    let parts: Vec<&std::ffi::OsStr> = candidate
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let is = |i: usize, s: &str| parts.get(i).is_some_and(|p| *p == s);
    let is_process = |i: usize| {
        parts.get(i).is_some_and(|p| {
            *p == "self"
                || *p == "thread-self"
                || p.to_str()
                    .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        })
    };

    if is(0, "dev") && ["fd", "stdin", "stdout", "stderr"].iter().any(|d| is(1, d)) {
        return Special::Literal;
    }
    if !is(0, "proc") {
        return Special::None;
    }
    // /proc/<p>/{root,cwd} and /proc/<p>/task/<t>/{root,cwd}
    let magic = match parts.len() {
        3 if is_process(1) => parts.get(2),
        5 if is_process(1) && is(2, "task") && is_process(3) => parts.get(4),
        _ => None,
    };
    let of_self = is(1, "self") || is(1, "thread-self");
    match magic {
        // Every process is assumed to share our root; `/proc/1/root/etc`
        // is judged as `/etc`.
        Some(m) if *m == "root" => Special::Jump(PathBuf::from("/")),
        Some(m) if *m == "cwd" && of_self => match cwd {
            Some(cwd) => Special::Jump(cwd.to_path_buf()),
            None => Special::Literal,
        },
        // Anything else under /proc refers to whichever process opens it.
        _ => Special::Literal,
    }
}
