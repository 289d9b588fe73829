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

/// Cells of a run's title kept before the sandbox it ran in gives way.
const TITLE_KEPT_FOR_SANDBOX: usize = 20;

/// A run's header: `left` (its icon, id and title), then its time and status. The title is cut
/// first, then the time is left out; the status goes only on a row too narrow for it and a few
/// cells of title.
#[cfg(test)]
pub(super) fn fit_header(left: &str, time: &str, status: &str, width: usize) -> String {
    fit_header_with(left, &[time], status, width)
}

/// `fit_header` with the time in several forms, longest first (the first also names the
/// sandbox): a longer form is used only while the title keeps more of itself.
pub(super) fn fit_header_with(left: &str, times: &[&str], status: &str, width: usize) -> String {
    let mut forms: Vec<(String, usize)> = times
        .iter()
        .enumerate()
        .map(|(i, time)| {
            let kept = if i + 1 < times.len() {
                TITLE_KEPT_FOR_SANDBOX
            } else {
                TITLE_KEPT
            };
            (format!("  {time}  {status}"), kept)
        })
        .collect();
    forms.push((format!("  {status}"), TITLE_KEPT));
    let fits =
        |(right, kept): &(String, usize)| text_width(right) + text_width(left).min(*kept) <= width;
    match forms.iter().find(|f| fits(f)) {
        Some((right, _)) => format!("{}{right}", truncate(left, width - text_width(right))),
        None => truncate(&format!("{left}{}", forms[0].0), width),
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
    fn the_sandbox_goes_before_the_title_is_cut_short_and_the_time_after() {
        let left = "✓ c2 $ curl https://example.com";
        let header =
            |width| fit_header_with(left, &["sandbox network  0.4s", "0.4s"], "exit 0", width);
        assert_eq!(
            header(80),
            "✓ c2 $ curl https://example.com  sandbox network  0.4s  exit 0"
        );
        assert_eq!(header(40), "✓ c2 $ curl https://examp…  0.4s  exit 0");
        assert_eq!(header(20), "✓ c2 …  0.4s  exit 0");
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
