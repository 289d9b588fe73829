//! Fitting a line to a width without losing what it is for: a line comes in forms, longest
//! first, whose labels get shorter while their values (a count, a code, a scope) stay whole; the
//! first form that fits is drawn. The status bar and the approval modal's footer narrow this way.
//! Widths are terminal cells, as the approval preview measures them.

use crate::ui::preview::wrap::{char_width, text_width};

/// The first of `forms` (longest first) that `fits`; the last, the shortest, when none does.
pub(crate) fn longest_fitting<T>(
    forms: impl IntoIterator<Item = T>,
    fits: impl Fn(&T) -> bool,
) -> Option<T> {
    let mut last = None;
    for form in forms {
        if fits(&form) {
            return Some(form);
        }
        last = Some(form);
    }
    last
}

/// Cuts a line to `width` cells, ending in `…` when anything was left off.
pub(crate) fn truncate(text: &str, width: usize) -> String {
    if text_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// Cells of a run's title kept before its time gives way.
const TITLE_KEPT: usize = 6;

/// A run's header: `left` (its icon, id and title), then its time and status. The title is cut
/// first, then the time is left out; the status goes only on a row too narrow for it and a few
/// cells of title.
pub(super) fn fit_header(left: &str, time: &str, status: &str, width: usize) -> String {
    let forms = [format!("  {time}  {status}"), format!("  {status}")];
    let keep = text_width(left).min(TITLE_KEPT);
    let fits = |right: &&String| text_width(right) + keep <= width;
    match longest_fitting(&forms, fits) {
        Some(right) if fits(&right) => {
            format!("{}{right}", truncate(left, width - text_width(right)))
        }
        _ => truncate(&format!("{left}{}", forms[0]), width),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_visibly_by_cells() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("日本語のテスト", 7), "日本語…");
    }

    #[test]
    fn a_run_header_cuts_its_title_then_its_time_before_its_status() {
        let left = "✓ c6 $ python3 -m unittest -v 2>&1";
        let header = |left, width| fit_header(left, "0.4s", "exit 0", width);
        assert_eq!(header(left, 30), "✓ c6 $ python3 …  0.4s  exit 0");
        assert_eq!(header("✓ c1 ls", 30), "✓ c1 ls  0.4s  exit 0");
        assert_eq!(header(left, 18), "✓ c6 $ py…  exit 0");
        assert_eq!(header(left, 12), "✓ c6 $ pyth…");
    }

    #[test]
    fn a_wide_title_is_measured_in_cells_so_the_status_stays_on_screen() {
        let header = fit_header("✓ c6 $ echo 日本語日本語日本語", "0.4s", "exit 0", 30);
        assert!(text_width(&header) <= 30, "{header}");
        assert!(header.ends_with("  0.4s  exit 0"), "{header}");
    }

    #[test]
    fn the_longest_form_that_fits_is_chosen_and_the_shortest_when_none_does() {
        let forms = ["a long label: 42", "label: 42", "42"];
        let fits = |width: usize| move |f: &&str| f.len() <= width;
        assert_eq!(longest_fitting(forms, fits(20)), Some("a long label: 42"));
        assert_eq!(longest_fitting(forms, fits(10)), Some("label: 42"));
        assert_eq!(longest_fitting(forms, fits(1)), Some("42"));
        assert_eq!(longest_fitting(Vec::<&str>::new(), fits(9)), None);
    }
}
