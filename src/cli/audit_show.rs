//! `airlock audit show [RUN]`: a session's decisions, readably. Every line holds text from a
//! model (commands, tool names, arguments), a file name or the database (refusal reasons), so
//! each is printed through `visible_line`: an escape sequence in a parked command cannot redraw
//! the listing, and a bidi control cannot reorder it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::approval::audit;
use crate::store::db::Store;
use crate::visible::visible_line;

/// The log of a run (session), or the newest log when none is named.
pub fn log_path(dir: &Path, run: Option<&str>) -> Result<PathBuf> {
    if let Some(run) = run {
        let path = dir.join(format!("{run}.jsonl"));
        if !path.exists() {
            bail!(
                "no audit log for {} in {}",
                visible_line(run),
                visible_line(&dir.display().to_string())
            );
        }
        return Ok(path);
    }
    let newest = std::fs::read_dir(dir)
        .with_context(|| format!("no audit logs yet in {}", dir.display()))?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok());
    match newest {
        Some(e) => Ok(e.path()),
        None => bail!("no audit logs yet in {}", dir.display()),
    }
}

/// Prints the session's audit log, then the answers and resumes for it that were refused (kept in
/// the state database, since they come from other processes: `db`, when there is one).
pub fn run(dir: &Path, run: Option<&str>, db: Option<&Path>, out: &mut impl Write) -> Result<()> {
    let path = log_path(dir, run)?;
    writeln!(out, "{}", visible_line(&path.display().to_string()))?;
    let records = audit::read_records(&path)?;
    if records.is_empty() {
        writeln!(out, "(no records)")?;
    }
    for record in records {
        if let Some(l) = audit::summary_line(&record) {
            writeln!(out, "{}", visible_line(&l))?;
        }
    }
    let Some(db) = db.filter(|p| p.exists()) else {
        return Ok(());
    };
    let session = path.file_stem().unwrap_or_default().to_string_lossy();
    for r in Store::open(db)?.refusals(&session)? {
        writeln!(
            out,
            "refused  {} {}: {}",
            visible_line(&r.action),
            visible_line(r.call_id.as_deref().unwrap_or("-")),
            visible_line(&r.reason)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_log_says_it_has_no_records() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s1.jsonl"), "").unwrap();
        let mut out = Vec::new();
        run(dir.path(), Some("s1"), None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("s1.jsonl\n(no records)\n"), "{text}");
    }
}
