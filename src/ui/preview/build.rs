//! The document's lines before a diff: reasons, parts, the command, the arguments. What decides
//! comes first (deny, then ask), then what runs, then what is allowed, so that the first screen
//! of a long request shows the part that made it ask, not the forty harmless ones before it.

use ratatui::style::{Color, Modifier, Style};

use super::{DocLine, MustSee, SCOPES_IN_FOOTER, dim, ruling_style};
use crate::protocol::ApprovalRequest;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Preview;
use crate::protocol::Reason;
use crate::protocol::Ruling;
use crate::visible::{visible, visible_line};

const TEXT_CONT: &str = "  ↪ ";
const COMMAND_CONT: &str = "↪ ";

struct Lines {
    lines: Vec<DocLine>,
    must: Vec<(usize, MustSee)>,
}

impl Lines {
    fn push(&mut self, text: String, cont: &'static str, style: Style) {
        self.lines.push(DocLine {
            text,
            cont,
            style,
            allowed_part: false,
        });
    }

    fn push_must(&mut self, text: String, cont: &'static str, style: Style, must: MustSee) {
        self.must.push((self.lines.len(), must));
        self.push(text, cont, style);
    }
}

/// Deny before ask before allow; the order among equals is the verdict's.
fn severest_first<T>(items: &mut [(usize, T)], ruling: impl Fn(&T) -> Ruling) {
    items.sort_by_key(|(i, item)| (std::cmp::Reverse(ruling(item)), *i));
}

/// "1 part", "2 parts".
pub(crate) fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn icon(ruling: Ruling) -> &'static str {
    match ruling {
        Ruling::Allow => "✓",
        Ruling::Ask => "?",
        Ruling::Deny => "✗",
    }
}

