//! The inbox: every request waiting on this machine, from any cockpit session or parked
//! headless run, read from the state database. `airlock inbox` prints it; the cockpit lists
//! the ones waiting elsewhere (F4) and answers one through its one-time code, which the
//! database keeps sealed under the state key: the same answer `airlock approve CODE` gives,
//! and the first answer wins wherever it comes from.
//!
//! Nothing here prints a code: a program that runs `airlock inbox` learns what waits, never how
//! to answer it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use serde_json::Value;

use crate::clock::now_ms;
use crate::protocol::{InboxEntry, InboxSource};
use crate::store::db::Store;
use crate::visible::visible_line;

/// The inbox as the state database holds it; `except` is the cockpit session reading it (its
/// own requests are in its modal).
pub struct StateInbox {
    db: PathBuf,
    except: Option<String>,
    watch: Option<crate::store::watch::DirWatch>,
    /// The database, opened once: opening it writes to the state directory, which the watch
    /// would take for a change (reading it again would then never stop).
    store: std::sync::Mutex<Option<Store>>,
    /// The pending ids last read whole, and what they read as: a turn writes its journal to
    /// the state directory often, and an unchanged inbox is not read whole again (a request
    /// can be megabytes, and its signature is checked over all of it).
    last: std::sync::Mutex<Option<(String, Vec<InboxEntry>)>>,
}

impl StateInbox {
    pub fn new(db: PathBuf, except: Option<String>) -> StateInbox {
        let watch = db.parent().and_then(crate::store::watch::DirWatch::new);
        StateInbox {
            db,
            except,
            watch,
            store: std::sync::Mutex::new(None),
            last: std::sync::Mutex::new(None),
        }
    }

    /// Runs `f` on the database, opening it the first time.
    fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T, String>) -> Result<T, String> {
        let mut held = self.store.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_none() {
            *held = Some(Store::open(&self.db).map_err(|e| e.to_string())?);
        }
        match held.as_ref() {
            Some(store) => f(store),
            None => Err("the state database is not open".into()),
        }
    }
}

impl InboxSource for StateInbox {
    fn list(&self) -> Result<Vec<InboxEntry>, String> {
        self.with_store(|db| {
            let ids = db.pending_ids(now_ms()).map_err(|e| e.to_string())?;
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((seen, entries)) = last.as_ref()
                && *seen == ids
            {
                return Ok(entries.clone());
            }
            let entries = self.entries(db)?;
            *last = Some((ids, entries.clone()));
            Ok(entries)
        })
    }

    fn answer(&self, id: i64, allow: bool, reason: Option<String>) -> Result<String, String> {
        let code =
            self.with_store(|db| db.pending_code(id, now_ms()).map_err(|e| e.to_string()))?;
        let Some(code) = code else {
            return Err(
                "it was answered meanwhile, or it expired: nothing was decided here".into(),
            );
        };
        super::park::decide_in(&self.db, &code, allow, false, reason, None)
            .map_err(|e| e.to_string())
    }

    fn changes(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        match &self.watch {
            Some(watch) => Box::pin(watch.changed()),
            None => Box::pin(tokio::time::sleep(crate::store::watch::LONGEST_WAIT)),
        }
    }
}

impl StateInbox {
    fn entries(&self, db: &Store) -> Result<Vec<InboxEntry>, String> {
        let now = now_ms();
        let rows = db.pending(now).map_err(|e| e.to_string())?;
        let mut entries = Vec::new();
        for row in rows {
            // A row changed outside airlock cannot be answered; `airlock approvals list`
            // flags it.
            if !row.signed || Some(&row.session) == self.except.as_ref() {
                continue;
            }
            let summary: Value = serde_json::from_str(&row.summary).unwrap_or(Value::Null);
            let live = db
                .run(&row.run_id)
                .ok()
                .flatten()
                .is_some_and(|run| run.state == "live");
            entries.push(InboxEntry {
                id: row.id,
                session: row.run_id.clone(),
                call_id: row.call_id.clone(),
                tool: row.tool.clone(),
                agent: summary["agent"]["id"].as_str().map(|id| {
                    format!("{id} ({})", summary["agent"]["task"].as_str().unwrap_or(""))
                }),
                risk: summary["risk"].as_str().unwrap_or("?").to_string(),
                reasons: summary["reasons"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.as_str().map(str::to_string))
                    .collect(),
                preview: preview_lines(&summary["preview"], &row.frozen.canonical),
                created_ms: row.created_ms,
                expires_ms: row.expires_ms,
                parked: !live,
            });
        }
        Ok(entries)
    }
}

/// What would run, as lines: the command, a diff, or the arguments.
fn preview_lines(preview: &Value, canonical: &str) -> Vec<String> {
    let diff = |p: &Value| -> Vec<String> {
        p["unified"]
            .as_str()
            .unwrap_or("")
            .lines()
            .map(str::to_string)
            .collect()
    };
    match preview["kind"].as_str() {
        Some("command") => vec![format!("$ {}", preview["command"].as_str().unwrap_or(""))],
        Some("diff") => diff(preview),
        Some("mcp") if preview["change"]["kind"] == "diff" => {
            let mut lines = vec![format!("args: {canonical}")];
            lines.extend(diff(&preview["change"]));
            lines
        }
        _ => vec![format!("args: {canonical}")],
    }
}

/// `airlock inbox`: every request waiting on this machine, oldest first, with its session,
/// agent, age, reasons and what it would run, and where it is answered.
pub fn print(out: &mut impl Write) -> Result<()> {
    let inbox = StateInbox::new(super::runs::db_path(), None);
    let entries = inbox.list().map_err(|e| anyhow::anyhow!(e))?;
    if entries.is_empty() {
        writeln!(out, "nothing waits for an answer on this machine")?;
        return Ok(());
    }
    let now = now_ms();
    writeln!(
        out,
        "{} request{} wait{} for an answer on this machine:",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
        if entries.len() == 1 { "s" } else { "" }
    )?;
    for e in &entries {
        writeln!(
            out,
            "\n{}  {} {}  {}  {}  risk {}  waiting {}, expires in {}",
            visible_line(&e.session),
            if e.parked {
                "(parked run)"
            } else {
                "(cockpit)"
            },
            visible_line(e.agent.as_deref().unwrap_or(crate::protocol::MAIN_AGENT)),
            visible_line(&e.call_id),
            visible_line(&e.tool),
            visible_line(&e.risk),
            super::park::duration_words(now.saturating_sub(e.created_ms) / 1000),
            super::park::duration_words(e.expires_ms.saturating_sub(now) / 1000),
        )?;
        for r in &e.reasons {
            writeln!(out, "  • {}", visible_line(r))?;
        }
        for l in &e.preview {
            writeln!(out, "  {}", visible_line(l))?;
        }
    }
    writeln!(
        out,
        "\nanswer one in any running cockpit (F4: the inbox), in its own cockpit, or with \
         `airlock approve CODE` / `airlock deny CODE` and the code it showed (a parked run's \
         was printed when it parked); codes are never printed here"
    )?;
    Ok(())
}
