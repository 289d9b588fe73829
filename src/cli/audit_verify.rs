//! `airlock audit verify FILE`: checks a session log's hash chain, its head file, and its end
//! against the anchor the writer kept in the state database. Says what it checked against.

use std::path::Path;

use anyhow::{Context, Result, anyhow};

use crate::approval::audit::{self, ChainAnchor};
use crate::store::db::DbAnchor;
use crate::visible::{visible, visible_line};

/// Verifies `file` against the state database of this machine's state directory.
pub fn run(file: &Path) -> Result<String> {
    run_with_db(file, &super::runs::db_path())
}

/// Verifies `file` against the anchors in the database at `db` (which may be missing).
pub fn run_with_db(file: &Path, db: &Path) -> Result<String> {
    let mut anchor = DbAnchor::open_existing(db).with_context(|| {
        format!(
            "cannot read the audit anchors in {}; the log was not verified",
            visible_line(&db.display().to_string())
        )
    })?;
    // The problem may quote text from the log (a session name): shown, never obeyed.
    let report = audit::verify_against(file, anchor.as_mut().map(|a| a as &mut dyn ChainAnchor))
        .map_err(|e| anyhow!(visible(&e.to_string())))?;
    let against = match &report.anchor {
        Some((place, matched)) => format!(
            "the end {} the anchor in {}",
            matched.describe(),
            visible_line(place)
        ),
        None if anchor.is_none() => format!(
            "no anchor found: only the chain was checked (no state database at {})",
            visible_line(&db.display().to_string())
        ),
        None => format!(
            "no anchor found: only the chain was checked ({} holds none for this log)",
            visible_line(&db.display().to_string())
        ),
    };
    let head = if report.past_head {
        "head file one record behind (the writer stopped before updating it)"
    } else {
        "head file agrees"
    };
    Ok(format!(
        "ok: {} — {} records, hash chain intact, ends at {}; {head}; {against}",
        visible_line(&file.display().to_string()),
        report.records,
        report.last_hash.as_deref().unwrap_or("(empty log)")
    ))
}
