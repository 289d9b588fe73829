//! The help.

use super::*;
use crate::ui::preview::wrap::text_width;

/// Where the help goes on a screen of this size: nearly all of it, since it is a long list.
fn help_area(screen: Rect) -> Rect {
    let width = screen
        .width
        .saturating_sub(4)
        .clamp(screen.width.min(20), 92);
    let height = screen.height.saturating_sub(2).max(screen.height.min(8));
    Rect {
        x: screen.x + (screen.width - width) / 2,
        y: screen.y + (screen.height - height) / 2,
        width,
        height,
    }
}

/// Every binding of the key table, section by section, laid out for `width` cells: the keys in
/// one column, what they do word-wrapped beside them.
fn help_lines(width: usize) -> Vec<Line<'static>> {
    let widest = keys::all()
        .map(|(_, b)| text_width(b.keys))
        .max()
        .unwrap_or(0);
    let key_width = widest.min(width * 2 / 5).max(1);
    let does_width = width.saturating_sub(key_width + 4).max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    for place in Place::ALL {
        lines.push(Line::raw(place.title()).bold());
        for binding in keys::bindings(place) {
            let keys = wrap_words(binding.keys, key_width);
            let does = wrap_words(binding.does, does_width);
            for row in 0..keys.len().max(does.len()) {
                let key = keys.get(row).map_or("", String::as_str);
                let pad = key_width.saturating_sub(text_width(key));
                lines.push(Line::from(vec![
                    Span::styled(
                        format!("  {key}{}  ", " ".repeat(pad)),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(does.get(row).cloned().unwrap_or_default()),
                ]));
            }
        }
        lines.push(Line::raw(""));
    }
    lines.pop();
    lines
}

/// The help's length in rows and how many of them a screen of (width, height) shows at once.
pub fn help_size(screen: (u16, u16)) -> (usize, usize) {
    let area = help_area(Rect::new(0, 0, screen.0, screen.1));
    let inner = Block::default().borders(Borders::ALL).inner(area);
    (
        help_lines(inner.width as usize).len(),
        inner.height as usize,
    )
}

pub(super) fn render_help(scroll: usize, frame: &mut Frame) {
    let area = help_area(frame.area());
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" every key, mouse too (Esc closes) ");
    let inner = block.inner(area);
    let mut lines = help_lines(inner.width as usize);
    let height = inner.height as usize;
    let top = scroll.min(lines.len().saturating_sub(height));
    let below = lines.len().saturating_sub(top + height);
    let mut block = block;
    if top > 0 || below > 0 {
        let mut parts = Vec::new();
        if top > 0 {
            parts.push(format!("↑ {top} above"));
        }
        if below > 0 {
            parts.push(format!("↓ {below} more below"));
        }
        block = block.title_bottom(Line::styled(
            format!(" {} · ↑ ↓ PgUp PgDn ", parts.join(" · ")),
            Style::default().fg(Color::Yellow),
        ));
    }
    frame.render_widget(block, area);
    let shown: Vec<Line> = lines.drain(top..(top + height).min(lines.len())).collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_shows_every_binding_of_the_key_table() {
        let text: Vec<String> = help_lines(200).iter().map(|l| l.to_string()).collect();
        for (_, b) in keys::all() {
            assert!(
                text.iter()
                    .any(|l| l.contains(b.keys) && l.contains(b.does)),
                "{b:?} is missing from the help"
            );
        }
        for place in Place::ALL {
            assert!(text.iter().any(|l| l == place.title()), "{place:?}");
        }
    }

    #[test]
    fn at_60x20_every_help_row_fits_and_the_help_scrolls() {
        let area = help_area(Rect::new(0, 0, 60, 20));
        assert!(area.width <= 60 && area.height <= 20);
        let inner = area.width as usize - 2;
        for line in help_lines(inner) {
            assert!(line.width() <= inner, "{line}");
        }
        let (rows, page) = help_size((60, 20));
        assert!(rows > page);
    }
}