pub(super) fn prelude(request: &ApprovalRequest) -> (Vec<DocLine>, Vec<(usize, MustSee)>) {
    let mut out = Lines {
        lines: Vec::new(),
        must: Vec::new(),
    };
    // A change the person made, or why it was refused, before anything else.
    if let Some(notice) = &request.notice {
        out.push(
            format!("⚠ {}", visible_line(notice)),
            TEXT_CONT,
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        );
    }
    // What the person's hooks said: one that asks, one that failed and has no say.
    for line in &request.hooks {
        out.push(
            format!("⚑ {}", visible_line(line)),
            TEXT_CONT,
            Style::default().fg(Color::Yellow),
        );
    }
    if let Some(amended) = &request.amended {
        out.push(
            format!(
                "✎ MODIFIED BY YOU: {} (the model proposed {}…); judged again below",
                visible_line(&amended.change),
                &amended.original_digest[..amended.original_digest.len().min(12)]
            ),
            TEXT_CONT,
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        );
    }
    match &request.preview {
        Some(Preview::Command { command, cwd }) => command_lines(&mut out, request, command, cwd),
        Some(Preview::Diff {
            added,
            removed,
            approximate,
            path,
            ..
        }) => {
            reasons(
                &mut out,
                request,
                &[],
                &[Ruling::Deny, Ruling::Ask, Ruling::Allow],
            );
            scopes(&mut out, request);
            let note = if *approximate {
                " (approximate: the diff hit its deadline or was cut)"
            } else {
                ""
            };
            out.push(
                format!("{}: +{added} -{removed}{note}", visible_line(path)),
                TEXT_CONT,
                dim(),
            );
        }
        Some(Preview::Error { message }) => {
            reasons(
                &mut out,
                request,
                &[],
                &[Ruling::Deny, Ruling::Ask, Ruling::Allow],
            );
            out.push(
                format!("this change cannot be applied: {}", visible_line(message)),
                TEXT_CONT,
                Style::default().fg(Color::Red),
            );
            scopes(&mut out, request);
        }
        Some(Preview::Mcp {
            server,
            tool,
            annotations,
            arguments,
            definition_digest,
            change,
            confinement,
            ..
        }) => {
            reasons(
                &mut out,
                request,
                &[],
                &[Ruling::Deny, Ruling::Ask, Ruling::Allow],
            );
            out.push(
                format!(
                    "MCP server {}, tool {} (definition sha256:{})",
                    visible_line(server),
                    visible_line(tool),
                    visible_line(&definition_digest[..12.min(definition_digest.len())])
                ),
                TEXT_CONT,
                Style::default(),
            );
            if let Some(confinement) = confinement {
                let style = if confinement.starts_with("NO SANDBOX") {
                    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
                } else {
                    dim()
                };
                out.push(
                    format!("its server runs in: {}", visible_line(confinement)),
                    TEXT_CONT,
                    style,
                );
            }
            out.push(
                format!("annotations: {}", visible_line(&annotations.join(", "))),
                TEXT_CONT,
                dim(),
            );
            match change.as_deref() {
                Some(Preview::Diff {
                    path,
                    added,
                    removed,
                    approximate,
                    ..
                }) => {
                    let note = if *approximate { " (approximate)" } else { "" };
                    out.push(
                        format!(
                            "changes {}: +{added} -{removed}{note}, the diff below the arguments",
                            visible_line(path)
                        ),
                        TEXT_CONT,
                        Style::default(),
                    );
                }
                Some(Preview::Error { message }) => out.push(
                    format!("no diff: {}", visible_line(message)),
                    TEXT_CONT,
                    dim(),
                ),
                _ => {}
            }
            out.push("arguments:".into(), TEXT_CONT, dim());
            for (i, line) in arguments.iter().enumerate() {
                let line = visible_line(line);
                if i + 1 == arguments.len() {
                    out.push_must(line, COMMAND_CONT, Style::default(), MustSee::ArgumentsEnd);
                } else {
                    out.push(line, COMMAND_CONT, Style::default());
                }
            }
            scopes(&mut out, request);
        }
        None => {
            reasons(
                &mut out,
                request,
                &[],
                &[Ruling::Deny, Ruling::Ask, Ruling::Allow],
            );
            out.push("arguments:".into(), TEXT_CONT, dim());
            let canonical = visible(&request.frozen.canonical);
            let mut lines = canonical.split('\n').peekable();
            while let Some(l) = lines.next() {
                if lines.peek().is_none() {
                    out.push_must(
                        l.to_string(),
                        COMMAND_CONT,
                        Style::default(),
                        MustSee::ArgumentsEnd,
                    );
                } else {
                    out.push(l.to_string(), COMMAND_CONT, Style::default());
                }
            }
            scopes(&mut out, request);
        }
    }
    (out.lines, out.must)
}

/// Reasons of the given rulings, severest first, leaving out those about a part in `listed`
/// (shown next to their part). Asking and denying ones must be seen.
fn reasons(out: &mut Lines, request: &ApprovalRequest, listed: &[usize], rulings: &[Ruling]) {
    let mut shown: Vec<(usize, &Reason)> = request
        .verdict
        .reasons
        .iter()
        .enumerate()
        .filter(|(_, r)| rulings.contains(&r.ruling))
        .filter(|(_, r)| !r.part.is_some_and(|p| listed.contains(&p)))
        .collect();
    severest_first(&mut shown, |r| r.ruling);
    for (index, reason) in shown {
        let text = format!(
            "• {}: {}",
            reason.ruling.as_str(),
            visible_line(&reason.message)
        );
        let style = ruling_style(reason.ruling);
        if reason.ruling == Ruling::Allow {
            out.push(text, TEXT_CONT, style);
        } else {
            out.push_must(
                text,
                TEXT_CONT,
                style,
                MustSee::Reason(index, reason.ruling),
            );
        }
    }
}

/// One part and why: for an asking or denying part its asking and denying reasons (severest
/// first), for an allowed part all of its reasons.
fn part_line(request: &ApprovalRequest, index: usize, part: &Part) -> String {
    let mut why: Vec<(usize, &Reason)> = request
        .verdict
        .reasons
        .iter()
        .enumerate()
        .filter(|(_, r)| r.part == Some(index))
        .filter(|(_, r)| part.ruling == Ruling::Allow || r.ruling != Ruling::Allow)
        .collect();
    severest_first(&mut why, |r| r.ruling);
    let why: Vec<String> = why.iter().map(|(_, r)| visible_line(&r.message)).collect();
    format!(
        "  {} {} — {}",
        icon(part.ruling),
        visible_line(&part.label),
        why.join("; ")
    )
}

