//! The modal's footer (the options and what each grants, the timeout, what must still be seen
//! before `y`, `a` or `d` answer, keys dropped before it armed), the arming countdown on its
//! bottom border, and the preview's marker row (what lies above and below). Every footer line
//! wraps: a grant's scope or a hint is never cut at the edge.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::ApprovalOverlay;
use super::keys::{ApprovalChoice, offered};
use crate::protocol::ApprovalRequest;
use crate::protocol::GrantScope;
use crate::protocol::Ruling;
use crate::ui::app::App;
use crate::ui::keys::{self, Action, Place};
use crate::ui::preview::{Doc, MustSee, Outside, SCOPES_IN_FOOTER, Slice, wrap};
use crate::ui::render::dim;
use crate::ui::render::fit::{self, truncate};
use crate::visible::visible_line;

/// "1 part", "2 parts".
fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A grant scope as a person reads it: paths inside the workspace shown relative to it.
fn scope_text(app: &App, scope: &crate::protocol::GrantScope) -> String {
    let text = scope.describe();
    let prefix = format!("{}/", app.status.workspace.trim_end_matches('/'));
    let shown = text.replace(&prefix, "");
    if shown.ends_with("under /")
        || shown.ends_with("under ")
        || shown.trim_end().ends_with("under")
    {
        return "anything in the workspace".to_string();
    }
    visible_line(&shown.replace("anything under ./", "anything in the workspace"))
}

/// Where a directory grant reaches, as a person reads it: "in the workspace", "under src/".
fn directory_text(app: &App, path: &std::path::Path) -> String {
    let workspace = std::path::Path::new(&app.status.workspace);
    match path.strip_prefix(workspace) {
        Ok(rest) if rest.as_os_str().is_empty() => "in the workspace".to_string(),
        Ok(rest) => format!("under {}/", visible_line(&rest.display().to_string())),
        Err(_) => format!(
            "under {}/",
            visible_line(path.display().to_string().trim_end_matches('/'))
        ),
    }
}

/// The footer's lines at `width`; `compact`: the options in their shortest labels, for a modal
/// whose preview needs the rows.
pub(super) fn lines(
    app: &App,
    overlay: &ApprovalOverlay,
    request: &ApprovalRequest,
    gate: Option<(Vec<String>, Style)>,
    (width, compact): (usize, bool),
) -> Vec<Line<'static>> {
    let mut foot = options(app, request, width, compact);
    let mut text = |forms: &[String], style: Style| {
        for row in fitted(forms, width) {
            foot.push(Line::styled(row, style));
        }
    };
    if let Some((hints, style)) = gate {
        text(&hints, style);
    }
    if let Some(code) = &request.code {
        text(&remote(&visible_line(code)), dim());
    }
    if let Some(deadline) = request.deadline_ms {
        let left = deadline.saturating_sub(app.wall_ms) / 1000;
        text(
            &[
                format!("times out in {left}s, then it is denied as timed out"),
                format!("times out in {left}s"),
            ],
            Style::default().fg(Color::Yellow),
        );
    }
    if let Some(why) = &request.no_session_grant {
        text(&[format!("no session grant: {}", visible_line(why))], dim());
    }
    // Once a hunk is dropped, what an answer writes (each hunk's header says its own state).
    if let Some(review) = overlay
        .diff
        .review
        .as_ref()
        .filter(|r| !r.dropped.is_empty())
    {
        let count = overlay.diff.hunk_count();
        let kept = review.kept(count).len();
        let style = Style::default().fg(Color::Yellow);
        text(
            &[
                format!(
                    "{kept} of {count} hunks kept (hunk {} is current): ] [ move, Space keeps or drops it; an answer writes only the kept hunks",
                    review.current + 1
                ),
                format!("{kept} of {count} hunks kept: ] [ move, Space keeps/drops"),
            ],
            style,
        );
    }
    if overlay.ignored > 0 {
        text(
            &ignored(overlay.ignored),
            Style::default().fg(Color::Yellow),
        );
    }
    if overlay.reason.is_some() || overlay.editing.is_some() {
        foot.push(Line::raw(""));
    }
    foot
}

