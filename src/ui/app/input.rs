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
                if let Some(run) = self.runs.get(self.selected_run)
                    && run.status == RunStatus::Running
                {
                    return vec![Op::CancelTool {
                        call_id: run.call_id.clone(),
                    }];
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
            a.scroll_rows(if up { -3 } else { 3 });
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
