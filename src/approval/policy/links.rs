//! The links one command line creates, placed where the kernel will put them, so that every path
//! in the same line is judged as if they already existed: `ln -s ~ h && echo x >> h/.bashrc` is a
//! write to `~/.bashrc`, as `echo x >> ~/.bashrc` is.
//!
//! A link counts for every part that may run after the command that makes it, by the walk's
//! [`Order`]: parts written later, but also pipeline stages beside it, `&` jobs, trap handlers,
//! function bodies and the rest of a loop body, which may all run after it whatever their place
//! in the text. A command's own operands are read before its links exist, unless it runs again.
//! A path judged through a link that may not exist only adds a reading: the path as it is on disk
//! is judged too, and the stricter of the two wins.

use std::path::{Path, PathBuf};

use crate::facts::paths::PathContext;
use crate::facts::paths::planned::{
    LinkTo, PlannedLink, PlannedLinks, anchored, entry_places, inside_places, link_content,
};
use crate::facts::programs::links::{NewLink, Placement, Source, links_made};
use crate::facts::shell::{Cwd, Order, SimpleCommand, Word};

/// Stands for "every command" where a problem is not one command's.
const ALL: usize = usize::MAX;

/// The links a command line creates, and when each of its commands runs.
#[derive(Debug, Default)]
pub struct Plan {
    pub links: PlannedLinks,
    orders: Vec<Order>,
}

impl Plan {
    pub fn new(ctx: &PathContext, commands: &[SimpleCommand]) -> Plan {
        let orders: Vec<Order> = commands.iter().map(|c| c.order.clone()).collect();
        let links = place_all(ctx, commands, &orders);
        Plan { links, orders }
    }

    /// Whether a link made by command `by` may exist when a part that runs at `order` opens a
    /// path. `own` is the command the part belongs to: its links do not exist yet when it reads
    /// its operands, unless it runs more than once.
    pub fn sees(&self, by: usize, order: &Order, own: Option<usize>) -> bool {
        sees(&self.orders, by, order, own)
    }
}

fn sees(orders: &[Order], by: usize, order: &Order, own: Option<usize>) -> bool {
    let Some(maker) = orders.get(by) else {
        return true;
    };
    if Some(by) == own {
        return order.repeats;
    }
    by < order.after || order.anytime || maker.together.iter().any(|g| order.together.contains(g))
}

/// Every link the commands create, with places resolved through each other.
fn place_all(ctx: &PathContext, commands: &[SimpleCommand], orders: &[Order]) -> PlannedLinks {
    let mut base = PlannedLinks::default();
    let mut made: Vec<(usize, &Cwd, NewLink)> = Vec::new();
    for (i, cmd) in commands.iter().enumerate() {
        match links_made(cmd) {
            Ok(links) => made.extend(links.into_iter().map(|l| (i, &cmd.cwd, l))),
            Err(why) => base.add_unplaced(why, i),
        }
    }
    if made.is_empty() {
        return base;
    }
    // A link may be created inside another one (`ln -s ~ h; ln -s .ssh h/k`): place them again
    // through the last round's links until nothing moves.
    let mut current = base.clone();
    for _ in 0..=made.len() + 1 {
        let mut next = base.clone();
        for (by, cwd, link) in &made {
            let own = &orders[*by];
            let seen = |i: usize| sees(orders, i, own, Some(*by));
            let placing = Placing {
                ctx,
                current: &current,
                sees: &seen,
                by: *by,
            };
            placing.place(&mut next, cwd, link);
        }
        if next.same_as(&current) {
            return next;
        }
        current = next;
    }
    current.add_unplaced(
        "the links it creates lead into each other too deeply to follow".into(),
        ALL,
    );
    current
}

/// Placing one command's links, with the links of the last round followed.
struct Placing<'a> {
    ctx: &'a PathContext,
    current: &'a PlannedLinks,
    /// Which commands' links exist when this one runs.
    sees: &'a dyn Fn(usize) -> bool,
    by: usize,
}

/// What a link inside a directory is named after.
enum Named<'a> {
    /// The last component of its source (`ln -s ~/.ssh dir` makes `dir/.ssh`); none for `/`,
    /// `.` or `..`, where `ln` makes nothing inside.
    Source(Option<&'a std::ffi::OsStr>),
    /// A source only known at run time.
    Unknown,
}

