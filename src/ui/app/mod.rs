//! The cockpit's state and what keys and agent events do to it. Nothing here draws or talks to
//! the terminal; `App` returns the `Op`s to send, so it is tested without an agent.
//!
//! The modal stack owns the keyboard: the top overlay gets every key; with no overlay, keys go to
//! the focused pane, and the prompt keeps its draft through everything.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use crate::output::BoundedOutput;
use crate::protocol::{AgentEvent, GrantSummary, Op, TurnOutcome};
use crate::protocol::{SandboxLabel, Stream, ToolStatus};

mod agents;
mod batch;
mod devices;
mod events;
mod ids;
mod input;
mod refused;
mod restore;

pub use super::overlay::approval::ARM_DELAY;
pub use super::overlay::{ApprovalOverlay, Overlay};
pub use agents::{AgentState, AgentView, Agents};
pub use batch::{Batch, Place};
pub use ids::ShortIds;
pub use refused::SandboxNote;

/// How long after a `Ctrl-C` on an empty, idle prompt a second one quits.
pub const QUIT_AGAIN: Duration = Duration::from_secs(2);

/// Finished runs whose kept output (head and tail) stays in memory; older runs keep their
/// header and the path of their full log, so a long session does not grow with every run.
pub const KEPT_RUNS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    User(String),
    Assistant(String),
    Tool {
        call_id: String,
        /// The id the screen shows (`ShortIds`).
        short_id: String,
        title: String,
        state: ToolLine,
    },
    Notice(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolLine {
    Asking,
    Denied(String),
    Running,
    Finished(ToolStatus, Option<i32>),
    /// Finished, and its output says the sandbox refused this many things.
    Refused(ToolStatus, Option<i32>, usize),
    /// It was running when airlock stopped (a reopened session): how it ended is unknown.
    Interrupted,
}

impl ToolLine {
    /// How a run that ended as `status` is shown, with what the sandbox refused.
    pub fn ended(status: RunStatus, refused: Option<&SandboxNote>) -> ToolLine {
        match (status, refused) {
            (RunStatus::Done(status, code), Some(note)) => {
                ToolLine::Refused(status, code, note.refusals)
            }
            (RunStatus::Done(status, code), None) => ToolLine::Finished(status, code),
            (RunStatus::Interrupted | RunStatus::Running, _) => ToolLine::Interrupted,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Run {
    pub call_id: String,
    /// The id the screen shows (`ShortIds`).
    pub short_id: String,
    pub title: String,
    pub status: RunStatus,
    pub started: Instant,
    pub ended: Option<Instant>,
    pub output: BoundedOutput,
    /// Where the full output is on disk, once the run has finished (if it was written).
    pub log: Option<std::path::PathBuf>,
    /// The kept output was let go (an old run); the log file still has all of it.
    pub trimmed: bool,
    /// Shown again from a reopened session: how long it took is not known here.
    pub earlier: bool,
    /// The change it makes, as the approval modal showed it (a file change that asked): shown
    /// as its body while it printed nothing.
    pub diff: Option<String>,
    /// The sandbox it ran in, as the modal's title named it (a command that asked), and
    /// whether that is a warning (no sandbox).
    pub sandbox: Option<SandboxLabel>,
    /// What the sandbox refused, when its note is in the run's output.
    pub refused: Option<SandboxNote>,
    /// The sub-agent that ran it (`None`: the session's own agent).
    pub agent: Option<String>,
    /// What it changed in the workspace (kept: `u` undoes it).
    pub changes: Option<crate::protocol::ChangeCount>,
}

impl Run {
    /// A run as it starts: running, nothing shown yet.
    pub fn new(call_id: String, short_id: String, title: String, started: Instant) -> Run {
        Run {
            call_id,
            short_id,
            title,
            status: RunStatus::Running,
            started,
            ended: None,
            output: BoundedOutput::new(),
            log: None,
            trimmed: false,
            earlier: false,
            diff: None,
            sandbox: None,
            refused: None,
            agent: None,
            changes: None,
        }
    }

    /// The rows of its body: its output, or its change while it printed nothing.
    pub fn body_len(&self) -> usize {
        match (&self.diff, self.output.len()) {
            (Some(diff), 0) => diff.lines().count(),
            (_, n) => n,
        }
    }
}

/// What the approval modal showed of a call that a run may need later: its diff and sandbox.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    pub diff: Option<String>,
    pub sandbox: Option<SandboxLabel>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Running,
    Done(ToolStatus, Option<i32>),
    /// It was running when airlock stopped (a reopened session): how it ended is unknown.
    Interrupted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Prompt,
    Results,
}

/// Facts for the status bar.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub model: String,
    pub mode: String,
    pub workspace: String,
}

pub struct App {
    pub entries: Vec<Entry>,
    pub runs: Vec<Run>,
    pub selected_run: usize,
    pub expanded: bool,
    pub follow: bool,
    /// Where the conversation's view stands: following the newest line, or scrolled back.
    pub conversation: super::conversation::View,
    pub results_scroll: u16,
    pub prompt: TextArea<'static>,
    pub focus: Focus,
    pub overlays: Vec<Overlay>,
    pub status: Status,
    pub grants: Vec<GrantSummary>,
    /// This session's audit trail, as the agent last sent it.
    pub audit: Vec<String>,
    pub turn_running: bool,
    /// The calls of the model's last step, for the modal's "2 of 5".
    pub batch: Batch,
    pub should_quit: bool,
    /// The clock the screen shows (elapsed times); set by the loop, fixed in tests.
    pub now: Instant,
    /// Wall-clock milliseconds, for approval deadlines; set by the loop, fixed in tests.
    pub wall_ms: u64,
    /// Last known areas of the panes, for mouse scrolling: (x, y, width, height).
    pub conversation_area: (u16, u16, u16, u16),
    pub results_area: (u16, u16, u16, u16),
    /// Last known size of the whole screen (width, height), for scrolling the help.
    pub screen: (u16, u16),
    /// A reopened session's turn goes on: its next `TurnStarted` says so instead of showing a
    /// prompt the person never typed.
    pub resumed_turn: bool,
    /// The approval the whole screen was last repainted for, and whether its keys were live.
    pub repainted_for: Option<(String, bool)>,
    /// The short id each call is shown with.
    pub ids: ShortIds,
    /// What the modal showed of calls asked about and not started yet (by call id).
    pub asked: HashMap<String, Asked>,
    /// Calls answered with a session grant that have not started or been refused yet: the
    /// grant list is asked for again when each settles (the gate stores the grant then).
    pub granting: Vec<String>,
    /// The session's sub-agents, and whose conversation is on screen.
    pub agents: Agents,
    /// Nudges the person when a request starts waiting while the terminal has no focus
    /// (`None`: never, as in tests of other things).
    pub notifier: Option<super::notify::Notifier>,
    /// Requests waiting elsewhere on this machine (other sessions, parked runs), as last read.
    pub inbox: Vec<crate::protocol::InboxEntry>,
    /// Where the inbox is read and answered (`None`: no state database, as in tests).
    pub inbox_source: Option<std::sync::Arc<dyn crate::protocol::InboxSource>>,
    /// Shows and does undos of the session's calls.
    pub undo_source: Option<std::sync::Arc<dyn crate::protocol::UndoSource>>,
    /// The approval page for other devices, when it is served (`--remote`).
    pub remote: Option<std::sync::Arc<dyn crate::protocol::RemotePairing>>,
    /// Bytes for the terminal that the loop writes out after the events that made them
    /// (a desktop notification).
    pub nudges: Vec<u8>,
    /// The results pane shows only this agent's runs (`main` or a sub-agent's id), when set.
    pub run_filter: Option<String>,
    /// A `Ctrl-C` on an empty, idle prompt: until then a second one quits.
    pub quit_armed_until: Option<Instant>,
    /// A proposal's text to open in the person's editor (`e` on a file change): the loop
    /// suspends the screen for it, then hands the result to `editor_done`.
    pub editor_job: Option<EditorJob>,
}

/// A proposal's text opened in `$VISUAL` / `$EDITOR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorJob {
    pub call_id: String,
    /// The text as proposed: a `write_file`'s content, an `edit_file`'s replacement.
    pub text: String,
    /// The file name's ending the editor gets (its syntax), e.g. `.py`.
    pub suffix: String,
}

fn new_prompt() -> TextArea<'static> {
    let mut prompt = TextArea::default();
    prompt.set_placeholder_text("Ask the agent… (Enter sends, Shift-Enter adds a line, F1 help)");
    prompt
}

