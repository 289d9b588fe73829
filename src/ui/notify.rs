//! A nudge when you are needed: when an approval request starts waiting and the terminal does
//! not have focus, the cockpit writes a few bytes that the terminal turns into a desktop
//! notification (or, failing that, a bell). Nothing is installed and nothing is spawned, so it
//! also works over SSH.
//!
//! Terminals disagree on which escape sequence they show, so the method is configured
//! ([`NotifyMethod`]) and `auto` picks one from the environment ([`resolve`]). [`encode`] builds
//! the bytes and [`Notifier`] decides when to send them: at most once per request, and only
//! while the person is looking elsewhere.
//!
//! What a notification says is kept to the agent's name and the tool's name. It never carries a
//! command, its arguments or file content: a notification can show on a lock screen, in a
//! notification history or on a paired phone, where anyone may read it.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::str::FromStr;

use serde::Deserialize;

use crate::visible::{is_hidden, visible_line};

/// The title of every notification that has one.
pub const TITLE: &str = "airlock";

/// The most characters kept in one field (a title or a body); longer text is cut.
pub const FIELD_CHARS: usize = 120;

/// How many request ids a [`Notifier`] remembers as already nudged; past this the oldest is
/// forgotten.
pub const REMEMBERED_REQUESTS: usize = 1024;

