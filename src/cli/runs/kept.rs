//! Where a headless run's checkpoints are kept (`RunCheckpoints`, the agent's keeper for
//! `airlock exec`), and how a large one is read back.
//!
//! A checkpoint is written as the agent lends it (borrowed, nothing copied), streamed: up to
//! [`INLINE_BYTES`] it goes into the run's spec in the state database as before; past that it is
//! written to a file of its own, `checkpoints/<run>/<sha256>.json` under the state directory,
//! hashed as it is written, and the spec holds only where it is: `{"kept_in_file": {"run",
//! "sha256", "bytes"}}`. The spec is signed, so the digest is too: a file changed, cut or swapped
//! does not read back (`read`), and nothing runs from it. A 100 MB `write_file` is then never a
//! 100 MB JSON text in memory, copied again by the spec, the signature and SQLite's statement.
//!
//! A file is written under a temporary name and renamed once whole; the row points to it only
//! after that, and the files it no longer points to are removed after the row changed
//! (`tidy`). A process killed at any point leaves the row pointing to a whole file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

use super::{ResumeSpec, absolute_args, checkpoint_store};
use crate::agent::{CheckpointRef, Checkpoints};
use crate::cli::exec_args::{ExecArgs, HeadlessApprovals};
use crate::config::ConfigFlags;
use crate::config::fingerprint::PolicyFingerprint;
use crate::digest::hex;
use crate::protocol::SavedCheckpoint;
use crate::store;
use crate::store::db::Store;

/// Checkpoints up to this size stay in the run's spec; larger ones get a file of their own.
pub const INLINE_BYTES: usize = 1 << 20;

/// Bytes hashed and written at a time once a checkpoint goes to its file.
const BLOCK: usize = 64 * 1024;

/// Where the checkpoint files of every run live.
pub fn checkpoints_dir(state: &Path) -> PathBuf {
    state.join("checkpoints")
}

/// A checkpoint kept in a file of its own, as the spec names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeptInFile {
    kept_in_file: FileRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRef {
    run: String,
    sha256: String,
    bytes: u64,
}

impl KeptInFile {
    /// The file, under `state`; `None` when the names are not a run's and a digest's (a spec
    /// is signed, so this is only a second line of defence against a path out of the state
    /// directory).
    fn path(&self, state: &Path) -> Option<PathBuf> {
        let FileRef { run, sha256, .. } = &self.kept_in_file;
        let one_name =
            !run.is_empty() && !run.starts_with('.') && !run.contains('/') && !run.contains('\0');
        let digest = sha256.len() == 64
            && sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        (one_name && digest).then(|| {
            checkpoints_dir(state)
                .join(run)
                .join(format!("{sha256}.json"))
        })
    }

    /// The checkpoint's JSON, read from its file under `state` and checked against its size
    /// and digest.
    pub fn read(&self, state: &Path) -> Result<Vec<u8>, String> {
        let Some(path) = self.path(state) else {
            return Err("the checkpoint names a file that is not a checkpoint's".into());
        };
        let text = std::fs::read(&path).map_err(|e| {
            format!(
                "the checkpoint's file {} cannot be read ({e})",
                path.display()
            )
        })?;
        let FileRef { sha256, bytes, .. } = &self.kept_in_file;
        if text.len() as u64 != *bytes || hex(&Sha256::digest(&text)) != *sha256 {
            return Err(format!(
                "the checkpoint's file {} is not the one that was kept (changed outside airlock?)",
                path.display()
            ));
        }
        Ok(text)
    }
}

/// `ResumeSpec::checkpoint` read back: the checkpoint in the spec, or the one its file holds.
pub(super) fn checkpoint<'de, D, C>(deserializer: D) -> Result<C, D::Error>
where
    D: Deserializer<'de>,
    C: DeserializeOwned,
{
    let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
    resolve(raw.get(), &store::state_dir()).map_err(D::Error::custom)
}

