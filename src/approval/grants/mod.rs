//! Session grants: the memory behind "allow for the session".
//!
//! When a human answers an approval prompt with "allow for the session", the
//! gate records a [`Grant`] here: a narrow [`GrantScope`] (a command prefix, one
//! exact path, one directory tree, or one MCP call's exact arguments) tied to a
//! session, a workspace and a tool.
//! Later calls ask [`GrantStore::cover`] whether *every* part of the call (each
//! [`Subject`]) falls inside some live grant; only then may the call skip the
//! prompt.
//!
//! This module owns that decision, so it errs on the side of asking again:
//! matching is exact (whole argv words, whole path components, no globbing or
//! case folding), a call is covered only if all of its subjects are, expired and
//! used-up grants are dropped, and the check-and-consume of limited-use grants
//! happens under a single lock so a last use can never be spent twice.
//! The store has no clock of its own: callers pass `now`, which keeps the
//! behaviour deterministic and testable.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

/// Unix time in milliseconds. Callers pass `now` explicitly; the store never reads a clock.
use crate::clock::Millis;

use crate::protocol::{GrantScope, Subject};

impl GrantScope {
    /// Whether this scope covers one subject of a call.
    ///
    /// Fails closed on degenerate input: an empty command prefix, an empty
    /// path, or any path (granted or asked for) that contains a `..`
    /// component never matches, because component-wise comparison cannot
    /// tell where such a path really points.
    pub fn covers(&self, subject: &Subject) -> bool {
        match (self, subject) {
            (GrantScope::Command { prefix }, Subject::Command(argv)) => {
                !prefix.is_empty() && argv.starts_with(prefix)
            }
            (GrantScope::Path { path }, Subject::Path(p)) => {
                is_matchable_path(path) && is_matchable_path(p) && p == path
            }
            (GrantScope::Directory { path }, Subject::Path(p)) => {
                is_matchable_path(path) && is_matchable_path(p) && p.starts_with(path)
            }
            (
                GrantScope::McpCall {
                    tool,
                    arguments,
                    definition,
                },
                Subject::McpCall {
                    tool: t,
                    arguments: a,
                    definition: d,
                },
            ) => {
                ![tool, arguments, definition].iter().any(|s| s.is_empty())
                    && (tool, arguments, definition) == (t, a, d)
            }
            (GrantScope::Command { .. }, Subject::Path(_) | Subject::McpCall { .. })
            | (
                GrantScope::Path { .. } | GrantScope::Directory { .. },
                Subject::Command(_) | Subject::McpCall { .. },
            )
            | (GrantScope::McpCall { .. }, Subject::Command(_) | Subject::Path(_)) => false,
        }
    }

    /// human text for the approval modal, e.g. "`cargo test *`", "the file src/main.rs", "anything under src/"
    ///
    /// Control characters are escaped so a crafted file name or argument
    /// cannot repaint the terminal around the modal.
    pub fn describe(&self) -> String {
        match self {
            GrantScope::Command { prefix } if prefix.is_empty() => {
                "nothing (empty command prefix)".to_string()
            }
            GrantScope::Command { prefix } => {
                let words: Vec<String> = prefix.iter().map(|w| quote_word(w)).collect();
                format!("`{} *`", words.join(" "))
            }
            GrantScope::Path { path } => {
                format!("the file {}", sanitize(&path.display().to_string()))
            }
            GrantScope::Directory { path } => {
                let mut shown = sanitize(&path.display().to_string());
                if !shown.ends_with('/') {
                    shown.push('/');
                }
                format!("anything under {shown}")
            }
            GrantScope::McpCall {
                tool, arguments, ..
            } => format!(
                "`{}` with exactly these arguments (sha256:{})",
                sanitize(tool),
                sanitize(arguments.get(..12).unwrap_or(arguments))
            ),
        }
    }
}

/// A path can take part in a match only if it is non-empty and has no `..` component.
fn is_matchable_path(path: &Path) -> bool {
    !path.as_os_str().is_empty() && !path.components().any(|c| c == Component::ParentDir)
}

/// Shows one argv word so word boundaries stay visible: words that are empty or
/// contain whitespace or quotes are single-quoted.
fn quote_word(word: &str) -> String {
    let needs_quotes = word.is_empty()
        || word
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '"' || c == '`');
    let word = sanitize(word);
    if needs_quotes {
        format!("'{}'", word.replace('\'', r"'\''"))
    } else {
        word
    }
}

/// Replaces control characters with visible `\u{..}` escapes.
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// A stored permission: `scope` is allowed for `tool` in `session` and `workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub id: u64,
    pub session: String,
    pub workspace: PathBuf,
    pub tool: String,
    pub scope: GrantScope,
    pub created_ms: Millis,
    /// The grant is dead once `expires_ms <= now`.
    pub expires_ms: Option<Millis>,
    pub max_uses: Option<u32>,
    pub uses: u32,
}

impl Grant {
    fn is_expired(&self, now: Millis) -> bool {
        self.expires_ms.is_some_and(|expires| expires <= now)
    }

    fn is_exhausted(&self) -> bool {
        self.max_uses.is_some_and(|max| self.uses >= max)
    }

    fn is_live(&self, now: Millis) -> bool {
        !self.is_expired(now) && !self.is_exhausted()
    }

