//! `airlock audit show [RUN]`: a session's decisions, readably.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::approval::audit;
use crate::store::db::Store;

/// The log of a run (session), or the newest log when none is named.
pub fn log_path(dir: &Path, run: Option<&str>) -> Result<PathBuf> {
    if let Some(run) = run {
        let path = dir.join(format!("{run}.jsonl"));
        if !path.exists() {
            bail!("no audit log for {run} in {}", dir.display());
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
    writeln!(out, "{}", path.display())?;
    for record in audit::read_records(&path)? {
        if let Some(l) = audit::summary_line(&record) {
            writeln!(out, "{l}")?;
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
            r.action,
            r.call_id.as_deref().unwrap_or("-"),
            r.reason
        )?;
    }
    Ok(())
}
