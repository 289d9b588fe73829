//! Short call ids for the screen. A provider's call ids (`call_ZyWW5zNsxFTvjZt_…`,
//! `toolu_01…`) take twenty columns or more on every line that names a call; the cockpit shows
//! them as `c1`, `c2`, … instead, numbered in the order the calls first appear in this session
//! (the demo's own ids are short already and are shown as they are). Only the display changes:
//! ops, the audit log and the state database keep the provider's id.

use std::collections::{HashMap, HashSet};

/// Ids up to this many characters are shown as they are.
const SHORT: usize = 8;

/// The short id each call is shown with.
#[derive(Debug, Clone, Default)]
pub struct ShortIds {
    /// Long ids and the short ids given to them.
    given: HashMap<String, String>,
    /// Every short id on screen, given or the call's own, so none is given twice.
    used: HashSet<String>,
    next: usize,
}

impl ShortIds {
    /// The short id `id` is shown with, giving it one the first time a long id is seen.
    pub fn note(&mut self, id: &str) -> String {
        if id.chars().count() <= SHORT {
            self.used.insert(id.to_string());
            return id.to_string();
        }
        if let Some(short) = self.given.get(id) {
            return short.clone();
        }
        let short = loop {
            self.next += 1;
            let candidate = format!("c{}", self.next);
            if !self.used.contains(&candidate) {
                break candidate;
            }
        };
        self.used.insert(short.clone());
        self.given.insert(id.to_string(), short.clone());
        short
    }

    /// The short id `id` is shown with (itself when it is short or was never noted).
    pub fn shown<'a>(&'a self, id: &'a str) -> &'a str {
        self.given.get(id).map_or(id, String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_provider_ids_get_c_numbers_in_the_order_they_appear_and_keep_them() {
        let mut ids = ShortIds::default();
        assert_eq!(ids.note("call_ZyWW5zNsxFTvjZt_8kq2"), "c1");
        assert_eq!(ids.note("toolu_01ABCDEFGHIJKLMNOP"), "c2");
        assert_eq!(ids.note("call_ZyWW5zNsxFTvjZt_8kq2"), "c1");
        assert_eq!(ids.shown("toolu_01ABCDEFGHIJKLMNOP"), "c2");
        assert_eq!(
            ids.shown("never seen before, long"),
            "never seen before, long"
        );
    }

    #[test]
    fn short_ids_are_shown_as_they_are_and_never_given_to_a_long_one() {
        let mut ids = ShortIds::default();
        assert_eq!(ids.note("c1"), "c1");
        assert_eq!(ids.note("call_abcdefghijklmnop"), "c2");
        assert_eq!(ids.shown("c1"), "c1");
    }
}
