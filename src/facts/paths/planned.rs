//! Links a command line creates before it touches a path: `ln -s ~ h && echo x >> h/.bashrc`.
//!
//! When airlock judges the command the link does not exist yet, so [`resolve`](super::resolve)
//! alone reads `h/.bashrc` as a new file in the workspace. [`reroute`] walks a path the way the
//! kernel will once the planned links exist: at each component it takes every link planned there
//! *and* the disk as it is now (the link may never be made), follows real symlinks as the kernel
//! does, and expands globs against both. Every landing spot reached through a planned link is
//! returned for the policy to resolve and judge like any other path; a planned link whose target
//! is unknown makes the path unknown, never an ordinary one.
//!
//! This module owns what planned links do to a path. Which links a command plans, and where, is
//! the policy's business (`policy::links`), built on [`entry_places`] and [`inside_places`].

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::PathContext;
use super::walk::{self, MAX_SYMLINK_HOPS, Special, expand, lexical_normalize};
use crate::facts::glob::Glob;

/// What a planned link makes its place into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTo {
    /// A symbolic link with this content (`~` already expanded); relative content is read from
    /// the link's directory, as the kernel does.
    Symlink(PathBuf),
    /// The very file or directory at this absolute path: a hard link, or an entry moved here.
    Same(PathBuf),
    /// A copy of this absolute path that keeps its symbolic links (`cp -a`, `cp -P`, `cp -r`): a
    /// path through it leads back to the original only where it crosses one of those links.
    CopiedLinks(PathBuf),
    /// Where it points is only known when the command runs.
    Unknown(String),
}

/// One link a command will create, at a place resolved the way the kernel will create it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedLink {
    pub at: PathBuf,
    pub to: LinkTo,
    /// Index of the command that creates it.
    pub by: usize,
}

/// Every link one command line plans, and those whose place airlock cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedLinks {
    links: Vec<PlannedLink>,
    /// Links planned at a place only known at run time, with why, by creating command.
    unplaced: Vec<(String, usize)>,
}

impl PlannedLinks {
    pub fn add(&mut self, link: PlannedLink) {
        if !self.links.contains(&link) {
            self.links.push(link);
        }
    }

    pub fn add_unplaced(&mut self, why: String, by: usize) {
        self.unplaced.push((why, by));
    }

    /// The same links and unplaced links, in any order.
    pub fn same_as(&self, other: &PlannedLinks) -> bool {
        self.links.len() == other.links.len()
            && self.links.iter().all(|l| other.links.contains(l))
            && self.unplaced == other.unplaced
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty() && self.unplaced.is_empty()
    }

    fn at<'a>(
        &'a self,
        place: &'a Path,
        sees: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = &'a PlannedLink> + 'a {
        self.links
            .iter()
            .filter(move |l| same_place(&l.at, place) && sees(l.by))
    }

    fn names_in<'a>(
        &'a self,
        dir: &'a Path,
        sees: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = OsString> + 'a {
        self.links
            .iter()
            .filter(move |l| l.at.parent().is_some_and(|p| same_place(p, dir)) && sees(l.by))
            .filter_map(|l| l.at.file_name().map(|n| n.to_os_string()))
    }

    /// The content of every symbolic link planned at `place`.
    pub fn symlinks_at(&self, place: &Path) -> Vec<PathBuf> {
        self.at(place, &|_| true)
            .filter_map(|l| match &l.to {
                LinkTo::Symlink(content) => Some(content.clone()),
                _ => None,
            })
            .collect()
    }
}

/// A place a path reaches, and the first planned link it went through (none: the disk as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    pub path: PathBuf,
    pub via: Option<PathBuf>,
}

/// Every place a path may reach once the planned links exist, and why some cannot be known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Landings {
    pub landings: Vec<Landing>,
    pub unknown: Option<String>,
}

impl Landings {
    fn unknown(&mut self, why: String) {
        self.unknown.get_or_insert(why);
    }

    fn land(&mut self, landing: Landing) {
        if !self.landings.contains(&landing) {
            self.landings.push(landing);
        }
    }
}

/// Most branches one walk may take (each planned link doubles them) before the path is unknown.
const MAX_BRANCHES: usize = 512;

/// Most directory entries one walk may read to expand globs before the path is unknown.
const MAX_GLOB_SCAN: usize = 10_000;