    fn applies_to(&self, session: &str, workspace: &Path, tool: &str) -> bool {
        self.session == session && self.workspace == workspace && self.tool == tool
    }
}

/// What the gate asks to store; the store fills in id, times and use count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGrant {
    pub session: String,
    pub workspace: PathBuf,
    pub tool: String,
    pub scope: GrantScope,
    /// Lifetime from `now`; `None` lasts until revoked.
    pub ttl_ms: Option<Millis>,
    /// `None` is unlimited; `Some(0)` yields a grant that never covers anything.
    pub max_uses: Option<u32>,
}

#[derive(Debug, Default)]
struct Inner {
    next_id: u64,
    grants: BTreeMap<u64, Grant>,
}

impl Inner {
    /// Drops every grant that can no longer cover anything.
    fn purge(&mut self, now: Millis) {
        self.grants.retain(|_, g| g.is_live(now));
    }
}

/// All session grants of one process. `Send + Sync`; share it behind an `Arc`.
#[derive(Debug, Default)]
pub struct GrantStore {
    inner: Mutex<Inner>,
}

impl GrantStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A panic elsewhere while holding the lock cannot leave `Inner` half
    /// updated (no critical section panics between check and write), so a
    /// poisoned lock is recovered rather than propagated.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores a grant and returns it with its fresh id (ids start at 1 and never repeat).
    ///
    /// A grant that is dead on arrival (`ttl_ms == Some(0)` or
    /// `max_uses == Some(0)`) is returned but not kept.
    pub fn add(&self, grant: NewGrant, now: Millis) -> Grant {
        let mut inner = self.lock();
        inner.next_id = inner.next_id.saturating_add(1);
        let stored = Grant {
            id: inner.next_id,
            session: grant.session,
            workspace: grant.workspace,
            tool: grant.tool,
            scope: grant.scope,
            created_ms: now,
            expires_ms: grant.ttl_ms.map(|ttl| now.saturating_add(ttl)),
            max_uses: grant.max_uses,
            uses: 0,
        };
        if stored.is_live(now) {
            inner.grants.insert(stored.id, stored.clone());
        }
        stored
    }

    /// Covered only if EVERY subject is covered by some live grant with the same session, workspace and tool.
    /// If covered, consume one use of each grant that was used (check and consume under ONE lock: no
    /// window where two callers both take the last use), drop grants whose uses are exhausted, and return the ids used.
    /// An empty `subjects` slice is NOT covered (returns None): nothing asked, so no grant applies.
    ///
    /// A grant that covers several subjects of one call is consumed once. When
    /// more than one grant covers a subject, the store prefers one already used
    /// for this call, then one without a use limit, then the oldest. A call that
    /// is not covered consumes nothing. The returned ids are sorted ascending.
    pub fn cover(
        &self,
        session: &str,
        workspace: &Path,
        tool: &str,
        subjects: &[Subject],
        now: Millis,
    ) -> Option<Vec<u64>> {
        let mut inner = self.lock();
        inner.purge(now);
        if subjects.is_empty() {
            return None;
        }

        let mut used: Vec<u64> = Vec::new();
        for subject in subjects {
            let chosen = inner
                .grants
                .values()
                .filter(|g| g.applies_to(session, workspace, tool) && g.scope.covers(subject))
                .min_by_key(|g| (!used.contains(&g.id), g.max_uses.is_some(), g.id))
                .map(|g| g.id)?;
            if !used.contains(&chosen) {
                used.push(chosen);
            }
        }

        for id in &used {
            if let Some(grant) = inner.grants.get_mut(id) {
                grant.uses = grant.uses.saturating_add(1);
            }
        }
        inner.grants.retain(|_, g| !g.is_exhausted());
        used.sort_unstable();
        Some(used)
    }

    /// Whether `cover` would cover these subjects now, without using anything up: for a
    /// forecast, never for a decision.
    pub fn would_cover(
        &self,
        session: &str,
        workspace: &Path,
        tool: &str,
        subjects: &[Subject],
        now: Millis,
    ) -> bool {
        let inner = self.lock();
        !subjects.is_empty()
            && subjects.iter().all(|subject| {
                inner.grants.values().any(|g| {
                    g.is_live(now)
                        && g.applies_to(session, workspace, tool)
                        && g.scope.covers(subject)
                })
            })
    }

    /// live grants for a session (expired ones are removed from the store on every read, including cover and list)
    ///
    /// Sorted by id, oldest first.
    pub fn list(&self, session: &str, now: Millis) -> Vec<Grant> {
        let mut inner = self.lock();
        inner.purge(now);
        inner
            .grants
            .values()
            .filter(|g| g.session == session)
            .cloned()
            .collect()
    }

    /// Removes one grant; `false` if no grant with that id is stored.
    pub fn revoke(&self, id: u64) -> bool {
        self.lock().grants.remove(&id).is_some()
    }

    /// Removes every grant of a session (e.g. when it ends); returns how many were removed.
    pub fn revoke_session(&self, session: &str) -> usize {
        let mut inner = self.lock();
        let before = inner.grants.len();
        inner.grants.retain(|_, g| g.session != session);
        before - inner.grants.len()
    }
}

#[cfg(test)]
mod tests;
