//! What of a request has been on screen. A must-see line counts as seen once every one of its
//! rows has been drawn, in one frame or across several (paging splits lines between frames; a
//! jump with End shows only the rows it lands on). Rows depend on the width, so a new width starts
//! the partial counts over; what was already seen whole stays seen.

use std::collections::{BTreeMap, BTreeSet};

use super::{Doc, MustSee, Slice};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    whole: BTreeSet<MustSee>,
    /// Items partly drawn: which of their rows, at `width`.
    rows: BTreeMap<MustSee, Vec<bool>>,
    width: usize,
}

impl Seen {
    pub fn contains(&self, item: &MustSee) -> bool {
        self.whole.contains(item)
    }

    pub fn clear(&mut self) {
        *self = Seen::default();
    }

    /// Records the rows a window of `doc` drew at `width`.
    pub fn record(&mut self, doc: &Doc, window: &[Slice], width: usize) {
        if width != self.width {
            self.rows.clear();
            self.width = width;
        }
        for slice in window {
            for (_, item) in doc.must_see().iter().filter(|(l, _)| *l == slice.line) {
                if self.whole.contains(item) {
                    continue;
                }
                let rows = self
                    .rows
                    .entry(*item)
                    .or_insert_with(|| vec![false; slice.total]);
                if rows.len() != slice.total {
                    *rows = vec![false; slice.total];
                }
                for row in slice.rows.clone() {
                    if let Some(r) = rows.get_mut(row) {
                        *r = true;
                    }
                }
                if rows.iter().all(|r| *r) {
                    self.rows.remove(item);
                    self.whole.insert(*item);
                }
            }
        }
    }
}