/// The most characters of an agent's or a tool's name put in a message, so that a long agent
/// name cannot push the tool's name out of the field.
const NAME_CHARS: usize = 40;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// How to nudge, as configured: `auto`, `osc9`, `osc777`, `bell` or `off`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub enum NotifyMethod {
    /// Pick by the terminal, from the environment (see [`resolve`]).
    #[default]
    Auto,
    /// `ESC ] 9 ; text BEL`, iTerm2's notification. No title.
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL`, from rxvt, with a title.
    Osc777,
    /// The bell character alone.
    Bell,
    /// No nudge at all.
    Off,
}

impl NotifyMethod {
    pub const ALL: [NotifyMethod; 5] = [
        NotifyMethod::Auto,
        NotifyMethod::Osc9,
        NotifyMethod::Osc777,
        NotifyMethod::Bell,
        NotifyMethod::Off,
    ];

    /// The name used in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyMethod::Auto => "auto",
            NotifyMethod::Osc9 => "osc9",
            NotifyMethod::Osc777 => "osc777",
            NotifyMethod::Bell => "bell",
            NotifyMethod::Off => "off",
        }
    }

    /// Reads a configuration value. The names are exact (lowercase, no spaces).
    pub fn parse(text: &str) -> Result<NotifyMethod, UnknownNotifyMethod> {
        NotifyMethod::ALL
            .into_iter()
            .find(|m| m.as_str() == text)
            .ok_or_else(|| UnknownNotifyMethod {
                value: text.to_string(),
            })
    }

    /// "auto, osc9, osc777, bell, off"
    pub fn choices() -> String {
        NotifyMethod::ALL.map(NotifyMethod::as_str).join(", ")
    }
}

impl FromStr for NotifyMethod {
    type Err = UnknownNotifyMethod;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        NotifyMethod::parse(text)
    }
}

impl TryFrom<String> for NotifyMethod {
    type Error = UnknownNotifyMethod;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        NotifyMethod::parse(&text)
    }
}

impl fmt::Display for NotifyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A configured notification method that is not one of the known names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownNotifyMethod {
    /// The value as it was written.
    pub value: String,
}

impl fmt::Display for UnknownNotifyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The value came from a file or the command line: hidden characters are shown.
        write!(
            f,
            "unknown notification method \"{}\": use one of {}",
            visible_line(&self.value),
            NotifyMethod::choices()
        )
    }
}

impl std::error::Error for UnknownNotifyMethod {}

/// The method actually used, once `auto` has been resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concrete {
    Osc9,
    Osc777,
    Bell,
    Off,
}

impl Concrete {
    /// The configuration name of the same method.
    pub fn as_str(self) -> &'static str {
        match self {
            Concrete::Osc9 => "osc9",
            Concrete::Osc777 => "osc777",
            Concrete::Bell => "bell",
            Concrete::Off => "off",
        }
    }
}

/// How a row of [`TERMINALS`] tests an environment variable.
#[derive(Debug, Clone, Copy)]
enum Test {
    /// The variable is set and not empty.
    Set,
    /// The variable holds exactly this.
    Is(&'static str),
    /// The variable starts with this.
    StartsWith(&'static str),
}

/// One row: when `var` passes `test`, `auto` picks `pick`.
#[derive(Debug, Clone, Copy)]
struct Rule {
    var: &'static str,
    test: Test,
    pick: Concrete,
}

const fn rule(var: &'static str, test: Test, pick: Concrete) -> Rule {
    Rule { var, test, pick }
}

/// What `auto` picks, read top to bottom; the first row that matches wins, and no match gives
/// [`Concrete::Bell`]. `TERM_PROGRAM` comes first because the running terminal sets it itself;
/// the per-terminal markers next (they can be inherited by a terminal started from another one);
/// `TERM` last, because it is the one that crosses SSH.
///
/// Where a terminal shows both sequences, `osc777` is chosen for its separate title.
///
/// - iTerm2 (`TERM_PROGRAM=iTerm.app`, or `LC_TERMINAL=iTerm2`, which it sets and which SSH
///   and tmux carry along): `osc9`, the one it documents ("Post a notification", iTerm2's
///   proprietary escape codes); it does not read OSC 777.
/// - Ghostty (`TERM_PROGRAM=ghostty`, `GHOSTTY_RESOURCES_DIR`, `TERM=xterm-ghostty`): `osc9`
///   (ghostty.org/docs/vt/osc/9). Its OSC 777 parser is recent; a user of 1.2.3 reported
///   777 showing nothing.
/// - WezTerm (`TERM_PROGRAM=WezTerm`, `WEZTERM_PANE`, `TERM=wezterm`): `osc777`. Its
///   `notification_handling` page lists both 777 and 9 as making a toast.
/// - kitty (`KITTY_WINDOW_ID`, `TERM=xterm-kitty`): `osc777`, read since 0.24.0 ("Add support
///   for OSC 777 based desktop notifications" in its changelog); it reads OSC 9 too.
/// - VS Code (`TERM_PROGRAM=vscode`): `bell`. Its terminal shows OSC 99 (kitty's protocol,
///   microsoft/vscode#294247), neither 9 nor 777.
/// - Apple Terminal (`TERM_PROGRAM=Apple_Terminal`): `bell`; it has no notification sequence.
/// - Windows Terminal (`WT_SESSION`): `bell`. It reads OSC 9 as ConEmu's commands (progress,
///   working directory) and shows nothing for text; OSC 777 support was merged
///   (microsoft/terminal#20012) but had not reached a stable release when this was written.
///   Set `osc777` by hand on a build that has it.
/// - VTE terminals (`VTE_VERSION`: GNOME Terminal, Tilix, Ptyxis, ...): `osc777`, which Fedora's
///   VTE patch shows as a notification. Upstream VTE drops it silently; set `bell` there.
/// - foot (`TERM=foot…`): `osc777` (`foot-ctlseqs(7)`, shown through its `notify` command).
/// - rxvt-unicode (`TERM=rxvt…`): `osc777`, its own extension escape; it shows a notification
///   only with a `notify` perl extension installed.
const TERMINALS: &[Rule] = &[
    rule("TERM_PROGRAM", Test::Is("iTerm.app"), Concrete::Osc9),
    rule("TERM_PROGRAM", Test::Is("ghostty"), Concrete::Osc9),
    rule("TERM_PROGRAM", Test::Is("WezTerm"), Concrete::Osc777),
    rule("TERM_PROGRAM", Test::Is("vscode"), Concrete::Bell),
    rule("TERM_PROGRAM", Test::Is("Apple_Terminal"), Concrete::Bell),
    rule("LC_TERMINAL", Test::Is("iTerm2"), Concrete::Osc9),
    rule("KITTY_WINDOW_ID", Test::Set, Concrete::Osc777),
    rule("GHOSTTY_RESOURCES_DIR", Test::Set, Concrete::Osc9),
    rule("WEZTERM_PANE", Test::Set, Concrete::Osc777),
    rule("WT_SESSION", Test::Set, Concrete::Bell),
    rule("VTE_VERSION", Test::Set, Concrete::Osc777),
    rule("TERM", Test::Is("xterm-kitty"), Concrete::Osc777),
    rule("TERM", Test::Is("xterm-ghostty"), Concrete::Osc9),
    rule("TERM", Test::Is("wezterm"), Concrete::Osc777),
    rule("TERM", Test::StartsWith("foot"), Concrete::Osc777),
    rule("TERM", Test::StartsWith("rxvt"), Concrete::Osc777),
];

/// Turns the configured method into the one to use. Only `auto` looks at the environment,
/// through `env` (a variable's value, `None` when unset), as the table `TERMINALS` in this
/// file describes, each row with its source.
///
/// Inside tmux (`TMUX` set) the same table is read: `TERM_PROGRAM` and `TERM` then name tmux
/// and match nothing, so only what the outer terminal left in the environment tmux was started
/// from can match (`LC_TERMINAL`, `KITTY_WINDOW_ID`, ...). That may be stale after attaching
/// from another terminal; nothing better is known without asking tmux. The caller wraps the
/// sequence for tmux ([`encode`] with `tmux`), which tmux forwards only with
/// `set -g allow-passthrough on` (off by default since tmux 3.3); without it tmux drops the
/// sequence silently, and `bell` is the setting to use. Under GNU screen (`STY`) or Zellij
/// (`ZELLIJ`), which swallow these sequences and have no tmux-style passthrough, `auto` rings
/// the bell.
pub fn resolve(method: NotifyMethod, env: &dyn Fn(&str) -> Option<String>) -> Concrete {
    match method {
        NotifyMethod::Osc9 => Concrete::Osc9,
        NotifyMethod::Osc777 => Concrete::Osc777,
        NotifyMethod::Bell => Concrete::Bell,
        NotifyMethod::Off => Concrete::Off,
        NotifyMethod::Auto => auto(env),
    }
}

fn auto(env: &dyn Fn(&str) -> Option<String>) -> Concrete {
    let get = |var: &str| env(var).filter(|v| !v.is_empty());
    let in_tmux = get("TMUX").is_some();
    if !in_tmux && (get("STY").is_some() || get("ZELLIJ").is_some()) {
        return Concrete::Bell;
    }
    TERMINALS
        .iter()
        .find(|r| {
            get(r.var).is_some_and(|v| match r.test {
                Test::Set => true,
                Test::Is(want) => v == want,
                Test::StartsWith(prefix) => v.starts_with(prefix),
            })
        })
        .map_or(Concrete::Bell, |r| r.pick)
}

/// The bytes that make the terminal show `title` and `body` (OSC 9 shows the body alone), or
/// ring its bell, or nothing for [`Concrete::Off`]. The text is cleaned first (see
/// [`clean_field`]). With `tmux`, an OSC sequence is wrapped in tmux's passthrough
/// (`ESC P tmux ; … ESC \`, every ESC inside doubled); the bell needs no wrapping.
pub fn encode(concrete: Concrete, title: &str, body: &str, tmux: bool) -> Vec<u8> {
    let sequence = match concrete {
        Concrete::Off => return Vec::new(),
        Concrete::Bell => return vec![BEL],
        Concrete::Osc9 => {
            let mut text = clean_field(body);
            // ConEmu's OSC 9 commands start with a digit (`9;4;…` is progress, `9;5` waits
            // for input), and Windows Terminal and Ghostty read them: text that starts with a
            // digit is moved off it by a space so it is always read as a message.
            if text.starts_with(|c: char| c.is_ascii_digit()) {
                text.insert(0, ' ');
            }
            osc(&["9", &text])
        }
        Concrete::Osc777 => {
            // `;` separates the fields: one inside a field would move the rest into the body.
            let title = clean_field(title).replace(';', ",");
            let body = clean_field(body).replace(';', ",");
            osc(&["777", "notify", &title, &body])
        }
    };
    if tmux {
        tmux_passthrough(&sequence)
    } else {
        sequence
    }
}

/// `ESC ] field ; field … BEL`
fn osc(fields: &[&str]) -> Vec<u8> {
    let mut out = vec![ESC, b']'];
    out.extend_from_slice(fields.join(";").as_bytes());
    out.push(BEL);
    out
}

/// `ESC P tmux ; sequence ESC \`, with every ESC of the sequence doubled, as tmux asks.
fn tmux_passthrough(sequence: &[u8]) -> Vec<u8> {
    let mut out = b"\x1bPtmux;".to_vec();
    for &byte in sequence {
        if byte == ESC {
            out.push(ESC);
        }
        out.push(byte);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// Text made safe to put inside an escape sequence and fit for a notification: tabs and line
/// breaks become spaces; every other control character (C0, DEL, C1) and every bidi control,
/// zero-width or otherwise invisible character (the set [`crate::visible`] shows) is removed;
/// runs of spaces become one and the ends are trimmed; and the text is cut to [`FIELD_CHARS`]
/// characters, the last one then an ellipsis.
pub fn clean_field(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .filter_map(|c| match c {
            '\t' | '\n' | '\r' => Some(' '),
            c if is_hidden(c) => None,
            c => Some(c),
        })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    cut(&words.join(" "), FIELD_CHARS)
}

/// At most `max` characters of `text`; when some are cut, the last one kept is `…`.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The body of a waiting-request notification. Names only, on purpose: see the module docs.
fn waiting_body(agent: &str, tool: &str) -> String {
    let agent = cut(&clean_field(agent), NAME_CHARS);
    let tool = cut(&clean_field(tool), NAME_CHARS);
    let who = if agent.is_empty() {
        "An agent".to_string()
    } else {
        agent
    };
    if tool.is_empty() {
        format!("{who} is waiting for your approval")
    } else {
        format!("{who} is waiting for your approval to run {tool}")
    }
}

/// Decides when to nudge: only while the terminal is not focused, only once per request, and
/// never with [`Concrete::Off`].
///
/// Focus starts as focused. Until the terminal reports a change we do not know where the person
/// is looking, and many terminals never report focus at all; assuming they look away would ring
/// at every request while they watch the screen. A wrong guess this way costs one missed nudge
/// at most, which the screen itself makes up for.
#[derive(Debug)]
pub struct Notifier {
    method: Concrete,
    tmux: bool,
    focused: bool,
    /// Hashes of the request ids already nudged, at most [`REMEMBERED_REQUESTS`], and the same
    /// in the order they came, to forget the oldest. Hashes keep the memory small whatever the
    /// length of an id; the hasher's keys are random per notifier.
    nudged: HashSet<u64>,
    order: VecDeque<u64>,
    hasher: RandomState,
}

impl Notifier {
    /// A notifier sending `method`, wrapped for tmux passthrough when `tmux`.
    pub fn new(method: Concrete, tmux: bool) -> Notifier {
        Notifier {
            method,
            tmux,
            focused: true,
            nudged: HashSet::new(),
            order: VecDeque::new(),
            hasher: RandomState::new(),
        }
    }

    /// The method in use.
    pub fn method(&self) -> Concrete {
        self.method
    }

    /// Whether the terminal is taken to have focus.
    pub fn focused(&self) -> bool {
        self.focused
    }

    /// The terminal reported that it gained (`true`) or lost (`false`) focus.
    pub fn on_focus(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// Request `request_id` from `agent`, to run `tool`, is waiting for the person. Returns the
    /// bytes to write to the terminal, or `None` when there is nothing to send: the terminal
    /// has focus, the method is off, or this request was nudged before. A request is remembered
    /// only once nudged, so asking again for a request still waiting nudges it when focus has
    /// been lost since.
    ///
    /// `agent` and `tool` are names. Never pass a command, its arguments or file content: the
    /// notification can show on a lock screen.
    pub fn waiting(&mut self, request_id: &str, agent: &str, tool: &str) -> Option<Vec<u8>> {
        if self.focused || self.method == Concrete::Off {
            return None;
        }
        let key = self.hasher.hash_one(request_id);
        if !self.nudged.insert(key) {
            return None;
        }
        self.order.push_back(key);
        while self.order.len() > REMEMBERED_REQUESTS {
            if let Some(oldest) = self.order.pop_front() {
                self.nudged.remove(&oldest);
            }
        }
        Some(encode(
            self.method,
            TITLE,
            &waiting_body(agent, tool),
            self.tmux,
        ))
    }
}

#[cfg(test)]
mod tests;
