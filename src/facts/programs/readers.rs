//! The read-only programs of [`super::tables::READ_PATHS`], option by option: which options take
//! a value that is not a path (`cut -d /` is a delimiter, not the root directory), which name a
//! file they write (`base64 -o out`), and which programs only look at a file's metadata (`stat`, `ls`),
//! so a device they name is not read.
//!
//! Getting these wrong in the strict direction asks about harmless calls (`cut -d / -f 2` asked
//! as a read of `/`); in the loose direction it lets a write or a program through a "read-only"
//! program. Both are tested per program.

use super::{Args, Effect, lit, reads};
use crate::facts::shell::Word;

/// A program's options that take a value, by what the value is.
struct Options {
    program: &'static str,
    /// Short options whose value is a plain value (not a path, not a program).
    short_values: &'static str,
    /// Long options whose value is a plain value.
    long_values: &'static [&'static str],
    /// Options whose value is a file the program writes.
    writes: (&'static [&'static str], &'static [&'static str]),
    /// Short options whose value, if any, is the rest of their word and never the next one
    /// (`pr -n:3`): whatever follows them in a cluster is theirs, not more options.
    attached_values: &'static str,
    /// Words starting with `+` are options too (`pr +3` starts at page 3), not files.
    plus_options: bool,
}

const fn opts(program: &'static str, short_values: &'static str) -> Options {
    Options {
        program,
        short_values,
        long_values: &[],
        writes: (&[], &[]),
        attached_values: "",
        plus_options: false,
    }
}

const TABLE: &[Options] = &[
    Options {
        long_values: &[
            "delimiter",
            "fields",
            "bytes",
            "characters",
            "output-delimiter",
        ],
        ..opts("cut", "dfbc")
    },
    Options {
        long_values: &["delimiters"],
        ..opts("paste", "d")
    },
    Options {
        long_values: &["field-separator"],
        ..opts("join", "t12joe")
    },
    Options {
        long_values: &[
            "separator",
            "output-separator",
            "table-columns",
            "table-right",
            "table-truncate",
            "table-noextreme",
            "table-wrap",
            "table-hide",
            "table-name",
            "output-width",
        ],
        ..opts("column", "scoNRTEWHnr")
    },
    Options {
        long_values: &["width"],
        ..opts("fold", "w")
    },
    Options {
        long_values: &["width", "goal", "prefix"],
        ..opts("fmt", "wgp")
    },
    Options {
        long_values: &["lines", "bytes"],
        ..opts("head", "nc")
    },
    Options {
        long_values: &[
            "lines",
            "bytes",
            "pid",
            "sleep-interval",
            "max-unchanged-stats",
        ],
        ..opts("tail", "ncs")
    },
    Options {
        long_values: &[
            "number-format",
            "number-separator",
            "number-width",
            "section-delimiter",
            "body-numbering",
            "header-numbering",
            "footer-numbering",
            "starting-line-number",
            "line-increment",
            "join-blank-lines",
        ],
        ..opts("nl", "nsvwdbhfil")
    },
    Options {
        long_values: &["separator"],
        ..opts("tac", "s")
    },
    Options {
        long_values: &[
            "address-radix",
            "skip-bytes",
            "read-bytes",
            "format",
            "width",
        ],
        ..opts("od", "AjNtw")
    },
    Options {
        long_values: &[],
        ..opts("hexdump", "nse")
    },
    Options {
        long_values: &["wrap"],
        writes: (&["-o"], &["output"]),
        ..opts("base64", "w")
    },
    Options {
        long_values: &["wrap"],
        writes: (&["-o"], &["output"]),
        ..opts("base32", "w")
    },
    Options {
        long_values: &["wrap"],
        ..opts("basenc", "w")
    },
    Options {
        long_values: &["from-code", "to-code"],
        writes: (&["-o"], &["output"]),
        ..opts("iconv", "ft")
    },
    Options {
        long_values: &["format", "printf"],
        ..opts("stat", "c")
    },
    Options {
        long_values: &[
            "max-depth",
            "block-size",
            "threshold",
            "time-style",
            "exclude",
            "time",
        ],
        ..opts("du", "dBt")
    },
    Options {
        long_values: &[
            "block-size",
            "format",
            "hide",
            "ignore",
            "indicator-style",
            "quoting-style",
            "sort",
            "time",
            "time-style",
            "width",
            "tabsize",
            "color",
        ],
        ..opts("ls", "ITw")
    },
    Options {
        long_values: &["bytes", "encoding"],
        ..opts("strings", "ntes")
    },
    Options {
        long_values: &[
            "label",
            "ignore-matching-lines",
            "horizon-lines",
            "width",
            "tabsize",
        ],
        ..opts("diff", "ILW")
    },
    Options {
        long_values: &["ignore-initial", "bytes"],
        ..opts("cmp", "in")
    },
    Options {
        long_values: &[
            "field",
            "from",
            "to",
            "from-unit",
            "to-unit",
            "padding",
            "round",
            "suffix",
            "format",
            "header",
            "invalid",
            "delimiter",
        ],
        ..opts("numfmt", "d")
    },
    Options {
        long_values: &[
            "columns",
            "date-format",
            "header",
            "indent",
            "first-line-number",
            "length",
            "width",
            "page-width",
            "pages",
        ],
        attached_values: "eiInsS",
        plus_options: true,
        ..opts("pr", "DhloNwW")
    },
    Options {
        long_values: &["tabs"],
        ..opts("expand", "t")
    },
    Options {
        long_values: &["tabs"],
        ..opts("unexpand", "t")
    },
    Options {
        long_values: &["output-delimiter"],
        ..opts("comm", "")
    },
    Options {
        long_values: &[
            "separator",
            "magic-file",
            "parameter",
            "exclude",
            "exclude-quiet",
        ],
        ..opts("file", "FmPe")
    },
];