/// The places `raw` (as written, relative to `cwd`) reaches through at least one planned link,
/// read both as the kernel walks it and as tools that normalise `..` first do. Only the links of
/// the commands `sees` accepts count: those that may have run before the path is opened.
pub fn reroute(
    ctx: &PathContext,
    cwd: &Path,
    raw: &str,
    glob: bool,
    planned: &PlannedLinks,
    sees: &dyn Fn(usize) -> bool,
) -> Landings {
    let mut out = Landings::default();
    if let Some((why, _)) = planned.unplaced.iter().find(|(_, by)| sees(*by)) {
        out.unknown(why.clone());
    }
    if !planned.links.iter().any(|l| sees(l.by)) {
        return out;
    }
    let cwd = absolute(ctx, cwd);
    let expanded = expand(ctx, &cwd, raw);
    let lexical = lexical_normalize(&expanded);
    for start in [expanded, lexical] {
        let all = land_all(&start, &cwd, glob, planned, sees);
        if let Some(why) = all.unknown {
            out.unknown(why);
        }
        for landing in all.landings.into_iter().filter(|l| l.via.is_some()) {
            out.land(landing);
        }
    }
    out
}

/// Where a new directory entry named `raw` goes: its parent resolved through real and planned
/// links, joined with its own name (which is not followed). `None` for names such as `.` or `..`
/// that cannot be a new entry.
pub fn entry_places(
    ctx: &PathContext,
    cwd: &Path,
    raw: &str,
    planned: &PlannedLinks,
    sees: &dyn Fn(usize) -> bool,
) -> Option<Landings> {
    let cwd = absolute(ctx, cwd);
    let expanded = expand(ctx, &cwd, raw);
    let name = match expanded.components().next_back() {
        Some(std::path::Component::Normal(name)) => name.to_os_string(),
        _ => return None,
    };
    let parent = expanded.parent()?;
    let mut parents = land_all(parent, &cwd, false, planned, sees);
    for landing in &mut parents.landings {
        landing.path.push(&name);
    }
    Some(parents)
}

/// Where `raw` leads with every link followed, final component included: the directory a new
/// entry goes into (`ln -s TARGET DIR`).
pub fn inside_places(
    ctx: &PathContext,
    cwd: &Path,
    raw: &str,
    planned: &PlannedLinks,
    sees: &dyn Fn(usize) -> bool,
) -> Landings {
    let cwd = absolute(ctx, cwd);
    let expanded = expand(ctx, &cwd, raw);
    land_all(&expanded, &cwd, false, planned, sees)
}

/// A symbolic link's content as the shell hands it to `ln`: `~` expanded, relative kept relative.
pub fn link_content(ctx: &PathContext, raw: &str) -> PathBuf {
    if raw.starts_with('~') {
        expand(ctx, Path::new("/"), raw)
    } else {
        PathBuf::from(raw)
    }
}

/// `raw` made absolute against `cwd`, `~` expanded, nothing resolved.
pub fn anchored(ctx: &PathContext, cwd: &Path, raw: &str) -> PathBuf {
    expand(ctx, &absolute(ctx, cwd), raw)
}

fn absolute(ctx: &PathContext, cwd: &Path) -> PathBuf {
    if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        ctx.workspace.join(cwd)
    }
}

#[derive(Debug, Clone)]
enum Step {
    Root,
    Up,
    Name(OsString),
    /// A name from a glob expansion: taken as it is, never expanded again.
    Literal(OsString),
    /// What follows is inside a copy that kept its symbolic links.
    CopyStart,
}

