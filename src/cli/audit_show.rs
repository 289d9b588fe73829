//! `airlock audit show [RUN]`: a session's decisions, readably.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::approval::audit;

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

pub fn run(dir: &Path, run: Option<&str>, out: &mut impl Write) -> Result<()> {
    let path = log_path(dir, run)?;
    writeln!(out, "{}", path.display())?;
    for record in audit::read_records(&path)? {
        if let Some(l) = audit::summary_line(&record) {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}
