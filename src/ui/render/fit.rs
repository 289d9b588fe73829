//! Fitting a line to a width without losing what it is for: a line comes in forms, longest
//! first, whose labels get shorter while their values (a count, a code, a scope) stay whole; the
//! first form that fits is drawn. The status bar and the approval modal's footer narrow this way.

/// The first of `forms` (longest first) that `fits`; the last, the shortest, when none does.
pub(super) fn longest_fitting<T>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
