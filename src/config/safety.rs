//! The settings that decide how calls are judged and confined: the approval mode, the sandbox
//! profile and the rules files, and loading the rules. A project may tighten each of them
//! (stricter mode, narrower sandbox, ask and deny rules) but loosens nothing until it is
//! trusted; a trusted project's rules are loaded from bytes checked against that trust.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::file::relative_to;
use super::layers::{Layers, pick};
use super::{ConfigFlags, Env, Resolved, Setting, Source, trust};
use crate::approval::policy::Mode;
use crate::approval::rules::{Action, Rules};
use crate::sandbox::Profile;

/// The mode: a project may only make it stricter than what it would otherwise be, unless it is
/// trusted; a flag or the environment beats a trusted project that is not stricter.
pub(super) fn mode(
    layers: &Layers,
    flags: &ConfigFlags,
    env: &dyn Env,
    ignored: &mut Vec<String>,
) -> Result<Setting<Mode>> {
    let env_mode = match env.var("AIRLOCK_MODE") {
        Some(v) => Some(parse_mode(&v).with_context(|| {
            format!("$AIRLOCK_MODE is {v:?}; use default, auto-edit or read-only")
        })?),
        None => None,
    };
    let base_mode = pick(
        (flags.mode, "mode"),
        (env_mode, "AIRLOCK_MODE"),
        None,
        layers.user(layers.user.mode),
    )
    .unwrap_or(Setting {
        value: Mode::Default,
        source: Source::Default,
    });
    let has_project = layers.has_project;
    Ok(match layers.project.mode {
        Some(m)
            if has_project && (layers.trusted || strictness(m) > strictness(base_mode.value)) =>
        {
            if matches!(base_mode.source, Source::Flag(_) | Source::Env(_))
                && strictness(m) <= strictness(base_mode.value)
            {
                base_mode
            } else {
                Setting {
                    value: m,
                    source: Source::Project(layers.project_path.clone()),
                }
            }
        }
        Some(m) if has_project => {
            ignored.push(format!(
                "`mode = \"{}\"` from {} (looser than {}; the project is not trusted)",
                m.as_str(),
                layers.project_path.display(),
                base_mode.value.as_str()
            ));
            base_mode
        }
        _ => base_mode,
    })
}

/// The sandbox: a project may only narrow it (`read-only`) until it is trusted; a flag beats a
/// project that is not narrower.
pub(super) fn sandbox(
    layers: &Layers,
    flags: &ConfigFlags,
    ignored: &mut Vec<String>,
) -> Setting<Profile> {
    let base_sandbox = pick(
        (flags.sandbox, "sandbox"),
        (None, ""),
        None,
        layers.user(layers.user.sandbox),
    )
    .unwrap_or(Setting {
        value: Profile::WorkspaceWrite,
        source: Source::Default,
    });
    let has_project = layers.has_project;
    match layers.project.sandbox {
        Some(s)
            if has_project
                && matches!(base_sandbox.source, Source::Flag(_))
                && s >= base_sandbox.value =>
        {
            base_sandbox
        }
        Some(s) if has_project && (layers.trusted || s < base_sandbox.value) => Setting {
            value: s,
            source: Source::Project(layers.project_path.clone()),
        },
        Some(s) if has_project && s > base_sandbox.value => {
            ignored.push(format!(
                "`sandbox = \"{}\"` from {} (wider than {}; the project is not trusted)",
                s.as_str(),
                layers.project_path.display(),
                base_sandbox.value.as_str()
            ));
            base_sandbox
        }
        _ => base_sandbox,
    }
}

/// Every rules file in use, in the order they merge: user, project, environment, flag.
pub(super) fn rules(layers: &Layers, flags: &ConfigFlags, env: &dyn Env) -> Vec<Setting<PathBuf>> {
    let mut rules = Vec::new();
    if let (Some(r), true) = (&layers.user.rules, layers.has_user) {
        rules.push(Setting {
            value: relative_to(&layers.user_path, r),
            source: Source::User(layers.user_path.clone()),
        });
    }
    if let (Some(r), true) = (&layers.project.rules, layers.has_project) {
        rules.push(Setting {
            value: relative_to(&layers.project_path, r),
            source: Source::Project(layers.project_path.clone()),
        });
    }
    if let Some(r) = env.var("AIRLOCK_RULES") {
        rules.push(Setting {
            value: PathBuf::from(r),
            source: Source::Env("AIRLOCK_RULES".into()),
        });
    }
    if let Some(r) = &flags.rules {
        rules.push(Setting {
            value: r.clone(),
            source: Source::Flag("rules".into()),
        });
    }
    rules
}

fn strictness(mode: Mode) -> u8 {
    match mode {
        Mode::AutoEdit => 0,
        Mode::Default => 1,
        Mode::ReadOnly => 2,
    }
}

fn parse_mode(v: &str) -> Result<Mode> {
    Ok(match v {
        "default" => Mode::Default,
        "auto-edit" => Mode::AutoEdit,
        "read-only" => Mode::ReadOnly,
        other => bail!("unknown mode {other:?}"),
    })
}

impl Resolved {
    /// All rules files merged. Rules from an untrusted project keep only their ask and deny
    /// rules: a project may tighten, never loosen.
    /// A trusted project's rules are parsed from bytes whose hash is checked against the trust
    /// just given, so a file swapped after `resolve` cannot slip in.
    pub fn load_rules(&self) -> Result<Rules> {
        let mut all = Rules::empty();
        for setting in &self.rules {
            let project = matches!(setting.source, Source::Project(_));
            let mut rules = if project && self.project_trusted {
                self.load_trusted_rules(&setting.value)?
            } else {
                Rules::load(&setting.value)?
            };
            if project && !self.project_trusted {
                rules.rules.retain(|r| r.action != Action::Allow);
            }
            all.rules.extend(rules.rules);
        }
        Ok(all)
    }

    fn load_trusted_rules(&self, path: &Path) -> Result<Rules> {
        let changed = || {
            anyhow::anyhow!(
                "{} changed after airlock checked it against your trust; check it, then run `airlock trust` again",
                path.display()
            )
        };
        let physical = std::fs::canonicalize(path).map_err(|_| changed())?;
        let bytes = std::fs::read(&physical).map_err(|_| changed())?;
        let trusted = self
            .trusted_files
            .iter()
            .any(|f| f.path == physical && f.sha256 == trust::sha256(&bytes));
        if !trusted {
            return Err(changed());
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!("{}: not valid UTF-8; save it as UTF-8", path.display())
        })?;
        Ok(Rules::parse(&text, path)?)
    }

    /// Every file that decides how this session judges calls, absolute, whether or not it exists:
    /// the user config, the project config and every rules file in use. The policy refuses the
    /// agent writes to each of them.
    pub fn active_files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.user_config.clone(), self.project_config.clone()];
        for setting in &self.rules {
            files.push(std::path::absolute(&setting.value).unwrap_or(setting.value.clone()));
        }
        files.extend(self.hook_files.iter().cloned());
        files
    }
}
