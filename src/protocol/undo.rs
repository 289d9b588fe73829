//! Undo, as the agent and a driver see it. Before a call that may change the workspace runs, its
//! state is kept (`WorkspaceHistory::before`); after, what the call changed is recorded
//! (`after`), counted for the run's line. A driver shows what undoing a call would do
//! (`UndoSource::plan`) and does it (`apply`); the model is told at its next request
//! (`WorkspaceHistory::take_news`).

use serde::{Deserialize, Serialize};

/// What one call changed in the workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeCount {
    pub created: usize,
    pub modified: usize,
    pub deleted: usize,
    /// Files whose content was not kept (bulky ignored or build directories, files too large):
    /// their change is known by size and time only, and undo cannot bring them back.
    #[serde(default)]
    pub not_kept: usize,
}

impl ChangeCount {
    /// No file changed.
    pub fn is_empty(&self) -> bool {
        self.created + self.modified + self.deleted == 0
    }

    /// `changed 3 files, deleted 1`, as a run's line says it.
    pub fn words(&self) -> String {
        let files = |n: usize| if n == 1 { "file" } else { "files" };
        let mut parts = Vec::new();
        if self.modified > 0 {
            parts.push(format!(
                "changed {} {}",
                self.modified,
                files(self.modified)
            ));
        }
        if self.created > 0 {
            parts.push(format!("created {}", self.created));
        }
        if self.deleted > 0 {
            parts.push(format!("deleted {}", self.deleted));
        }
        if parts.is_empty() {
            return "changed no file".into();
        }
        let mut text = parts.join(", ");
        if self.not_kept > 0 {
            text.push_str(&format!(" ({} not kept)", self.not_kept));
        }
        text
    }
}

/// Keeps the workspace's history for the agent. Both calls block (they read the workspace):
/// the agent makes them off its task.
pub trait WorkspaceHistory: Send + Sync {
    /// Keeps the workspace as it is before call `call_id` runs. An error means it could not
    /// be kept: the call does not run (it could not be undone).
    fn before(&self, call_id: &str, title: &str) -> Result<(), String>;

    /// Records what call `call_id` changed since its `before`.
    fn after(&self, call_id: &str) -> Result<ChangeCount, String>;

    /// What the model must be told since it was last told (calls undone, files back as they
    /// were), each once.
    fn take_news(&self) -> Vec<String>;
}

/// What undoing would do to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileUndo {
    /// Relative to the workspace (model or user text: shown through `visible_line`).
    pub path: String,
    pub action: UndoAction,
    /// The change as a unified diff from what is there now to what undo leaves (or a line
    /// saying what it is for a binary file, a link or a mode).
    pub diff: Vec<String>,
    /// Why it is not what the undone calls left: changed later by another call, or by someone
    /// else. Such a file is overwritten only when the person chooses to.
    pub conflict: Option<String>,
    /// Its content before was not kept (it can be deleted, not brought back).
    pub not_kept: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UndoAction {
    /// Its content (or mode, or link target) goes back to what it was.
    Restore,
    /// The undone calls created it: it goes.
    Delete,
    /// The undone calls deleted it: it comes back.
    BringBack,
}

impl UndoAction {
    pub fn as_str(self) -> &'static str {
        match self {
            UndoAction::Restore => "restore",
            UndoAction::Delete => "delete",
            UndoAction::BringBack => "bring back",
        }
    }
}

/// What undoing a call (and, with `and_later`, every call after it) would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoPlan {
    pub call_id: String,
    pub and_later: bool,
    /// The calls undone, in the order they ran: (call id, title).
    pub calls: Vec<(String, String)>,
    pub files: Vec<FileUndo>,
    /// What the plan cannot do, said out loud (temp and network effects, content not kept,
    /// calls that ran at the same time).
    pub notes: Vec<String>,
    /// Names this plan: `apply` does it only if the workspace still gives the same plan.
    pub digest: String,
}

/// Shows and does undos for a driver.
pub trait UndoSource: Send + Sync {
    /// What undoing `call_id` (and every later call, with `and_later`) would do now.
    fn plan(&self, call_id: &str, and_later: bool) -> Result<UndoPlan, String>;

    /// Does the plan that was shown (`shown`, its digest checked against the workspace now);
    /// files in conflict are overwritten only with `overwrite`. Returns what was done, in
    /// words. The undo is itself recorded, and can be undone.
    fn apply(&self, shown: &UndoPlan, overwrite: bool) -> Result<String, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_count_reads_as_a_runs_line_says_it() {
        let count = ChangeCount {
            created: 0,
            modified: 3,
            deleted: 1,
            not_kept: 0,
        };
        assert_eq!(count.words(), "changed 3 files, deleted 1");
        let one = ChangeCount {
            created: 2,
            modified: 1,
            deleted: 0,
            not_kept: 1,
        };
        assert_eq!(one.words(), "changed 1 file, created 2 (1 not kept)");
        assert!(ChangeCount::default().is_empty());
    }
}
