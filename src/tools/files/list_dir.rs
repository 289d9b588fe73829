//! `list_dir`: the entries of a directory, marked `/` for directories and `@` for links.

use std::borrow::Cow;

use nix::sys::stat::SFlag;
use serde_json::Value;

use super::Place;
use super::held::{self, Verb};
use crate::facts::catalog::{PathAccess, PathArg, PathTarget};
use crate::output::{ToolError, ToolOutcome};
use crate::protocol::Risk;
use crate::tools::tool::{ArgText, Tool, ToolFuture, ToolRun, object_schema, path_schema};

pub struct ListDir;

impl Tool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }

    fn description(&self) -> Cow<'_, str> {
        "List the entries of a directory.".into()
    }

    fn schema(&self) -> Value {
        object_schema(&[("path", path_schema())], &["path"])
    }

    fn risk(&self) -> Risk {
        Risk::Safe
    }

    fn paths(&self) -> &'static [PathArg] {
        &[PathArg {
            key: "path",
            names: PathTarget::Tree,
            access: PathAccess::Read { verb: "list" },
            default: Some("."),
        }]
    }

    fn title_fields(&self) -> &'static [&'static str] {
        &["path"]
    }

    fn title(&self, args: &ArgText<'_>) -> String {
        format!("list {}", args.path_or_here("path"))
    }

    fn execute<'a>(&'a self, run: ToolRun<'a>) -> ToolFuture<'a> {
        Box::pin(async move { list_dir(run.place()?, &run.args) })
    }
}

pub fn list_dir(place: Place, args: &Value) -> Result<ToolOutcome, ToolError> {
    use nix::dir::Type;
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let held = place.judged(raw, Verb::List).hold(false)?;
    let mut dir = nix::dir::Dir::from_fd(held.open_dir_to_read()?)
        .map_err(|e| held.judged.cannot(std::io::Error::from(e)))?;
    let mut found = Vec::new();
    for entry in dir.iter() {
        let entry = entry.map_err(|e| held.judged.cannot(std::io::Error::from(e)))?;
        let name = entry.file_name().to_owned();
        if name.as_bytes() == b"." || name.as_bytes() == b".." {
            continue;
        }
        found.push((name, entry.file_type()));
    }
    let mut entries: Vec<String> = found
        .into_iter()
        .map(|(name, kind)| {
            // Some filesystems do not say in the listing: ask, without following a link.
            let kind = kind.or_else(|| {
                nix::sys::stat::fstatat(
                    &dir,
                    name.as_c_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .ok()
                .map(|stat| match held::kind(&stat) {
                    SFlag::S_IFDIR => Type::Directory,
                    SFlag::S_IFLNK => Type::Symlink,
                    _ => Type::File,
                })
            });
            let name = name.to_string_lossy().into_owned();
            match kind {
                Some(Type::Directory) => format!("{name}/"),
                Some(Type::Symlink) => format!("{name}@"),
                _ => name,
            }
        })
        .collect();
    entries.sort();
    Ok(ToolOutcome::text(entries.join("\n") + "\n"))
}
