//! A wrapper's own options, read the way its getopt reads them, from a table of what each option
//! takes. Where the wrapped command starts depends on which options take a value (`taskset -c 0
//! rm` runs `rm`, `chrt -T 5 10 rm` runs `rm`), so reading one wrongly would judge the wrong
//! program. An option the table does not know is reported, never guessed silently: the caller
//! turns it into a question, because past it airlock can no longer tell where the command starts.

use super::lit;
use crate::facts::shell::words::Word;

/// What an option takes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Takes {
    Nothing,
    /// The rest of a short cluster, or the next word; `--name=value` or `--name value`.
    Value,
    /// Only attached: `-m/path`, `--mount=/path` (getopt's `::`).
    Optional,
}

/// The options of one wrapper.
pub(super) struct Spec {
    pub(super) short: &'static [(char, Takes)],
    pub(super) long: &'static [(&'static str, Takes)],
    /// GNU getopt without a leading `+`: options may follow operands, until `--`.
    pub(super) permute: bool,
}

/// One option as given.
#[derive(Debug, Clone)]
pub(super) struct Opt {
    /// The letter (`"c"`) or the whole long name (`"cpu-list"`, even when abbreviated).
    pub(super) name: String,
    pub(super) value: Option<Word>,
}

/// What reading the options found.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub(super) opts: Vec<Opt>,
    /// The words that are not options, in order (everything after `--` included). Without
    /// permutation, the first one and every word after it.
    pub(super) operands: Vec<Word>,
    /// Options the table does not know, or words computed at run time where an option may
    /// stand, as written.
    pub(super) unknown: Vec<String>,
}

impl Read {
    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.name.as_str()))
    }

    /// The values of the options named `names`, in order.
    pub(super) fn values(&self, names: &[&str]) -> Vec<Word> {
        self.opts
            .iter()
            .filter(|o| names.contains(&o.name.as_str()))
            .filter_map(|o| o.value.clone())
            .collect()
    }

    /// A sentence saying which options were not understood, for the caller's problem.
    pub(super) fn unknown_problem(&self, wrapper: &str) -> Option<String> {
        if self.unknown.is_empty() {
            return None;
        }
        Some(format!(
            "`{wrapper}` is given {} airlock does not know ({}), so where the command it runs starts is a guess",
            if self.unknown.len() == 1 {
                "an option"
            } else {
                "options"
            },
            self.unknown
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Reads the options of `argv[from..]` against `spec`.
pub(super) fn read(argv: &[Word], from: usize, spec: &Spec) -> Read {
    let mut out = Read::default();
    let mut i = from;
    while i < argv.len() {
        let word = &argv[i];
        let Some(w) = lit(word) else {
            if spec.permute {
                // It may be an option, or an option's value: nothing after it can be placed.
                out.unknown
                    .push(format!("{}, computed at run time", word.display()));
                out.operands.push(word.clone());
                i += 1;
                continue;
            }
            break;
        };
        if w == "--" {
            i += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            if spec.permute {
                out.operands.push(word.clone());
                i += 1;
                continue;
            }
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            read_long(argv, &mut i, long, spec, &mut out);
        } else {
            read_cluster(argv, &mut i, &w[1..], spec, &mut out);
        }
        i += 1;
    }
    out.operands
        .extend(argv[i.min(argv.len())..].iter().cloned());
    out
}

/// `--name`, `--name=value` or `--name value`; an abbreviation counts when every option it
/// could stand for takes the same kind of value.
fn read_long(argv: &[Word], i: &mut usize, long: &str, spec: &Spec, out: &mut Read) {
    let (name, attached) = match long.split_once('=') {
        Some((name, value)) => (name, Some(Word::lit(value))),
        None => (long, None),
    };
    let Some((full, takes)) = long_option(spec, name) else {
        out.unknown.push(format!("--{long}"));
        return;
    };
    let value = match (takes, attached) {
        (Takes::Nothing, Some(_)) => {
            out.unknown.push(format!("--{long}"));
            return;
        }
        (_, Some(value)) => Some(value),
        (Takes::Value, None) => {
            *i += 1;
            argv.get(*i).cloned()
        }
        (_, None) => None,
    };
    out.opts.push(Opt {
        name: full.to_string(),
        value,
    });
}

fn long_option(spec: &Spec, name: &str) -> Option<(&'static str, Takes)> {
    if let Some(&(full, takes)) = spec.long.iter().find(|(l, _)| *l == name) {
        return Some((full, takes));
    }
    if name.is_empty() {
        return None;
    }
    let mut candidates = spec.long.iter().filter(|(l, _)| l.starts_with(name));
    let &(full, takes) = candidates.next()?;
    candidates
        .all(|(_, t)| *t == takes)
        .then_some((full, takes))
}

/// A cluster of short options (`-qc`, `-N0`, `-ac`): letters until one takes a value.
fn read_cluster(argv: &[Word], i: &mut usize, cluster: &str, spec: &Spec, out: &mut Read) {
    for (at, letter) in cluster.char_indices() {
        let rest = &cluster[at + letter.len_utf8()..];
        let Some(&(_, takes)) = spec.short.iter().find(|(c, _)| *c == letter) else {
            out.unknown.push(format!("-{letter}"));
            continue;
        };
        let name = letter.to_string();
        match takes {
            Takes::Nothing => out.opts.push(Opt { name, value: None }),
            Takes::Optional => {
                let value = (!rest.is_empty()).then(|| Word::lit(rest));
                out.opts.push(Opt { name, value });
                return;
            }
            Takes::Value => {
                let value = if rest.is_empty() {
                    *i += 1;
                    argv.get(*i).cloned()
                } else {
                    Some(Word::lit(rest))
                };
                out.opts.push(Opt { name, value });
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        short: &[
            ('a', Takes::Nothing),
            ('c', Takes::Value),
            ('m', Takes::Optional),
        ],
        long: &[
            ("all", Takes::Nothing),
            ("command", Takes::Value),
            ("mount", Takes::Optional),
            ("commit", Takes::Value),
        ],
        permute: false,
    };

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    fn shown(r: &Read) -> Vec<&str> {
        r.operands.iter().map(Word::display).collect()
    }

    #[test]
    fn values_come_attached_or_from_the_next_word_and_options_stop_at_the_first_operand() {
        let r = read(
            &words("x -ac one -cTWO --mount --command=three ls -a"),
            1,
            &SPEC,
        );
        assert_eq!(r.values(&["c", "command"]).len(), 3);
        assert_eq!(shown(&r), vec!["ls", "-a"]);
        assert!(r.unknown.is_empty());
    }

    #[test]
    fn an_abbreviation_counts_only_when_every_option_it_names_takes_the_same() {
        let r = read(&words("x --comm v ls"), 1, &SPEC);
        assert!(r.has(&["command"]));
        assert_eq!(shown(&r), vec!["ls"]);
        let r = read(&words("x --al ls"), 1, &SPEC);
        assert!(r.has(&["all"]));
    }

    #[test]
    fn an_unknown_option_is_reported() {
        let r = read(&words("x -z --zap ls"), 1, &SPEC);
        assert_eq!(r.unknown, vec!["-z", "--zap"]);
        assert!(r.unknown_problem("x").is_some());
    }

    #[test]
    fn with_permutation_options_after_operands_still_count() {
        let spec = Spec {
            permute: true,
            ..SPEC
        };
        let r = read(&words("x bob -c cmd -- -a"), 1, &spec);
        assert_eq!(r.values(&["c"]), vec![Word::lit("cmd")]);
        assert_eq!(shown(&r), vec!["bob", "-a"]);
    }
}