impl App {
    pub fn new(status: Status, now: Instant) -> App {
        App {
            entries: Vec::new(),
            runs: Vec::new(),
            selected_run: 0,
            expanded: false,
            follow: true,
            conversation: Default::default(),
            results_scroll: 0,
            prompt: new_prompt(),
            focus: Focus::Prompt,
            overlays: Vec::new(),
            status,
            grants: Vec::new(),
            audit: Vec::new(),
            turn_running: false,
            batch: Batch::default(),
            should_quit: false,
            now,
            wall_ms: 0,
            conversation_area: (0, 0, 0, 0),
            results_area: (0, 0, 0, 0),
            screen: (0, 0),
            resumed_turn: false,
            repainted_for: None,
            editor_job: None,
            ids: ShortIds::default(),
            asked: HashMap::new(),
            granting: Vec::new(),
            agents: Agents::default(),
            run_filter: None,
            notifier: None,
            inbox: Vec::new(),
            inbox_source: None,
            undo_source: None,
            remote: None,
            nudges: Vec::new(),
            quit_armed_until: None,
        }
    }

    /// The id the screen shows for `call_id`.
    pub fn short_id<'a>(&'a self, call_id: &'a str) -> &'a str {
        self.ids.shown(call_id)
    }

    /// Whether a second `Ctrl-C` now quits.
    pub fn quit_armed(&self) -> bool {
        self.quit_armed_until.is_some_and(|until| self.now < until)
    }