fn steps(path: &Path) -> impl DoubleEndedIterator<Item = Step> {
    walk::steps(path).into_iter().map(|s| match s {
        walk::Step::Root => Step::Root,
        walk::Step::Up => Step::Up,
        walk::Step::Name(name) => Step::Name(name),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copy {
    /// Not inside a copy.
    No,
    /// Inside a copy, no symbolic link crossed yet: so far the copy is a file of its own.
    Unproven,
    /// Inside a copy, and through a link the copy kept.
    Proven,
}

#[derive(Debug, Clone)]
struct Branch {
    current: PathBuf,
    /// Steps still to take, the next one last.
    pending: Vec<Step>,
    hops: usize,
    via: Option<PathBuf>,
    copy: Copy,
}

impl Branch {
    fn follow(&mut self, target: impl DoubleEndedIterator<Item = Step>) {
        self.pending.extend(target.rev());
    }

    fn crossed_link(&mut self) {
        if self.copy == Copy::Unproven {
            self.copy = Copy::Proven;
        }
    }
}

/// Walks `start` (absolute) through real and planned links, branching at every planned link and
/// every glob, and returns where each branch ends.
fn land_all(
    start: &Path,
    cwd: &Path,
    glob: bool,
    planned: &PlannedLinks,
    sees: &dyn Fn(usize) -> bool,
) -> Landings {
    let mut walk = Walk {
        cwd,
        glob,
        planned,
        sees,
        out: Landings::default(),
        queue: vec![Branch {
            current: PathBuf::from("/"),
            pending: steps(start).rev().collect(),
            hops: 0,
            via: None,
            copy: Copy::No,
        }],
        branches: 1,
        scanned: 0,
    };
    while let Some(b) = walk.queue.pop() {
        if walk.take(b).is_err() {
            walk.out.unknown(too_many());
            break;
        }
    }
    walk.out
}

/// One path being walked: the branches still to take, where the others landed, and how much of
/// the branch and scan budget is spent.
struct Walk<'a> {
    cwd: &'a Path,
    glob: bool,
    planned: &'a PlannedLinks,
    sees: &'a dyn Fn(usize) -> bool,
    out: Landings,
    queue: Vec<Branch>,
    branches: usize,
    scanned: usize,
}

/// More than `MAX_BRANCHES` branches: the path is unknown and the walk stops.
struct TooManyBranches;

impl Walk<'_> {
    /// Takes one branch step by step until it lands, ends, or splits into new branches.
    fn take(&mut self, mut b: Branch) -> Result<(), TooManyBranches> {
        while let Some(step) = b.pending.pop() {
            let name = match step {
                Step::Root => {
                    b.current = PathBuf::from("/");
                    continue;
                }
                Step::Up => {
                    b.current.pop();
                    continue;
                }
                Step::CopyStart => {
                    if b.copy == Copy::No {
                        b.copy = Copy::Unproven;
                    }
                    continue;
                }
                Step::Literal(name) => name,
                Step::Name(name) => match self.expand(&b, name)? {
                    Some(name) => name,
                    None => return Ok(()),
                },
            };
            if !self.enter(&mut b, &name)? {
                return Ok(());
            }
        }
        if b.copy != Copy::Unproven {
            self.out.land(Landing {
                path: b.current,
                via: b.via,
            });
        }
        Ok(())
    }

    /// A name that is a glob splits the branch, one new branch per match, and `None` says this
    /// one ended (split, or unknown). A name that is no glob, or matches nothing, is taken as
    /// written.
    fn expand(&mut self, b: &Branch, name: OsString) -> Result<Option<OsString>, TooManyBranches> {
        let pattern = name.to_string_lossy().into_owned();
        if !(self.glob && pattern.contains(['*', '?', '['])) {
            return Ok(Some(name));
        }
        let matches = match glob_names(
            &b.current,
            &pattern,
            self.planned,
            self.sees,
            &mut self.scanned,
        ) {
            Ok(m) => m,
            Err(why) => {
                self.out.unknown(why);
                return Ok(None);
            }
        };
        if matches.is_empty() {
            return Ok(Some(name));
        }
        self.branches += matches.len();
        if self.branches > MAX_BRANCHES {
            return Err(TooManyBranches);
        }
        for m in matches {
            let mut next = b.clone();
            next.pending.push(Step::Literal(m));
            self.queue.push(next);
        }
        Ok(None)
    }

    /// Enters `name` from where the branch stands: a special place (`/proc/self/cwd`, ...) as
    /// the kernel resolves it, else every planned link there (each a new branch) and then the
    /// disk as it is now. `false` when the branch ends here.
    fn enter(&mut self, b: &mut Branch, name: &OsStr) -> Result<bool, TooManyBranches> {
        let candidate = b.current.join(name);
        match walk::special(&candidate, Some(self.cwd)) {
            Special::Literal => {
                b.current = candidate;
                return Ok(true);
            }
            Special::Jump(target) => {
                // The working directory may itself be a planned link: walk it again.
                b.hops += 1;
                if b.hops > MAX_SYMLINK_HOPS {
                    self.out.unknown(too_many());
                    return Ok(false);
                }
                b.follow(steps(&target));
                return Ok(true);
            }
            Special::None => {}
        }
        self.through_planned(b, &candidate)?;
        Ok(self.on_disk(b, candidate))
    }

    /// A new branch through each planned link at `candidate` the path may meet.
    fn through_planned(&mut self, b: &Branch, candidate: &Path) -> Result<(), TooManyBranches> {
        let (planned, sees) = (self.planned, self.sees);
        for link in planned.at(candidate, sees) {
            self.branches += 1;
            if self.branches > MAX_BRANCHES {
                return Err(TooManyBranches);
            }
            let mut next = b.clone();
            next.hops += 1;
            if next.hops > MAX_SYMLINK_HOPS {
                self.out.unknown(too_many());
                continue;
            }
            next.via.get_or_insert_with(|| candidate.to_path_buf());
            match &link.to {
                LinkTo::Symlink(content) => {
                    next.crossed_link();
                    next.follow(steps(content));
                }
                LinkTo::Same(path) => next.follow(steps(path)),
                LinkTo::CopiedLinks(path) => {
                    let mut inner: Vec<Step> = steps(path).collect();
                    let last = inner.pop();
                    inner.push(Step::CopyStart);
                    inner.extend(last);
                    next.follow(inner.into_iter());
                }
                LinkTo::Unknown(why) => {
                    self.out.unknown(why.clone());
                    continue;
                }
            }
            self.queue.push(next);
        }
        Ok(())
    }

    /// The disk as it is now (the planned link may never be made): a real symlink is followed.
    /// `false` when the branch ends here.
    fn on_disk(&mut self, b: &mut Branch, candidate: PathBuf) -> bool {
        let is_symlink = std::fs::symlink_metadata(&candidate)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_symlink {
            b.current = candidate;
            return true;
        }
        b.hops += 1;
        if b.hops > MAX_SYMLINK_HOPS {
            self.out.unknown(too_many());
            return false;
        }
        match std::fs::read_link(&candidate) {
            Ok(target) => {
                b.crossed_link();
                b.follow(steps(&target));
            }
            Err(_) => b.current = candidate,
        }
        true
    }
}

/// Places compared as a case-insensitive filesystem (macOS, Windows shares) would: a link planned
/// at `H` is met by a path through `h` there, and an extra reading costs nothing elsewhere.
fn same_place(a: &Path, b: &Path) -> bool {
    a == b || a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
}

fn too_many() -> String {
    "it goes through too many links, some of them created by the command itself".into()
}

/// The names in `dir` (on disk or planned there) one glob component matches, the way bash
/// matches them: a leading `.` only when the pattern has one, and `.`/`..` for such patterns.
fn glob_names(
    dir: &Path,
    pattern: &str,
    planned: &PlannedLinks,
    sees: &dyn Fn(usize) -> bool,
    scanned: &mut usize,
) -> Result<Vec<OsString>, String> {
    let glob = Glob::path(pattern).map_err(|_| {
        "a file name pattern in it is too large to expand against the links the command creates"
            .to_string()
    })?;
    let dotted = pattern.starts_with('.');
    let mut names: Vec<OsString> = Vec::new();
    if dotted {
        for special in [".", ".."] {
            if glob.is_match(special) {
                names.push(special.into());
            }
        }
    }
    let on_disk = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name());
    for name in on_disk.chain(planned.names_in(dir, sees)) {
        *scanned += 1;
        if *scanned > MAX_GLOB_SCAN {
            return Err(format!(
                "`{pattern}` matches too many files to check against the links the command creates"
            ));
        }
        let text = name.to_string_lossy();
        if text.starts_with('.') && !dotted {
            continue;
        }
        if glob.is_match(&text) && !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_too_large_to_compile_leaves_the_path_unknown_rather_than_matching_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        let huge = "[[:alpha:]]".repeat(1000);
        let mut scanned = 0;
        let names = glob_names(
            dir.path(),
            &huge,
            &PlannedLinks::default(),
            &|_| true,
            &mut scanned,
        );
        assert!(names.is_err(), "{names:?}");
        let names = glob_names(
            dir.path(),
            "[[:alpha:]]",
            &PlannedLinks::default(),
            &|_| true,
            &mut scanned,
        );
        assert_eq!(names, Ok(vec![OsString::from("a")]));
    }
}
