//! The policy's answer to a write or delete that lands on an active airlock file (the user
//! config, the project config, a rules file in use): the agent never changes the rules it is
//! judged by. Which paths touch such a file is decided in `paths` ([`ActiveFile`]).

use std::path::Path;

use super::judge::{Access, Finding, judge, show};
use crate::facts::paths::{ActiveFile, PathContext, ResolvedPath};
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;

fn shown_file(ctx: &PathContext, file: &Path) -> String {
    if let Ok(rel) = file.strip_prefix(&ctx.workspace) {
        return rel.display().to_string();
    }
    if let Ok(rel) = file.strip_prefix(&ctx.home) {
        return format!("~/{}", rel.display());
    }
    file.display().to_string()
}

/// Writing or deleting an active file, or deleting a directory that holds one, is denied.
/// Writing into such a directory (`cp x dir/`, `tar -x`, git commands that rewrite the work tree)
/// may replace the file: it asks and says so, unless the write is denied anyway. It stays as
/// grantable as any other workspace write: a command that runs code could change the file too,
/// and a replaced project file untrusts the project at the next start. `None` for reads and for
/// paths that touch no active file.
pub(super) fn tampering(ctx: &PathContext, access: Access, path: &ResolvedPath) -> Option<Finding> {
    let verb = match access {
        Access::Read | Access::Inspect => return None,
        Access::Write => "writes",
        Access::Delete => "deletes",
    };
    let shown = show(ctx, path);
    let via = if path.raw != shown {
        format!(" (as `{}`)", path.raw)
    } else {
        String::new()
    };
    let file = match path.active_file.as_ref()? {
        ActiveFile::Is(file) => {
            return Some(Finding {
                ruling: Ruling::Deny,
                code: ReasonCode::TampersWithAirlock,
                risk: Risk::Dangerous,
                message: format!(
                    "{verb} {}, a config or rules file airlock is using{via}; only the user changes airlock's rules",
                    shown_file(ctx, file)
                ),
            });
        }
        ActiveFile::Holds(file) => shown_file(ctx, file),
    };
    // A directory that holds an active file: never looser than the same call would be without
    // it, and a deny for another reason (`rm -rf ~`) keeps its own words.
    let plain = ResolvedPath {
        active_file: None,
        ..path.clone()
    };
    let without = judge(ctx, access, &plain);
    if without.ruling == Ruling::Deny {
        return Some(without);
    }
    Some(if access == Access::Delete {
        Finding {
            ruling: Ruling::Deny,
            code: ReasonCode::TampersWithAirlock,
            risk: Risk::Dangerous,
            message: format!(
                "deletes {shown}{via}, which holds {file}, a config or rules file airlock is using; only the user changes airlock's rules"
            ),
        }
    } else {
        Finding {
            ruling: Ruling::Ask,
            code: ReasonCode::TampersWithAirlock,
            risk: without.risk.max(Risk::Mutating),
            message: format!(
                "writes into {shown}{via}, which holds {file}, a config or rules file airlock is using: it may replace it"
            ),
        }
    })
}
