//! The sandbox's note in a run's text: when a sandboxed command's output shows the sandbox
//! refused something, the tool adds a note to the result the model reads (`[sandbox] this
//! command ran in the sandbox `P` (…), which refused:` and a `  - …` line per refusal). The
//! cockpit reads the same note wherever it has it (a reopened session's results hold the model's
//! text whole) and shows a "sandbox refused N" badge on the run.

/// What a sandbox note says: the profile the command ran in and how many refusals it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxNote {
    pub profile: String,
    pub refusals: usize,
}

/// The note's first line starts with this.
const HEAD: &str = "[sandbox] ";

/// The sandbox note in `text`, if it has one.
pub fn find(text: &str) -> Option<SandboxNote> {
    find_in(text.lines())
}

/// The sandbox note among `lines`, if they hold one.
pub fn find_in<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<SandboxNote> {
    let mut lines = lines.into_iter();
    let head = lines.find(|l| l.starts_with(HEAD) && l.contains("which refused:"))?;
    let profile = head.split('`').nth(1).unwrap_or("").to_string();
    let mut refusals = 0;
    for line in lines {
        let Some(item) = line.strip_prefix("  - ") else {
            break;
        };
        refusals += item
            .strip_prefix("and ")
            .and_then(|rest| rest.strip_suffix(" more"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1);
    }
    Some(SandboxNote { profile, refusals })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_gives_its_profile_and_counts_its_refusals_the_more_line_included() {
        let text = "exit code 1\n[stderr] touch: cannot touch '/etc/x': Permission denied\n\
            [sandbox] this command ran in the sandbox `workspace-write` (writes only the workspace and temp, no network), which refused:\n  \
            - writing /etc/x: outside what `workspace-write` may write\n  \
            - a network call: curl: (7) Couldn't connect to server\n  \
            - and 3 more\n\
            If the task needs this, you may call bash again\n";
        assert_eq!(
            find(text),
            Some(SandboxNote {
                profile: "workspace-write".into(),
                refusals: 5
            })
        );
    }

    #[test]
    fn output_that_only_mentions_the_sandbox_has_no_note() {
        assert_eq!(find("exit code 0\n[sandbox] is a word here\n"), None);
        assert_eq!(find("Permission denied\n"), None);
    }
}