/// A footer line: the longest of its forms that fits on one row, else the shortest, wrapped
/// between words (a code or a path is cut only if it is wider than the whole row), its
/// continuation rows indented.
fn fitted(forms: &[String], width: usize) -> Vec<String> {
    let Some(text) = fit::longest_fitting(forms, |f| wrap::text_width(f) <= width) else {
        return Vec::new();
    };
    if wrap::text_width(text) <= width {
        return vec![text.clone()];
    }
    crate::ui::words::wrap_words(text, width.saturating_sub(2).max(1))
        .into_iter()
        .enumerate()
        .map(|(i, row)| if i == 0 { row } else { format!("  {row}") })
        .collect()
}

/// How to answer from another terminal, longest first: the labels shorten, the code stays.
fn remote(code: &str) -> Vec<String> {
    vec![
        format!(
            "or from another terminal: airlock approve {code}  (or airlock deny {code}); the first answer wins"
        ),
        format!("or from another terminal: airlock approve {code}  (or airlock deny {code})"),
        format!("from another terminal: airlock approve {code} (or deny)"),
        format!("elsewhere: airlock approve {code} (or deny)"),
        format!("airlock approve {code} (or deny)"),
        format!("airlock approve {code}"),
        format!("code {code}"),
    ]
}

/// The countdown shown on the bottom border until the keys are live, the longest form that fits
/// in `width` cells; `None` once they are live.
pub(super) fn arming(app: &App, overlay: &ApprovalOverlay, width: usize) -> Option<String> {
    let left = overlay
        .armed_at
        .checked_duration_since(app.now)?
        .as_secs_f64();
    let forms = [
        format!(" keys are live in {left:.1}s (so a key meant for the prompt cannot answer this) "),
        format!(" keys are live in {left:.1}s, keys typed before are ignored "),
        format!(" keys are live in {left:.1}s "),
        format!(" live in {left:.1}s "),
    ];
    fit::longest_fitting(forms, |f| wrap::text_width(f) + 2 <= width)
}

/// Keys pressed before the modal armed: they went nowhere, and the person should know.
fn ignored(n: usize) -> [String; 3] {
    let keys = count(n, "key");
    let were = if n == 1 { "was" } else { "were" };
    [
        format!(
            "{keys} typed before the modal was ready {were} ignored (neither an answer nor in your prompt)"
        ),
        format!("{keys} typed before the modal was ready {were} ignored"),
        format!("{keys} typed early: ignored"),
    ]
}

/// How far the options' labels are shortened: 0 as the table has them, up to `LABEL_STEPS - 1`.
const LABEL_STEPS: usize = 3;

