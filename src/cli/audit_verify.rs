//! `airlock audit verify FILE`: checks a session log's hash chain and its head file.

use std::path::Path;

use anyhow::Result;

use crate::approval::audit;

pub fn run(file: &Path) -> Result<String> {
    let report = audit::verify(file)?;
    Ok(format!(
        "ok: {} — {} records, hash chain intact, ends at {}",
        file.display(),
        report.records,
        report.last_hash.as_deref().unwrap_or("(empty log)")
    ))
}