    /// Whether the next frame must repaint every cell, not only the ones that changed: a request
    /// has just come to the front of the approval modal, or its keys have just gone live.
    /// Whatever another program drew on the terminal is then wiped before a decision can be
    /// made on it (cells the cockpit thinks unchanged are otherwise never redrawn).
    pub fn take_full_repaint(&mut self, now: Instant) -> bool {
        // Called on every pass of the loop (a flood of output included): nothing is allocated
        // unless the front request or its arming changed.
        let front = self.overlays.iter().find_map(|o| match o {
            Overlay::Approval(a) => a
                .queue
                .front()
                .map(|r| (r.call_id.as_str(), now >= a.armed_at)),
            _ => None,
        });
        let unchanged = match (&front, &self.repainted_for) {
            (Some((id, armed)), Some((was_id, was_armed))) => id == was_id && armed == was_armed,
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            return false;
        }
        let due = front.is_some();
        self.repainted_for = front.map(|(id, armed)| (id.to_string(), armed));
        due
    }

    pub fn draft(&self) -> String {
        self.prompt.lines().join("\n")
    }

    /// The hunks the front approval request can be reviewed by (0 when it is not a diff that
    /// can be answered hunk by hunk), and how many of them are kept.
    pub fn approval_hunks(&self) -> (usize, usize) {
        self.overlays
            .iter()
            .rev()
            .find_map(|o| match o {
                Overlay::Approval(a) => a.diff.review.as_ref().map(|r| {
                    let count = a.diff.hunk_count();
                    (count, r.kept(count).len())
                }),
                _ => None,
            })
            .unwrap_or((0, 0))
    }

    /// The proposal text the loop is to open in the person's editor, if any.
    pub fn take_editor_job(&mut self) -> Option<EditorJob> {
        self.editor_job.take()
    }

    /// The editor is done with `job`: changed text goes to the gate to be judged again (the
    /// proposal comes back marked as changed); unchanged text, a failed or missing editor,
    /// change nothing and the modal says why.
    pub fn editor_done(&mut self, job: EditorJob, edited: Result<String, String>) -> Vec<Op> {
        let Some(Overlay::Approval(approval)) = self
            .overlays
            .iter_mut()
            .find(|o| matches!(o, Overlay::Approval(_)))
        else {
            return Vec::new();
        };
        let why = match edited {
            Ok(text) if text != job.text => {
                let now = self.now;
                return approval.amend_front(
                    &job.call_id,
                    crate::protocol::Amendment::Content { content: text },
                    now,
                );
            }
            Ok(_) => "the editor left the change as it was: nothing changed".to_string(),
            Err(why) => why,
        };
        approval.notice_front(&job.call_id, why);
        Vec::new()
    }

    pub fn pending_approvals(&self) -> usize {
        self.overlays
            .iter()
            .map(|o| match o {
                Overlay::Approval(a) => a.queue.len(),
                _ => 0,
            })
            .sum()
    }