/// The options, from the one table, each key next to what it does. Labels shorten (the table's
/// short label, a grant's scope with fewer words around it) until every option fits on a row
/// (`compact`: the shortest at once); one that still does not wraps between words under its key.
fn options(
    app: &App,
    request: &ApprovalRequest,
    width: usize,
    compact: bool,
) -> Vec<Line<'static>> {
    let first = if compact { LABEL_STEPS - 1 } else { 0 };
    let ladder = (first..LABEL_STEPS).map(|step| labels(app, request, step));
    let fits = |pairs: &Vec<(char, String)>| {
        pairs
            .iter()
            .all(|(_, label)| 2 + wrap::text_width(label) <= width)
    };
    let pairs = fit::longest_fitting(ladder, fits).unwrap_or_default();
    let key_style = Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (key, label) in pairs {
        let text = format!(" {label}   ");
        let len = 1 + wrap::text_width(&text);
        if used + len > width && !current.is_empty() {
            lines.push(Line::from(std::mem::take(&mut current)));
            used = 0;
        }
        if len <= width {
            current.push(Span::styled(key.to_string(), key_style));
            current.push(Span::raw(text));
            used += len;
            continue;
        }
        // Longer than a whole row even shortened: the key, then the label wrapped under it.
        let rows = crate::ui::words::wrap_words(&label, width.saturating_sub(2).max(1));
        for (i, row) in rows.into_iter().enumerate() {
            if i == 0 {
                lines.push(Line::from(vec![
                    Span::styled(key.to_string(), key_style),
                    Span::raw(format!(" {row}")),
                ]));
            } else {
                lines.push(Line::raw(format!("  {row}")));
            }
        }
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

/// Each option's key and label at shortening `step`, in the footer's order (`offered`,
/// from the key table); the session options name their scope at every step.
fn labels(app: &App, request: &ApprovalRequest, step: usize) -> Vec<(char, String)> {
    let mut pairs: Vec<(char, String)> = Vec::new();
    for (key, choice) in offered() {
        let (long, short) = choice.labels();
        let label = match choice {
            ApprovalChoice::AllowSession => match &request.session_scopes {
                Some(scopes) if scopes.len() > SCOPES_IN_FOOTER => {
                    let n = count(scopes.len(), "scope");
                    match step {
                        0 => format!(
                            "allow the {n} listed at the end of the preview, for this session"
                        ),
                        1 => format!("allow the {n} listed below, for this session"),
                        _ => format!("{short}: the {n} listed below"),
                    }
                }
                Some(scopes) => {
                    let what: Vec<String> = scopes.iter().map(|s| scope_text(app, s)).collect();
                    let mut what = and_list(&what);
                    // A grant covers the command in the sandbox it was given in, never a wider
                    // one: the option says which.
                    match &request.sandbox {
                        Some(label) if label.unconfined => what = format!("{what} (no sandbox)"),
                        Some(label) => what = format!("{what} ({})", visible_line(&label.text)),
                        None => {}
                    }
                    match step {
                        0 => format!("allow {what} in this workspace for this session"),
                        1 => format!("allow {what} for this session"),
                        _ => format!("{short}: {what}"),
                    }
                }
                None => continue,
            },
            // It grants this tool on the files under the directory, nothing else: it says so.
            ApprovalChoice::AllowDirectory => {
                let (Some(dir), Some(_)) = (&request.directory_scope, &request.session_scopes)
                else {
                    continue;
                };
                let tool = visible_line(&request.tool);
                let place = match dir {
                    GrantScope::Directory { path } => directory_text(app, path),
                    other => scope_text(app, other),
                };
                match step {
                    0 => format!("allow {tool} on any file {place} for this session"),
                    1 => format!("allow {tool} {place} for the session"),
                    _ => format!("{short}: {tool} {place}"),
                }
            }
            // Only a request with a one-time code can wait for one.
            ApprovalChoice::Park if request.code.is_none() => continue,
            _ if step == 0 => long.to_string(),
            _ => short.to_string(),
        };
        pairs.push((key, label));
    }
    pairs
}

/// What must still be seen before an allowing key answers, and how to get there; after a
/// refused key it says so, in colour. `unseen`: the items and their lines.
pub(super) fn gate(
    overlay: &ApprovalOverlay,
    unseen: &[(usize, MustSee)],
    top: usize,
) -> Option<(Vec<String>, Style)> {
    if unseen.is_empty() {
        return None;
    }
    let number = |wanted: fn(&MustSee) -> bool| unseen.iter().filter(|(_, m)| wanted(m)).count();
    let mut need = Vec::new();
    for (n, word) in [
        (
            number(|m| matches!(m, MustSee::Part(_, Ruling::Deny))),
            "more denying part",
        ),
        (
            number(|m| matches!(m, MustSee::Part(_, Ruling::Ask))),
            "more asking part",
        ),
        (
            number(|m| matches!(m, MustSee::Reason(_, Ruling::Deny))),
            "more denying reason",
        ),
        (
            number(|m| matches!(m, MustSee::Reason(_, Ruling::Ask))),
            "more asking reason",
        ),
    ] {
        if n > 0 {
            need.push(count(n, word));
        }
    }
    for (item, what) in [
        (MustSee::CommandEnd, "the end of the command"),
        (MustSee::ChangeStart, "the first changed line"),
        (MustSee::ChangeEnd, "the last changed line"),
        (MustSee::ArgumentsEnd, "the end of the arguments"),
    ] {
        if unseen.iter().any(|(_, m)| *m == item) {
            need.push(what.to_string());
        }
    }
    let mut keys = Vec::new();
    if unseen.iter().any(|(line, _)| *line < top) {
        keys.push("↑/PgUp/Home");
    }
    if unseen.iter().any(|(line, _)| *line >= top) {
        keys.push("↓/PgDn");
        if unseen.iter().any(|(_, m)| {
            matches!(
                m,
                MustSee::CommandEnd | MustSee::ChangeEnd | MustSee::ArgumentsEnd
            )
        }) {
            keys.push("End");
        }
    }
    // Shorter: both ends of a change said as one.
    let both_ends = ["the first changed line", "the last changed line"];
    let short_need = if both_ends.iter().all(|end| need.iter().any(|n| n == end)) {
        let mut short: Vec<String> = need
            .iter()
            .filter(|n| !both_ends.contains(&n.as_str()))
            .cloned()
            .collect();
        short.push("both ends of the change".to_string());
        and_list(&short)
    } else {
        and_list(&need)
    };
    let need = and_list(&need);
    let keys = keys.join(", ");
    let deny =
        keys::key_for(Place::Approval, Action::Answer(ApprovalChoice::Deny)).unwrap_or_default();
    Some(match overlay.refused {
        Some(key) => (
            vec![
                format!("{key} refused: scroll to see {need} first ({keys}); {deny} denies"),
                format!("{key} refused: scroll to see {need} ({keys})"),
                format!("{key} refused: see {short_need} ({keys})"),
            ],
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ),
        None => (
            vec![
                format!("to allow, first scroll to see {need} ({keys})"),
                format!("to allow, see {need} ({keys})"),
                format!("to allow, see {short_need} ({keys})"),
            ],
            Style::default().fg(Color::Yellow),
        ),
    })
}

/// One side of the window: "▼ 1 more asking, 40 more allowed parts below".
fn side(o: &Outside, arrow: &str, word: &str) -> Option<(String, bool)> {
    let mut items = Vec::new();
    if o.denying > 0 {
        items.push(format!("{} more denying", o.denying));
    }
    if o.asking > 0 {
        items.push(format!("{} more asking", o.asking));
    }
    if o.allowed_parts > 0 {
        let n = o.allowed_parts;
        items.push(format!(
            "{n} more allowed part{}",
            if n == 1 { "" } else { "s" }
        ));
    }
    let urgent = o.denying + o.asking > 0;
    if items.is_empty() {
        if o.lines == 0 {
            return None;
        }
        let n = o.lines;
        items.push(format!("{n} more line{}", if n == 1 { "" } else { "s" }));
    }
    Some((format!("{arrow} {} {word}", items.join(", ")), urgent))
}

/// The preview's last row when the document does not fit: what is above and below the window
/// (asking and denying first), where the window is, and the keys. Pieces that do not fit are
/// left off from the least important.
pub(super) fn marker_row(doc: &Doc, window: &[Slice], width: usize) -> Line<'static> {
    let (above, below) = doc.outside(window);
    // The "more above / below" pieces always show; where the window is and the keys only if
    // they fit.
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut urgent = false;
    for (o, arrow, word) in [(&above, "▲", "above"), (&below, "▼", "below")] {
        if let Some((text, u)) = side(o, arrow, word) {
            pieces.push((text, true));
            urgent |= u;
        }
    }
    let first = window.first().map_or(0, |s| s.line + 1);
    let last = window.last().map_or(0, |s| s.line + 1);
    pieces.push((format!("lines {first}-{last} of {}", doc.len()), false));
    pieces.push(("↑↓ PgUp PgDn Home End".to_string(), false));
    let mut text = String::from(" ");
    for (piece, always) in pieces {
        let next = if text.len() > 1 {
            format!(" · {piece}")
        } else {
            piece
        };
        if !always && wrap::text_width(&text) + wrap::text_width(&next) + 1 > width {
            break;
        }
        text.push_str(&next);
    }
    text.push(' ');
    let style = if urgent {
        Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::REVERSED)
    } else {
        dim().add_modifier(Modifier::REVERSED)
    };
    Line::styled(truncate(&text, width), style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_the_remote_line_names_the_whole_code() {
        for form in remote("J74G-N2P8") {
            assert!(form.contains(" J74G-N2P8"), "{form}");
        }
    }

    #[test]
    fn a_footer_line_takes_its_longest_form_that_fits_on_one_row() {
        let forms = remote("J74G-N2P8");
        assert_eq!(fitted(&forms, 200), vec![forms[0].clone()]);
        assert_eq!(
            fitted(&forms, 58),
            vec!["from another terminal: airlock approve J74G-N2P8 (or deny)"]
        );
        assert_eq!(fitted(&forms, 20), vec!["code J74G-N2P8"]);
    }

    #[test]
    fn a_footer_line_no_form_of_which_fits_wraps_between_words_and_indents() {
        let rows = fitted(&["no session grant: dangerous calls".to_string()], 20);
        assert_eq!(rows, vec!["no session grant:", "  dangerous calls"]);
    }
}