/// Programs that look at names and metadata, never at contents: naming a raw disk is not
/// reading it. (`file -s` reads a device; it is handled below.)
const INSPECTORS: &[&str] = &[
    "stat", "ls", "dir", "vdir", "du", "readlink", "realpath", "namei", "lsattr", "getfacl", "file",
];

/// What a [`super::tables::READ_PATHS`] program does with its arguments.
pub(super) fn effects(name: &str, args: &Args) -> Vec<Effect> {
    let Some(options) = TABLE.iter().find(|o| o.program == name) else {
        return finish(name, args, args.path_like());
    };
    let mut e = Vec::new();
    let (write_short, write_long) = options.writes;
    if !write_short.is_empty() || !write_long.is_empty() {
        e.extend(
            args.values_of(write_short, write_long)
                .into_iter()
                .map(Effect::Write),
        );
    }
    let skip_short: Vec<char> = options
        .short_values
        .chars()
        .chain(write_short.iter().filter_map(|o| o.chars().nth(1)))
        .collect();
    let skip_long: Vec<&str> = options
        .long_values
        .iter()
        .chain(write_long.iter())
        .copied()
        .collect();
    let attached: Vec<char> = options.attached_values.chars().collect();
    let mut operands = operands_with(args, &skip_short, &attached, &skip_long);
    if options.plus_options {
        operands.retain(|w| !lit(w).is_some_and(|s| s.starts_with('+')));
    }
    e.extend(finish(name, args, operands));
    e
}

/// The words that are operands, skipping every option and the values of the options named.
pub(super) fn operands(args: &Args, short: &[char], long: &[&str]) -> Vec<Word> {
    operands_with(args, short, &[], long)
}

/// [`operands`], where the `attached` short options take the rest of their word as their value
/// and nothing after it (`pr -nh FILE` numbers lines with `h` as separator: `FILE` is a file).
pub(super) fn operands_with(
    args: &Args,
    short: &[char],
    attached: &[char],
    long: &[&str],
) -> Vec<Word> {
    let mut out = Vec::new();
    let mut words = args.words.iter();
    let mut after_dashdash = false;
    while let Some(w) = words.next() {
        let Some(s) = lit(w) else {
            out.push(w.clone());
            continue;
        };
        if after_dashdash || s == "-" || !s.starts_with('-') {
            out.push(w.clone());
        } else if s == "--" {
            after_dashdash = true;
        } else if let Some(long_name) = s.strip_prefix("--") {
            let takes_value = long.iter().any(|l| super::long_matches(long_name, l));
            if takes_value && !long_name.contains('=') {
                words.next();
            }
        } else {
            // A cluster: the first letter that takes a value takes the rest of the cluster, or
            // the next word when it ends the cluster (never, for a letter whose value is
            // attached).
            let cluster = &s[1..];
            let taker = cluster
                .char_indices()
                .find(|(_, c)| short.contains(c) || attached.contains(c));
            if let Some((at, c)) = taker
                && short.contains(&c)
                && at + c.len_utf8() == cluster.len()
            {
                words.next();
            }
        }
    }
    out
}

fn finish(name: &str, args: &Args, operands: Vec<Word>) -> Vec<Effect> {
    let mut e = Vec::new();
    let inspects =
        INSPECTORS.contains(&name) && !(name == "file" && args.has(&['s'], &["special-files"]));
    let operands = operands.into_iter().filter(|w| lit(w) != Some("-"));
    if inspects {
        e.extend(operands.map(Effect::Inspect));
    } else {
        e.extend(reads(operands));
    }
    e
}