/// `text` as a checkpoint: read from its file under `state` when it names one.
fn resolve<C: DeserializeOwned>(text: &str, state: &Path) -> Result<C, String> {
    // A checkpoint's own JSON starts with another field, which this refuses at once.
    match serde_json::from_str::<KeptInFile>(text) {
        Ok(kept) => {
            let json = kept.read(state)?;
            serde_json::from_slice(&json).map_err(|e| e.to_string())
        }
        Err(_) => serde_json::from_str(text).map_err(|e| e.to_string()),
    }
}

/// The keeper of `airlock exec`'s checkpoints: the latest one of the running turn goes into the
/// run's row (`save_running`), a parked one is sealed for `park`.
pub struct RunCheckpoints {
    session: String,
    workspace: PathBuf,
    scenario: Option<PathBuf>,
    config: ConfigFlags,
    approvals: HeadlessApprovals,
    policy: PolicyFingerprint,
    state: PathBuf,
    /// Opened at the first checkpoint, then kept for the run.
    db: Mutex<Option<Store>>,
    /// The run's checkpoint directory may hold files (written here, or by an earlier process
    /// of the run): each save removes those the row no longer names.
    files: AtomicBool,
    /// The first checkpoint that could not be kept: the run stops there (`airlock exec` ends
    /// with it), as a checkpoint it cannot keep makes a run it cannot go on with later.
    failure: Mutex<Option<String>>,
}

impl RunCheckpoints {
    pub fn new(
        args: &ExecArgs,
        policy: &PolicyFingerprint,
        session: &str,
        workspace: &Path,
    ) -> RunCheckpoints {
        Self::in_state(store::state_dir(), args, policy, session, workspace)
    }

    /// The keeper of a run whose state directory is `state`.
    fn in_state(
        state: PathBuf,
        args: &ExecArgs,
        policy: &PolicyFingerprint,
        session: &str,
        workspace: &Path,
    ) -> RunCheckpoints {
        let (scenario, config) = absolute_args(args);
        RunCheckpoints {
            files: AtomicBool::new(checkpoints_dir(&state).join(session).exists()),
            session: session.to_string(),
            workspace: workspace.to_path_buf(),
            scenario,
            config,
            approvals: args.approvals,
            policy: policy.clone(),
            state,
            db: Mutex::new(None),
            failure: Mutex::new(None),
        }
    }

    /// The run's id (its session's) and workspace.
    pub fn run(&self) -> (&str, &Path) {
        (&self.session, &self.workspace)
    }

    /// Why a checkpoint could not be kept, if one could not.
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    /// The run's spec around `checkpoint`, with nothing parked.
    pub(super) fn spec<'a>(
        &self,
        checkpoint: &'a SavedCheckpoint,
    ) -> ResumeSpec<&'a SavedCheckpoint> {
        ResumeSpec {
            checkpoint,
            workspace: self.workspace.clone(),
            scenario: self.scenario.clone(),
            config: self.config.clone(),
            approvals: self.approvals,
            file_hash: None,
            pid: None,
            verdict: None,
            judged_path: None,
            mcp_definition: None,
            policy_files: self.policy.clone(),
        }
    }

    /// Writes `checkpoint`: its JSON when small, else its file and where it is.
    fn write(
        &self,
        checkpoint: &CheckpointRef<'_>,
        durable: bool,
    ) -> Result<SavedCheckpoint, String> {
        let dir = checkpoints_dir(&self.state).join(&self.session);
        let mut out = Spill::new(dir, INLINE_BYTES);
        serde_json::to_writer(&mut out, checkpoint)
            .map_err(|e| format!("cannot write the checkpoint: {e}"))?;
        match out.finish(durable)? {
            Written::Inline(json) => SavedCheckpoint::from_json(json).map_err(|e| e.to_string()),
            Written::File { sha256, bytes } => {
                self.files.store(true, Ordering::SeqCst);
                SavedCheckpoint::of(&KeptInFile {
                    kept_in_file: FileRef {
                        run: self.session.clone(),
                        sha256,
                        bytes,
                    },
                })
                .map_err(|e| e.to_string())
            }
        }
    }

    fn save_running(&self, checkpoint: &CheckpointRef<'_>) -> Result<(), String> {
        let sealed = self.write(checkpoint, false)?;
        let mut db = lock(&self.db);
        let db = match &mut *db {
            Some(db) => db,
            empty => empty.insert(
                checkpoint_store(&self.state.join("airlock.db")).map_err(|e| format!("{e:#}"))?,
            ),
        };
        super::save_running(db, self, &sealed).map_err(|e| format!("{e:#}"))?;
        self.tidy(&sealed);
        Ok(())
    }

    /// Removes the run's checkpoint files but the one `kept` names (if it names one): called
    /// once the run's row names `kept`.
    pub fn tidy(&self, kept: &SavedCheckpoint) {
        if !self.files.load(Ordering::SeqCst) {
            return;
        }
        let keep = serde_json::from_str::<KeptInFile>(kept.json())
            .ok()
            .map(|k| format!("{}.json", k.kept_in_file.sha256));
        tidy(
            &checkpoints_dir(&self.state).join(&self.session),
            keep.as_deref(),
        );
    }
}