fn command_lines(out: &mut Lines, request: &ApprovalRequest, command: &str, cwd: &str) {
    let parts: Vec<(usize, &Part)> = request
        .verdict
        .parts
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            matches!(
                p.kind,
                PartKind::Command | PartKind::Redirect | PartKind::Script
            )
        })
        .collect();
    let list = parts.len() > 1 || parts.iter().any(|(_, p)| p.ruling != Ruling::Allow);
    let listed: Vec<usize> = if list {
        parts.iter().map(|(i, _)| *i).collect()
    } else {
        Vec::new()
    };
    let mut deciding: Vec<(usize, &Part)> = parts
        .iter()
        .filter(|(_, p)| list && p.ruling != Ruling::Allow)
        .copied()
        .collect();
    severest_first(&mut deciding, |p| p.ruling);

    // What decides: reasons not about a listed part, then the asking and denying parts.
    reasons(out, request, &listed, &[Ruling::Deny, Ruling::Ask]);
    if !deciding.is_empty() {
        let denied = deciding
            .iter()
            .filter(|(_, p)| p.ruling == Ruling::Deny)
            .count();
        let asking = deciding.len() - denied;
        let header = match (denied, asking) {
            (0, 1) => format!("1 of {} asks:", count(parts.len(), "part")),
            (0, n) => format!("{n} of {} ask:", count(parts.len(), "part")),
            (d, 0) => format!("{d} of {} denied:", count(parts.len(), "part")),
            (d, a) => format!(
                "{d} denied and {a} asking, of {}:",
                count(parts.len(), "part")
            ),
        };
        out.push(header, TEXT_CONT, dim());
        for (index, part) in &deciding {
            out.push_must(
                part_line(request, *index, part),
                TEXT_CONT,
                ruling_style(part.ruling),
                MustSee::Part(*index, part.ruling),
            );
        }
    }

    // What runs, whole.
    out.push(
        format!("command, in {}:", visible_line(cwd)),
        TEXT_CONT,
        dim(),
    );
    let shown = visible(command);
    let mut lines = shown.split('\n').peekable();
    let bold = Style::default().add_modifier(Modifier::BOLD);
    while let Some(l) = lines.next() {
        if lines.peek().is_none() {
            out.push_must(format!("  {l}"), COMMAND_CONT, bold, MustSee::CommandEnd);
        } else {
            out.push(format!("  {l}"), COMMAND_CONT, bold);
        }
    }

    // What is allowed.
    let allowed: Vec<&(usize, &Part)> = parts
        .iter()
        .filter(|(_, p)| list && p.ruling == Ruling::Allow)
        .collect();
    if !allowed.is_empty() {
        out.push(
            format!(
                "{} of {} allowed:",
                allowed.len(),
                count(parts.len(), "part")
            ),
            TEXT_CONT,
            dim(),
        );
        for (index, part) in allowed {
            out.lines.push(DocLine {
                text: part_line(request, *index, part),
                cont: TEXT_CONT,
                style: ruling_style(Ruling::Allow),
                allowed_part: true,
            });
        }
    }
    reasons(out, request, &listed, &[Ruling::Allow]);
    scopes(out, request);
}

/// What `a` would store, when there are too many scopes to name on the option itself.
fn scopes(out: &mut Lines, request: &ApprovalRequest) {
    let Some(scopes) = request
        .session_scopes
        .as_ref()
        .filter(|s| s.len() > SCOPES_IN_FOOTER)
    else {
        return;
    };
    out.push(
        format!(
            "a (allow for the session) would store {}:",
            count(scopes.len(), "scope")
        ),
        TEXT_CONT,
        dim(),
    );
    for scope in scopes {
        out.push(
            format!("  {}", visible_line(&scope.describe())),
            TEXT_CONT,
            Style::default(),
        );
    }
}
