//! The path a file tool's call was judged on (and the definition an MCP call was judged on),
//! carried from the judgement to the tool.
//!
//! The policy judges a file call by where its path lands physically (symlinks followed, see
//! `facts::paths`), and that landing spot is what a human approves. So `Approved` carries it,
//! and the file tools open that path and nothing else: they walk it from `/` without following a
//! symlink (`tools::files::held`), so a directory swapped for a link after the judgement cannot
//! redirect the call. Re-resolving the raw argument at run time would undo exactly that.
//!
//! When an answer comes back after a wait (a human at the modal, a parked call settled later by
//! code), the gate first judges the path again: if it lands somewhere else now, the call is
//! refused with a reason that says where, before it reaches the tool. That refusal is the early,
//! readable one; the tool's walk is the guarantee, since a swap can still come after it.

use std::path::{Path, PathBuf};

use crate::approval::policy::Policy;
use crate::facts::paths::PathContext;
use crate::protocol::PartKind;
use crate::protocol::Subject;
use crate::protocol::Verdict;
use serde_json::Value;

/// What a call was judged on, carried to the tool in `Approved`: a file call's physical path, an
/// MCP call's tool definition (its digest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    pub path: Option<PathBuf>,
    pub mcp_definition: Option<String>,
    /// The policy found the call only reads (its risk is safe): it cannot change the
    /// workspace, so no checkpoint is kept before it. `false` when not known (a parked call
    /// settled later): a checkpoint is kept.
    pub read_only: bool,
}

/// The digest of the definition an MCP call was judged on: the subject of its part, which the
/// policy sets from the catalog entry it judged (`policy::mcp`). `None` for any other tool.
pub fn judged_definition(verdict: &Verdict) -> Option<String> {
    verdict.parts.iter().find_map(|part| match &part.subject {
        Some(Subject::McpCall { definition, .. }) => Some(definition.clone()),
        _ => None,
    })
}

/// The physical path a file call was judged on: the subject of its path part, which the policy
/// sets to the resolved path it judged (`Facts::File`; only a tool that declares a path gets a
/// path part). `None` for any other call, and for a file call whose arguments named no path (the
/// policy denies those).
pub fn judged_path(verdict: &Verdict) -> Option<PathBuf> {
    verdict
        .parts
        .iter()
        .find_map(|part| match (&part.kind, &part.subject) {
            (PartKind::Path, Some(Subject::Path(path))) => Some(path.clone()),
            _ => None,
        })
}

/// Why a file call may not run because its path no longer lands where it was judged, if so.
/// `judged` is where it landed then; the call is judged again now.
pub(super) fn moved_since(
    policy: &Policy,
    tool: &str,
    args: &Value,
    judged: Option<&Path>,
) -> Option<String> {
    if !policy.names_a_path(tool) {
        return None;
    }
    let Some(judged) = judged else {
        return Some(format!(
            "`{tool}` was not judged on a path, so airlock cannot tell what it would touch; nothing ran"
        ));
    };
    let now = judged_path(&policy.assess(tool, args).verdict);
    match now {
        Some(now) if now == judged => None,
        Some(now) => Some(format!(
            "the path of `{tool}` changed since it was judged: it now leads to {}, not to {} as approved (a directory or file on the way was replaced, perhaps by a symlink); nothing ran. Check what changed, then ask again",
            shown(&policy.paths, &now),
            shown(&policy.paths, judged),
        )),
        None => Some(format!(
            "`{tool}` can no longer be judged on a path; nothing ran"
        )),
    }
}

/// A path as reasons show it: relative inside the workspace, `~/...` under home.
pub fn shown(ctx: &PathContext, path: &Path) -> String {
    if let Ok(rel) = path.strip_prefix(&ctx.workspace) {
        let rel = rel.display().to_string();
        return if rel.is_empty() { ".".into() } else { rel };
    }
    if let Ok(rel) = path.strip_prefix(&ctx.home) {
        return format!("~/{}", rel.display());
    }
    path.display().to_string()
}