impl Checkpoints for RunCheckpoints {
    fn keep(&self, checkpoint: &CheckpointRef<'_>) -> Result<(), String> {
        let kept = self.save_running(checkpoint);
        if let Err(e) = &kept {
            lock(&self.failure).get_or_insert_with(|| e.clone());
        }
        kept
    }

    fn seal(&self, checkpoint: &CheckpointRef<'_>) -> Result<SavedCheckpoint, String> {
        // A parked run may wait a day for its answer: its file is on disk before its row is.
        self.write(checkpoint, true)
    }
}

/// Removes the files in `dir` but `keep`.
fn tidy(dir: &Path, keep: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if keep.is_none_or(|keep| entry.file_name() != keep) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Removes a run's checkpoint files: it has ended, and nothing goes on from it.
pub fn remove_run(session: &str) {
    remove_run_in(&store::state_dir(), session);
}

fn remove_run_in(state: &Path, session: &str) {
    let dir = checkpoints_dir(state).join(session);
    if !session.is_empty() && !session.contains('/') && dir.is_dir() {
        tidy(&dir, None);
        let _ = std::fs::remove_dir(&dir);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a `Spill` wrote.
enum Written {
    Inline(String),
    File { sha256: String, bytes: u64 },
}

/// A writer that keeps up to `limit` bytes in memory, and past that goes on into a file in
/// `dir`, hashing everything it writes, a block at a time.
struct Spill {
    dir: PathBuf,
    limit: usize,
    /// Everything so far while in memory; the block not yet written once in a file.
    buffer: Vec<u8>,
    file: Option<(PathBuf, std::fs::File)>,
    hasher: Sha256,
    bytes: u64,
}

impl Spill {
    fn new(dir: PathBuf, limit: usize) -> Spill {
        Spill {
            dir,
            limit,
            buffer: Vec::new(),
            file: None,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// Goes on in a file: what is in memory is its first block.
    fn spill(&mut self) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        store::private_dir(&self.dir)?;
        static WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let temporary = self.dir.join(format!(
            ".{}-{}.tmp",
            std::process::id(),
            WRITTEN.fetch_add(1, Ordering::SeqCst)
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        self.file = Some((temporary, file));
        self.write_block()
    }

    fn write_block(&mut self) -> std::io::Result<()> {
        if let Some((_, file)) = &mut self.file {
            self.hasher.update(&self.buffer);
            file.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn finish(mut self, durable: bool) -> Result<Written, String> {
        let cannot = |e: std::io::Error| format!("cannot write the checkpoint's file: {e}");
        self.write_block().map_err(cannot)?;
        let Some((temporary, file)) = self.file.take() else {
            let json = String::from_utf8(std::mem::take(&mut self.buffer))
                .map_err(|e| format!("the checkpoint is not text: {e}"))?;
            return Ok(Written::Inline(json));
        };
        let sha256 = hex(&self.hasher.finalize_reset());
        let kept = self.dir.join(format!("{sha256}.json"));
        let renamed = (|| {
            if durable {
                file.sync_all()?;
            }
            drop(file);
            std::fs::rename(&temporary, &kept)?;
            if durable {
                std::fs::File::open(&self.dir)?.sync_all()?;
            }
            Ok(())
        })();
        if let Err(e) = renamed {
            let _ = std::fs::remove_file(&temporary);
            return Err(cannot(e));
        }
        Ok(Written::File {
            sha256,
            bytes: self.bytes,
        })
    }
}

impl Write for Spill {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.bytes += data.len() as u64;
        if self.file.is_none() {
            if self.buffer.len() + data.len() <= self.limit {
                self.buffer.extend_from_slice(data);
                return Ok(data.len());
            }
            self.spill()?;
        }
        if data.len() >= BLOCK {
            // A long piece is hashed and written where it is, not copied first.
            self.write_block()?;
            self.hasher.update(data);
            if let Some((_, file)) = &mut self.file {
                file.write_all(data)?;
            }
            return Ok(data.len());
        }
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= BLOCK {
            self.write_block()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        // Not finished (serializing failed): the partial file goes.
        if let Some((temporary, _)) = self.file.take() {
            let _ = std::fs::remove_file(temporary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Checkpoint;
    use crate::model::Message;
    use crate::protocol::ToolCall;

    fn checkpoint(content: &str) -> Checkpoint {
        let call = ToolCall {
            id: "c1".into(),
            tool: "write_file".into(),
            args: serde_json::json!({"path": "big.txt", "content": content}),
        };
        Checkpoint {
            conversation: vec![
                Message::User { text: "go".into() },
                Message::Assistant {
                    text: String::new(),
                    calls: vec![call.clone()],
                },
            ],
            calls: vec![call],
            results: vec![None],
            parked: 0,
            model: serde_json::json!({"next_step": 1}),
            turn: 1,
            started: Vec::new(),
            idle: false,
            agents: Vec::new(),
            sub_agents: 0,
        }
    }

    fn large() -> String {
        (0..60_000)
            .map(|i| format!("line {i:06} of big.txt\n"))
            .collect()
    }

    fn keeper(state: &Path) -> RunCheckpoints {
        RunCheckpoints::in_state(
            state.to_path_buf(),
            &ExecArgs::default(),
            &PolicyFingerprint::default(),
            "exec-1-2",
            state,
        )
    }

    fn files(state: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(checkpoints_dir(state).join("exec-1-2")) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The checkpoint in the run's row, read back as `resume` reads it.
    fn in_row(state: &Path) -> Checkpoint {
        let db = Store::open(&state.join("airlock.db")).unwrap();
        let row = db.run("exec-1-2").unwrap().unwrap();
        assert!(row.signed);
        let spec: serde_json::Value =
            serde_json::from_str(row.checkpoint.as_deref().unwrap()).unwrap();
        resolve(&spec["checkpoint"].to_string(), state).unwrap()
    }

    fn json(checkpoint: &Checkpoint) -> String {
        serde_json::to_string(checkpoint).unwrap()
    }

    #[test]
    fn a_small_checkpoint_stays_in_the_runs_row_and_no_file_is_made() {
        let state = tempfile::tempdir().unwrap();
        let keeper = keeper(state.path());
        let small = checkpoint("a few bytes\n");
        keeper.keep(&small.view()).unwrap();
        assert_eq!(json(&in_row(state.path())), json(&small));
        let row = Store::open(&state.path().join("airlock.db"))
            .unwrap()
            .run("exec-1-2")
            .unwrap()
            .unwrap();
        assert!(row.checkpoint.unwrap().contains("a few bytes"));
        assert!(!checkpoints_dir(state.path()).exists());
    }

    #[test]
    fn a_large_checkpoint_is_kept_in_a_file_named_by_its_digest_and_reads_back_whole() {
        let state = tempfile::tempdir().unwrap();
        let keeper = keeper(state.path());
        let first = checkpoint(&large());
        keeper.keep(&first.view()).unwrap();
        let text = json(&first);
        let digest = hex(&Sha256::digest(text.as_bytes()));
        assert_eq!(files(state.path()), [format!("{digest}.json")]);
        assert_eq!(json(&in_row(state.path())), text);
        let row = Store::open(&state.path().join("airlock.db"))
            .unwrap()
            .run("exec-1-2")
            .unwrap()
            .unwrap();
        assert!(row.checkpoint.unwrap().len() < 2048);
        // The next one replaces it: the row names the new file, and the old one goes.
        let mut next = checkpoint(&large());
        next.started = vec![0];
        keeper.keep(&next.view()).unwrap();
        let digest = hex(&Sha256::digest(json(&next).as_bytes()));
        assert_eq!(files(state.path()), [format!("{digest}.json")]);
        assert_eq!(in_row(state.path()).started, vec![0]);
        // A run that ends leaves none.
        remove_run_in(state.path(), "exec-1-2");
        assert!(!checkpoints_dir(state.path()).join("exec-1-2").exists());
    }

    #[test]
    fn a_sealed_parked_checkpoint_names_its_file_and_tidying_keeps_only_that_one() {
        let state = tempfile::tempdir().unwrap();
        let keeper = keeper(state.path());
        keeper.keep(&checkpoint(&large()).view()).unwrap();
        let mut parked = checkpoint(&large());
        parked.results = vec![None];
        parked.turn = 2;
        let sealed = keeper.seal(&parked.view()).unwrap();
        assert_eq!(files(state.path()).len(), 2);
        let kept: KeptInFile = serde_json::from_str(sealed.json()).unwrap();
        keeper.tidy(&sealed);
        assert_eq!(
            files(state.path()),
            [format!("{}.json", kept.kept_in_file.sha256)]
        );
        let opened: Checkpoint = resolve(sealed.json(), state.path()).unwrap();
        assert_eq!(json(&opened), json(&parked));
    }

    #[test]
    fn a_checkpoint_file_changed_cut_or_gone_is_refused() {
        let state = tempfile::tempdir().unwrap();
        let keeper = keeper(state.path());
        let sealed = keeper.seal(&checkpoint(&large()).view()).unwrap();
        let kept: KeptInFile = serde_json::from_str(sealed.json()).unwrap();
        let path = kept.path(state.path()).unwrap();
        let whole = std::fs::read(&path).unwrap();
        let mut changed = whole.clone();
        let at = changed.len() / 2;
        changed[at] = if changed[at] == b'1' { b'2' } else { b'1' };
        for bad in [changed, whole[..whole.len() - 1].to_vec()] {
            std::fs::write(&path, &bad).unwrap();
            let err = resolve::<Checkpoint>(sealed.json(), state.path()).unwrap_err();
            assert!(err.contains("not the one that was kept"), "{err}");
        }
        std::fs::remove_file(&path).unwrap();
        let err = resolve::<Checkpoint>(sealed.json(), state.path()).unwrap_err();
        assert!(err.contains("cannot be read"), "{err}");
    }

    #[test]
    fn a_reference_that_names_a_path_out_of_the_checkpoints_directory_is_refused() {
        let state = tempfile::tempdir().unwrap();
        let digest = "0".repeat(64);
        for (run, sha256) in [
            ("..", digest.as_str()),
            ("../../etc", digest.as_str()),
            ("", digest.as_str()),
            ("exec-1-2", "../../../../etc/passwd"),
            ("exec-1-2", &digest[..63]),
        ] {
            let text =
                serde_json::json!({"kept_in_file": {"run": run, "sha256": sha256, "bytes": 1}})
                    .to_string();
            let err = resolve::<Checkpoint>(&text, state.path()).unwrap_err();
            assert!(err.contains("not a checkpoint's"), "{run} {sha256}: {err}");
        }
    }

    #[test]
    fn a_checkpoint_that_cannot_be_kept_is_remembered_as_the_runs_failure() {
        let state = tempfile::tempdir().unwrap();
        // The state directory is a file: neither the database nor a checkpoint file can be made.
        let blocked = state.path().join("blocked");
        std::fs::write(&blocked, "").unwrap();
        let keeper = keeper(&blocked);
        assert!(keeper.keep(&checkpoint("x").view()).is_err());
        assert!(keeper.failure().is_some());
        assert!(keeper.keep(&checkpoint(&large()).view()).is_err());
    }
}
