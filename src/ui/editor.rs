//! `e` on a file change: its text opens in the person's own editor (`$VISUAL`, else `$EDITOR`),
//! with the cockpit's screen handed back to the terminal meanwhile and taken again after,
//! however the editor ends. The text is written to a file of this user's only (mode 600) in the
//! temp directory, read back, and removed.
//!
//! Keys are read by a thread of the event stream: it is stopped (the stream dropped) before the
//! editor starts, so no keystroke meant for the editor is taken by the cockpit, and a new stream
//! reads keys after.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;

use crossterm::event::EventStream;

use super::CockpitTerminal;
use super::app::EditorJob;

/// Opens `job`'s text in the person's editor; the edited text, or why there is none.
pub fn edit(
    _terminal: &mut CockpitTerminal,
    input: &mut EventStream,
    job: &EditorJob,
) -> Result<String, String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        .ok_or(
            "no editor is set: set $VISUAL or $EDITOR (e.g. EDITOR=vim) and press e again; \
             nothing changed",
        )?;
    let path = scratch_file(job)?;
    // Stop reading keys, and give the terminal back.
    drop(std::mem::replace(input, EventStream::new()));
    let mut out = std::io::stdout();
    let _ = crossterm::execute!(
        out,
        crossterm::event::DisableFocusChange,
        crossterm::event::DisableMouseCapture,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = crossterm::terminal::disable_raw_mode();
    // The editor named as the person wrote it (it may carry arguments: `code --wait`).
    let status = tokio::task::block_in_place(|| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("airlock-editor")
            .arg(&path)
            .status()
    });
    let _ = crossterm::terminal::enable_raw_mode();
    let _ = crossterm::execute!(
        out,
        crossterm::terminal::EnterAlternateScreen,
        crossterm::event::EnableMouseCapture,
        crossterm::event::EnableFocusChange
    );
    let _ = out.flush();
    let read = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let shown = crate::visible::visible_line(&editor);
    match status {
        Err(e) => Err(format!(
            "cannot start the editor `{shown}`: {e}; nothing changed"
        )),
        Ok(status) if !status.success() => Err(format!(
            "the editor `{shown}` ended with {status}; nothing changed"
        )),
        Ok(_) => {
            read.map_err(|e| format!("cannot read the edited text back: {e}; nothing changed"))
        }
    }
}

/// A new file of this user's only, holding `job`'s text.
fn scratch_file(job: &EditorJob) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let path = std::env::temp_dir().join(format!(
        "airlock-edit-{}-{stamp:x}{}",
        std::process::id(),
        job.suffix
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| {
            format!(
                "cannot make a file to edit in {}: {e}; nothing changed",
                path.display()
            )
        })?;
    file.write_all(job.text.as_bytes())
        .map_err(|e| format!("cannot write the text to edit: {e}; nothing changed"))?;
    Ok(path)
}