impl Placing<'_> {
    /// Adds to `next` where `link` lands and what it points to.
    fn place(&self, next: &mut PlannedLinks, cwd: &Cwd, link: &NewLink) {
        let (Source::Symlink(from)
        | Source::Same(from)
        | Source::Moved(from)
        | Source::CopiedLinks(from)) = &link.source;
        let Some(at) = plain(&link.at) else {
            next.add_unplaced(
                format!(
                    "a link is created at `{}`, which is only known when the command runs",
                    link.at.display()
                ),
                self.by,
            );
            return;
        };
        // `ln -s x dir/` can only mean inside `dir`.
        let placement = if at.ends_with('/') && link.placement == Placement::EitherOrInside {
            Placement::Inside
        } else {
            link.placement
        };
        let base = match cwd {
            Cwd::Known(dir) => dir.clone(),
            Cwd::Unknown if at.starts_with(['/', '~']) => self.ctx.workspace.clone(),
            Cwd::Unknown => {
                next.add_unplaced(
                    format!(
                        "a link is created at `{at}`, relative to a directory airlock could not follow"
                    ),
                    self.by,
                );
                return;
            }
        };
        if matches!(from, Word::Lit { glob: true, .. }) {
            next.add_unplaced(
                format!("`{}` links to every file a glob matches", from.display()),
                self.by,
            );
            return;
        }
        let Some(from) = plain(from) else {
            let to = LinkTo::Unknown(format!(
                "it goes through a link the command creates to `{}`, which is only known when it runs",
                from.display()
            ));
            for at in self.places(next, &base, at, placement, Named::Unknown) {
                next.add(PlannedLink {
                    at,
                    to: to.clone(),
                    by: self.by,
                });
            }
            return;
        };
        let source_unknown = !from.starts_with(['/', '~']) && matches!(cwd, Cwd::Unknown);
        let source_path = anchored(self.ctx, &base, from);
        let routes: Vec<LinkTo> = match &link.source {
            Source::Symlink(_) => vec![LinkTo::Symlink(link_content(self.ctx, from))],
            _ if source_unknown => vec![LinkTo::Unknown(format!(
                "it goes through a link to `{from}`, relative to a directory airlock could not follow"
            ))],
            Source::Same(_) => vec![LinkTo::Same(source_path.clone())],
            Source::Moved(_) | Source::CopiedLinks(_) => {
                let mut routes = vec![if matches!(link.source, Source::Moved(_)) {
                    LinkTo::Same(source_path.clone())
                } else {
                    LinkTo::CopiedLinks(source_path.clone())
                }];
                // A symbolic link moved or copied as a link keeps its content, which now reads
                // from the new directory.
                for content in self.symlink_contents(&base, from) {
                    routes.push(LinkTo::Symlink(content));
                }
                routes
            }
        };
        let name_source = match &link.source {
            Source::Symlink(_) => link_content(self.ctx, from),
            _ => source_path,
        };
        let named = Named::Source(name_source.file_name());
        for at in self.places(next, &base, at, placement, named) {
            for to in &routes {
                next.add(PlannedLink {
                    at: at.clone(),
                    to: to.clone(),
                    by: self.by,
                });
            }
        }
    }

    /// The places a new entry named by `at` may take.
    fn places(
        &self,
        next: &mut PlannedLinks,
        base: &Path,
        at: &str,
        placement: Placement,
        named: Named,
    ) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if placement != Placement::Inside
            && let Some(entry) = entry_places(self.ctx, base, at, self.current, self.sees)
        {
            if let Some(why) = entry.unknown {
                next.add_unplaced(why, self.by);
            }
            out.extend(entry.landings.into_iter().map(|l| l.path));
        }
        if placement == Placement::Exactly {
            return out;
        }
        let dirs = inside_places(self.ctx, base, at, self.current, self.sees);
        match named {
            Named::Source(None) => {}
            Named::Source(Some(name)) => {
                if let Some(why) = dirs.unknown {
                    next.add_unplaced(why, self.by);
                }
                out.extend(dirs.landings.into_iter().map(|l| l.path.join(name)));
            }
            Named::Unknown => {
                let maybe_dir = placement == Placement::Inside
                    || dirs.unknown.is_some()
                    || dirs
                        .landings
                        .iter()
                        .any(|l| l.via.is_some() || l.path.is_dir());
                if maybe_dir {
                    next.add_unplaced(
                        format!(
                            "a link is created inside `{at}` under a name only known when the command runs"
                        ),
                        self.by,
                    );
                }
            }
        }
        out
    }

    /// The content of `from` where it is a symbolic link now, or is planned to be one.
    fn symlink_contents(&self, base: &Path, from: &str) -> Vec<PathBuf> {
        let Some(entry) = entry_places(self.ctx, base, from, self.current, self.sees) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for landing in entry.landings {
            out.extend(std::fs::read_link(&landing.path));
            out.extend(self.current.symlinks_at(&landing.path));
        }
        out
    }
}

/// A word's value when it is known and names one path.
fn plain(word: &Word) -> Option<&str> {
    match word {
        Word::Lit {
            value, glob: false, ..
        } => Some(value),
        _ => None,
    }
}
