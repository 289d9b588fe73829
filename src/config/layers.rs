//! The layers a setting can come from: the user and project files as loaded (with the project's
//! trust decided once, here), and [`pick`], which takes the highest layer that sets a value. The
//! per-setting rules (what an untrusted project may not set, what it may only tighten) live with
//! the settings in `provider` and `safety`; this module only knows where each value came from.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::file::ConfigFile;
use super::{Env, Setting, Source, project_config_path, trust, user_config_path};

/// The user and project config files, each with where it is looked for and whether it exists,
/// and whether the project is trusted.
pub(super) struct Layers {
    pub user: ConfigFile,
    pub user_path: PathBuf,
    pub has_user: bool,
    pub project: ConfigFile,
    pub project_path: PathBuf,
    pub has_project: bool,
    pub trusted: bool,
    /// Why a project trusted before is not trusted now: every changed file, named.
    pub trust_note: Option<String>,
    /// The files of a trusted project as they were checked against the user's trust.
    pub trusted_files: Vec<trust::TrustedFile>,
}

impl Layers {
    /// Reads both files (a missing file is an empty layer) and checks the project against the
    /// user's trust in `state_dir`.
    pub fn load(workspace: &Path, env: &dyn Env, state_dir: &Path) -> Result<Layers> {
        let user_path = user_config_path(env);
        let user = ConfigFile::load(&user_path)?;
        let project_path = project_config_path(workspace);
        let project = ConfigFile::load_bytes(&project_path)?;
        let (trusted, trust_note, trusted_files) = match &project {
            Some((file, bytes)) => project_trust(workspace, &project_path, file, bytes, state_dir)?,
            None => (false, None, Vec::new()),
        };
        Ok(Layers {
            has_user: user.is_some(),
            user: user.unwrap_or_default(),
            user_path,
            has_project: project.is_some(),
            project: project.map(|(file, _)| file).unwrap_or_default(),
            project_path,
            trusted,
            trust_note,
            trusted_files,
        })
    }

    /// The user layer's `value`, or no layer when there is no user file.
    pub fn user<T>(&self, value: Option<T>) -> Option<(Option<T>, PathBuf)> {
        self.has_user.then(|| (value, self.user_path.clone()))
    }

    /// The project layer's `value`, or no layer when there is no project file.
    pub fn project<T>(&self, value: Option<T>) -> Option<(Option<T>, PathBuf)> {
        self.has_project.then(|| (value, self.project_path.clone()))
    }

    /// A project `value` of a setting an untrusted project may not set at all: kept when the
    /// project is trusted, otherwise dropped and named in `ignored`.
    pub fn guarded<T>(&self, name: &str, value: Option<T>, ignored: &mut Vec<String>) -> Option<T> {
        if value.is_some() && !self.trusted {
            ignored.push(format!(
                "`{name}` from {} (the project is not trusted: run `airlock trust` in it to allow)",
                self.project_path.display()
            ));
            None
        } else {
            value
        }
    }
}

/// Whether the project config (parsed from `bytes`) and every file it pulls in are trusted as
/// they are now; if they were trusted before and are not now, a note naming what changed.
fn project_trust(
    workspace: &Path,
    project_path: &Path,
    file: &ConfigFile,
    bytes: &[u8],
    state_dir: &Path,
) -> Result<(bool, Option<String>, Vec<trust::TrustedFile>)> {
    Ok(match trust::project_files(project_path, bytes, file) {
        Ok(files) => match trust::status(state_dir, workspace, &files)? {
            trust::Status::Trusted => (true, None, files),
            trust::Status::NeverTrusted => (false, None, Vec::new()),
            trust::Status::Changed { note } => (
                false,
                Some(format!("the project is not trusted any more: {note}")),
                Vec::new(),
            ),
        },
        Err(e) => (
            false,
            Some(format!(
                "the project is not trusted: {e:#}; fix it, then run `airlock trust` in {}",
                workspace.display()
            )),
            Vec::new(),
        ),
    })
}

/// The value of the highest layer that sets one: flag, environment, project, user. Each layer
/// is `None` when it does not apply to this setting (or its file does not exist).
pub(super) fn pick<T>(
    flag: (Option<T>, &str),
    env: (Option<T>, &str),
    project: Option<(Option<T>, PathBuf)>,
    user: Option<(Option<T>, PathBuf)>,
) -> Option<Setting<T>> {
    if let Some(v) = flag.0 {
        return Some(Setting {
            value: v,
            source: Source::Flag(flag.1.into()),
        });
    }
    if let Some(v) = env.0 {
        return Some(Setting {
            value: v,
            source: Source::Env(env.1.into()),
        });
    }
    if let Some((Some(v), p)) = project {
        return Some(Setting {
            value: v,
            source: Source::Project(p),
        });
    }
    if let Some((Some(v), p)) = user {
        return Some(Setting {
            value: v,
            source: Source::User(p),
        });
    }
    None
}
