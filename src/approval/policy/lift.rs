//! What an allow rule may lift. `allow bash(find *)` says "find is fine"; its author had
//! `find . -name x` in mind, not `find . -delete` or `find . -exec sh -c … \;`. A rule whose
//! pattern ends in `*` therefore lifts an ask about deleting, running a program or writing only
//! when that effect comes from the words the rule spells out (`rm *` names deleting, `cargo test
//! *` names running the tests), never from an option the `*` happened to match. A rule that spells
//! out the whole command (no `*`), or names the option (`allow bash(find * -delete)` is not a
//! prefix, so it is spelled out), lifts everything it matches, as before.
//!
//! How: the command is classified again with the options the `*` matched left out; the effect
//! families it still has are the ones the rule named.

use crate::facts::programs::{self, Effect};
use crate::facts::shell::{SimpleCommand, Word};
use crate::protocol::ReasonCode;

/// The kinds of effect a wildcard may not lift by accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Deletes,
    RunsPrograms,
    Writes,
}

/// The family a reason belongs to, if it is one of them.
pub fn family_of(code: ReasonCode) -> Option<Family> {
    use ReasonCode as C;
    match code {
        C::DeletesInWorkspace | C::LargeDeletion | C::DestroysWork => Some(Family::Deletes),
        C::RunsCode
        | C::InlineCode
        | C::HiddenInput
        | C::ConfigInjection
        | C::ShellBehaviour
        | C::Privileged => Some(Family::RunsPrograms),
        C::WritesOutsideWorkspace | C::WritesTemp | C::WritesSensitiveFile => Some(Family::Writes),
        _ => None,
    }
}

fn family_of_effect(effect: &Effect) -> Option<Family> {
    match effect {
        Effect::Delete(_) | Effect::DestroysWork(_) => Some(Family::Deletes),
        Effect::RunsCode(_)
        | Effect::InlineCode(_)
        | Effect::StdinScript(_)
        | Effect::ConfigInjection(_)
        | Effect::ShellBehaviour(_)
        | Effect::Privileged(_) => Some(Family::RunsPrograms),
        Effect::Write(_) => Some(Family::Writes),
        _ => None,
    }
}

/// The families `cmd` still has when the words after the first `named` are kept only if they are
/// not options: what a rule spelling out `named` words, then `*`, named.
pub fn named_families(cmd: &SimpleCommand, named: usize) -> Vec<Family> {
    let mut reduced = cmd.clone();
    reduced.argv = cmd
        .argv
        .iter()
        .enumerate()
        .filter(|(i, w)| *i < named || !w.as_lit().is_some_and(|s| s.starts_with('-')))
        .map(|(_, w)| w.clone())
        .collect::<Vec<Word>>();
    let mut families = Vec::new();
    for effect in programs::classify(&reduced) {
        if let Some(f) = family_of_effect(&effect)
            && !families.contains(&f)
        {
            families.push(f);
        }
    }
    families
}