    pub fn running_tools(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.status == RunStatus::Running)
            .count()
    }

    /// Everything on screen that changes with time alone: running tools' elapsed seconds, the
    /// modal's arm countdown (tenths) and timeout countdown (seconds). The loop redraws on a tick
    /// only when this changes, so a silent running tool costs one frame a second and an idle
    /// cockpit none.
    pub fn clock_face(&self, now: Instant, wall_ms: u64) -> Vec<u64> {
        let mut face: Vec<u64> = self
            .runs
            .iter()
            .filter(|r| r.status == RunStatus::Running)
            .map(|r| now.saturating_duration_since(r.started).as_secs())
            .collect();
        for overlay in &self.overlays {
            match overlay {
                Overlay::Approval(a) => face.extend(a.clock_face(now, wall_ms)),
                // The undo window's `y` arming: its title says when it is live.
                Overlay::Undo(u) => face.push(u64::from(now < u.armed_at)),
                _ => {}
            }
        }
        face.push(u64::from(
            self.quit_armed_until.is_some_and(|until| now < until),
        ));
        face
    }

    /// When `clock_face` may next change, if anything on screen moves with time: the next whole
    /// second of a running tool, the next tenth of a second while an approval's keys arm, the
    /// next second of an approval's time-out. `None` when nothing moves: a modal that waits,
    /// armed and without a time-out, wakes nothing.
    pub fn next_clock_change(&self, now: Instant, wall_ms: u64) -> Option<Instant> {
        let runs = self
            .runs
            .iter()
            .filter(|r| r.status == RunStatus::Running)
            .map(|r| {
                let whole = now.saturating_duration_since(r.started).as_secs() + 1;
                r.started + Duration::from_secs(whole)
            });
        let approval = self.overlays.iter().find_map(|o| match o {
            Overlay::Approval(a) => a.next_change(now, wall_ms),
            Overlay::Undo(u) => (now < u.armed_at).then_some(u.armed_at),
            _ => None,
        });
        let quit_hint = self.quit_armed_until.filter(|until| now < *until);
        runs.chain(approval).chain(quit_hint).min()
    }

    /// After a frame: the renderer's report of the approval preview it drew (request and size).
    pub fn approval_drawn(&mut self, drawn: Option<(String, crate::ui::preview::View)>) {
        if let (Some((call_id, view)), Some(overlay)) = (drawn, self.approval_mut()) {
            overlay.drawn(&call_id, view);
        }
    }

    fn approval_mut(&mut self) -> Option<&mut ApprovalOverlay> {
        self.overlays.iter_mut().find_map(|o| match o {
            Overlay::Approval(a) => Some(a.as_mut()),
            _ => None,
        })
    }

    fn tool_line(&mut self, call_id: &str, state: ToolLine) {
        for entry in self.entries.iter_mut().rev() {
            if let Entry::Tool {
                call_id: id,
                state: s,
                ..
            } = entry
                && id == call_id
            {
                *s = state;
                return;
            }
        }
    }

    fn ensure_tool_line(&mut self, call_id: &str, title: String, state: ToolLine) {
        let exists = self
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Tool { call_id: id, .. } if id == call_id));
        if exists {
            self.tool_line(call_id, state);
        } else {
            let short_id = self.ids.note(call_id);
            self.entries.push(Entry::Tool {
                call_id: call_id.to_string(),
                short_id,
                title,
                state,
            });
        }
    }

    /// Lets go of the kept output of finished runs older than the newest `KEPT_RUNS` finished
    /// ones (runs with a log file only: nothing is lost that is not on disk).
    fn trim_old_runs(&mut self) {
        let mut finished = 0;
        for run in self.runs.iter_mut().rev() {
            if run.status == RunStatus::Running {
                continue;
            }
            finished += 1;
            if finished > KEPT_RUNS {
                // A change shown from the modal is not on disk anywhere else: it goes, and the
                // run shows what it printed (nothing), as it would have without it.
                run.diff = None;
            }
            if finished > KEPT_RUNS && !run.trimmed && run.log.is_some() {
                run.output = BoundedOutput::new();
                run.trimmed = true;
            }
        }
    }

    fn close_empty_approval(&mut self) {
        self.overlays
            .retain(|o| !matches!(o, Overlay::Approval(a) if a.queue.is_empty()));
    }
}

#[cfg(test)]
mod tests;
