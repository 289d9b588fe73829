//! What keys and the mouse do to the cockpit: the modal stack gets keys first, then the focused
//! pane.

use super::*;

impl App {
    /// Handles a key. Returns the ops it sends.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
        self.now = now;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(top) = self.overlays.last_mut() {
            return match top {
                Overlay::Approval(_) => self.approval_key(key, now),
                Overlay::Help => {
                    if matches!(
                        key.code,
                        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::F(1)
                    ) {
                        self.overlays.pop();
                    }
                    Vec::new()
                }
                Overlay::Grants { selected } => {
                    let count = self.grants.len();
                    match key.code {
                        KeyCode::Esc | KeyCode::Char('q') => {
                            self.overlays.pop();
                            Vec::new()
                        }
                        KeyCode::Char('j') | KeyCode::Down => {
                            *selected = (*selected + 1).min(count.saturating_sub(1));
                            Vec::new()
                        }
                        KeyCode::Char('k') | KeyCode::Up => {
                            *selected = selected.saturating_sub(1);
                            Vec::new()
                        }
                        KeyCode::Char('d') => match self.grants.get(*selected) {
                            Some(g) => vec![Op::RevokeGrant { id: g.id }],
                            None => Vec::new(),
                        },
                        _ => Vec::new(),
                    }
                }
                Overlay::Audit { scroll } => {
                    match key.code {
                        KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(2) => {
                            self.overlays.pop();
                        }
                        KeyCode::Char('k') | KeyCode::Up => *scroll = scroll.saturating_add(1),
                        KeyCode::Char('j') | KeyCode::Down => *scroll = scroll.saturating_sub(1),
                        _ => {}
                    }
                    Vec::new()
                }
                Overlay::ConfirmQuit => {
                    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Char('q'))
                        || (ctrl && key.code == KeyCode::Char('d'));
                    self.overlays.pop();
                    if yes {
                        self.should_quit = true;
                        return vec![Op::Shutdown];
                    }
                    Vec::new()
                }
            };
        }
        // No overlay: global keys first.
        match (key.code, ctrl) {
            (KeyCode::Char('c'), true) => {
                if self.turn_running {
                    return vec![Op::Interrupt];
                }
                self.prompt = new_prompt();
                return Vec::new();
            }
            (KeyCode::Char('d'), true) => return self.request_quit(),
            (KeyCode::Char('g'), true) => return self.open_grants(),
            (KeyCode::F(1), _) => {
                self.overlays.push(Overlay::Help);
                return Vec::new();
            }
            (KeyCode::F(2), _) => return self.open_audit(),
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                self.focus = match self.focus {
                    Focus::Prompt => Focus::Results,
                    Focus::Results => Focus::Prompt,
                };
                return Vec::new();
            }
            _ => {}
        }
        match self.focus {
            Focus::Prompt => self.prompt_key(key),
            Focus::Results => self.results_key(key),
        }
    }

    fn request_quit(&mut self) -> Vec<Op> {
        if self.running_tools() > 0 || self.turn_running {
            self.overlays.push(Overlay::ConfirmQuit);
            Vec::new()
        } else {
            self.should_quit = true;
            vec![Op::Shutdown]
        }
    }

    fn open_audit(&mut self) -> Vec<Op> {
        self.overlays.push(Overlay::Audit { scroll: 0 });
        vec![Op::ListAudit]
    }

    fn open_grants(&mut self) -> Vec<Op> {
        self.overlays.push(Overlay::Grants { selected: 0 });
        vec![Op::ListGrants]
    }

    fn prompt_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let newline = key.modifiers.contains(KeyModifiers::SHIFT)
            || key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline => {
                self.prompt.insert_newline();
                Vec::new()
            }
            KeyCode::Enter => {
                let text = self.draft();
                if text.trim().is_empty() {
                    return Vec::new();
                }
                if self.turn_running {
                    self.entries.push(Entry::Notice(
                        "a turn is running: wait for it, or Ctrl-C to interrupt it (your draft is kept)".into(),
                    ));
                    return Vec::new();
                }
                self.prompt = new_prompt();
                vec![Op::Submit { prompt: text }]
            }
            KeyCode::Char('?') if self.prompt.is_empty() => {
                self.overlays.push(Overlay::Help);
                Vec::new()
            }
            _ => {
                self.prompt.input(key);
                Vec::new()
            }
        }
    }

    fn results_key(&mut self, key: KeyEvent) -> Vec<Op> {
        let count = self.runs.len();
        match key.code {
            KeyCode::Esc => self.focus = Focus::Prompt,
            KeyCode::Char('j') | KeyCode::Down => {
                self.follow = false;
                self.selected_run = (self.selected_run + 1).min(count.saturating_sub(1));
            }
            KeyCode::Char('k') | KeyCode::Up => {
                self.follow = false;
                self.selected_run = self.selected_run.saturating_sub(1);
            }
            KeyCode::Enter => self.expanded = !self.expanded,
            KeyCode::Char('f') => {
                self.follow = !self.follow;
                if self.follow {
                    self.selected_run = count.saturating_sub(1);
                    self.results_scroll = 0;
                }
            }
            KeyCode::Char('x') => {
                if let Some(run) = self.runs.get(self.selected_run) {
                    if run.status == RunStatus::Running {
                        return vec![Op::CancelTool {
                            call_id: run.call_id.clone(),
                        }];
                    }
                }
            }
            KeyCode::Char('g') => return self.open_grants(),
            KeyCode::Char('l') => return self.open_audit(),
            KeyCode::Char('?') => self.overlays.push(Overlay::Help),
            KeyCode::Char('q') => return self.request_quit(),
            _ => {}
        }
        Vec::new()
    }

    fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Op> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        // Ctrl-C always works: deny everything queued and stop the turn. Nothing runs.
        if ctrl && key.code == KeyCode::Char('c') {
            let mut ops: Vec<Op> = overlay
                .queue
                .drain(..)
                .map(|r| Op::Decide {
                    call_id: r.call_id,
                    decision: Decision::Deny {
                        reason: Some("interrupted by the user".into()),
                    },
                })
                .collect();
            ops.push(Op::Interrupt);
            self.close_empty_approval();
            return ops;
        }
        // Typing a reason after `N`.
        if let Some(reason) = overlay.reason.as_mut() {
            return match key.code {
                KeyCode::Esc => {
                    overlay.reason = None;
                    Vec::new()
                }
                KeyCode::Enter => {
                    let text = reason.lines().join("\n").trim().to_string();
                    overlay.reason = None;
                    let decision = Decision::Deny {
                        reason: (!text.is_empty()).then_some(text),
                    };
                    self.decide(decision, now)
                }
                _ => {
                    reason.input(key);
                    Vec::new()
                }
            };
        }
        // Scrolling is always safe, armed or not.
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => {
                overlay.scroll = overlay.scroll.saturating_add(1);
                return Vec::new();
            }
            KeyCode::Char('k') | KeyCode::Up => {
                overlay.scroll = overlay.scroll.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::PageDown => {
                overlay.scroll = overlay.scroll.saturating_add(10);
                return Vec::new();
            }
            KeyCode::PageUp => {
                overlay.scroll = overlay.scroll.saturating_sub(10);
                return Vec::new();
            }
            KeyCode::Home => {
                overlay.scroll = 0;
                return Vec::new();
            }
            KeyCode::End => {
                overlay.scroll = u16::MAX / 2;
                return Vec::new();
            }
            _ => {}
        }
        if now < overlay.armed_at {
            // Too soon: the person may not have seen it yet. Keep it unarmed a little longer.
            overlay.armed_at = now + ARM_DELAY;
            return Vec::new();
        }
        // Ctrl-D is the quit key, Ctrl-A and Ctrl-Y mean something else in many programs: a
        // chord is never an answer, only the plain key the options line shows.
        if !answers_a_modal(&key) {
            return Vec::new();
        }
        let choice = match key.code {
            KeyCode::Esc => Some(ApprovalChoice::Deny),
            KeyCode::Char('d') => {
                let offered = overlay
                    .queue
                    .front()
                    .is_some_and(|r| r.directory_scope.is_some() && r.session_scopes.is_some());
                if offered {
                    return self.decide(Decision::AllowSession { directory: true }, now);
                }
                None
            }
            KeyCode::Char(c) => APPROVAL_OPTIONS
                .iter()
                .find(|o| o.key == c)
                .map(|o| o.choice),
            _ => None,
        };
        match choice {
            None => Vec::new(),
            Some(ApprovalChoice::AllowSession) => {
                let offered = overlay
                    .queue
                    .front()
                    .is_some_and(|r| r.session_scopes.is_some());
                if offered {
                    self.decide(Decision::AllowSession { directory: false }, now)
                } else {
                    Vec::new()
                }
            }
            Some(ApprovalChoice::DenyWithReason) => {
                let mut reason = TextArea::default();
                reason.set_placeholder_text("why not? (Enter sends, Esc goes back)");
                overlay.reason = Some(reason);
                Vec::new()
            }
            Some(other) => match other.decision() {
                Some(decision) => self.decide(decision, now),
                None => Vec::new(),
            },
        }
    }

    /// Answers the front request; the next one (if any) arms again after the delay; when the
    /// queue is empty the modal closes and focus is back where it was, draft intact.
    fn decide(&mut self, decision: Decision, now: Instant) -> Vec<Op> {
        let Some(overlay) = self.approval_mut() else {
            return Vec::new();
        };
        let Some(request) = overlay.queue.pop_front() else {
            return Vec::new();
        };
        overlay.answered += 1;
        overlay.scroll = 0;
        overlay.armed_at = now + ARM_DELAY;
        let granted = matches!(decision, Decision::AllowSession { .. });
        self.close_empty_approval();
        let mut ops = vec![Op::Decide {
            call_id: request.call_id,
            decision,
        }];
        if granted {
            ops.push(Op::ListGrants);
        }
        ops
    }

    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let inside = |(x, y, w, h): (u16, u16, u16, u16)| {
            mouse.column >= x && mouse.column < x + w && mouse.row >= y && mouse.row < y + h
        };
        let up = matches!(mouse.kind, MouseEventKind::ScrollUp);
        let down = matches!(mouse.kind, MouseEventKind::ScrollDown);
        if !up && !down {
            return;
        }
        if let Some(Overlay::Approval(a)) = self.overlays.last_mut() {
            a.scroll = if up {
                a.scroll.saturating_sub(3)
            } else {
                a.scroll.saturating_add(3)
            };
        } else if inside(self.conversation_area) {
            self.conversation_scroll = if up {
                self.conversation_scroll.saturating_add(3)
            } else {
                self.conversation_scroll.saturating_sub(3)
            };
        } else if inside(self.results_area) {
            self.follow = false;
            self.results_scroll = if up {
                self.results_scroll.saturating_add(3)
            } else {
                self.results_scroll.saturating_sub(3)
            };
        }
    }
}

/// Whether a key may answer a modal: no modifier at all, or Shift on an uppercase letter (`N`),
/// which is how terminals report a capital.
pub(super) fn answers_a_modal(key: &KeyEvent) -> bool {
    key.modifiers.is_empty()
        || (key.modifiers == KeyModifiers::SHIFT
            && matches!(key.code, KeyCode::Char(c) if c.is_uppercase()))
}
