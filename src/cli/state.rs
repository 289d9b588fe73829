//! `airlock state check` and `airlock state repair`: what a person does about a damaged state
//! database (`store::db::health` does the work). A check says whether SQLite finds the database
//! whole, and what it holds; a repair keeps the damaged files aside, makes an empty database and
//! says exactly what went with the old one.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::store::db::health::{self, Repair};

/// Prints the check of the database at `db`; `false` when it is damaged.
pub fn check(db: &Path, out: &mut impl Write) -> Result<bool> {
    let Some(health) = health::check(db) else {
        writeln!(
            out,
            "no state database at {} yet: nothing to check",
            db.display()
        )?;
        return Ok(true);
    };
    if health.whole() {
        writeln!(out, "the state database {} is whole", db.display())?;
        writeln!(out, "it holds:")?;
        for line in health.held.counts() {
            writeln!(out, "  {line}")?;
        }
        return Ok(true);
    }
    writeln!(out, "the state database {} is damaged:", db.display())?;
    let lines: Vec<&str> = health
        .problems
        .iter()
        .flat_map(|p| p.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    for line in lines.iter().take(10) {
        writeln!(out, "  {}", crate::visible::visible_line(line))?;
    }
    if lines.len() > 10 {
        writeln!(out, "  … and {} more", lines.len() - 10)?;
    }
    writeln!(
        out,
        "nothing is approved while it is damaged (every call asking for approval is denied).\n\
         To recover: quit every other airlock, then run `airlock state repair`: it keeps the \
         damaged file as {}.damaged-<time>, makes an empty database, and says what was lost:",
        db.display()
    )?;
    for line in health.held.lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(false)
}

/// Repairs the database at `db` (see `health::repair`) and prints what happened.
pub fn repair(db: &Path, out: &mut impl Write) -> Result<()> {
    let stamp = stamp(std::time::SystemTime::now());
    match health::repair(db, &stamp)? {
        Repair::NothingToDo => writeln!(
            out,
            "the state database {} is whole (or not made yet): nothing to repair",
            db.display()
        )?,
        Repair::Rebuilt { kept, lost } => {
            let state = db.parent().unwrap_or(Path::new("."));
            writeln!(
                out,
                "the damaged state database is kept as {} (with its -wal and -shm files, if it had them)",
                kept.display()
            )?;
            writeln!(
                out,
                "an empty state database took its place: {}",
                db.display()
            )?;
            writeln!(out, "lost with the damaged one:")?;
            for line in lost.lines() {
                writeln!(out, "  {line}")?;
            }
            writeln!(
                out,
                "still on disk: the audit logs ({}) and run logs ({})",
                crate::store::audit_dir(state).display(),
                crate::store::runs::runs_dir(state).display()
            )?;
        }
    }
    Ok(())
}

/// `YYYYMMDDTHHMMSSZ` for `at` (UTC).
fn stamp(at: std::time::SystemTime) -> String {
    let secs = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a count of days since 1970-01-01 (Howard Hinnant's method).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repair_stamp_is_the_utc_time_written_compactly() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_185_230);
        assert_eq!(stamp(at), "20261202T042030Z");
        assert_eq!(stamp(std::time::UNIX_EPOCH), "19700101T000000Z");
    }
}
