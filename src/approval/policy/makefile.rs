//! `make -n`: prints the recipes it would run, and runs none of them, except where the makefile
//! itself says otherwise. GNU make still runs recipe lines marked `+` and lines that call
//! `$(MAKE)`, evaluates `$(shell …)`, `$(file …)`, `$(eval …)` and `$(guile …)` while it reads the
//! makefile, and remakes a makefile (or an included one) that a rule can rebuild. A dry run is
//! judged as a read of the makefile only when none of those appear in it; otherwise it asks,
//! naming the line, like any other make.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::judge::{self, Target};
use crate::facts::paths::PathContext;
use crate::facts::shell::{Cwd, Word};

/// A makefile bigger than this is not read; the dry run asks.
const MAX_MAKEFILE_BYTES: u64 = 1024 * 1024;

/// The makefile a `make -n` in `dir` (a word in `cwd`, `-f file` if given) reads, when the dry
/// run runs nothing; otherwise why it would run something, or why airlock cannot tell.
pub fn quiet_makefile(
    ctx: &PathContext,
    cwd: &Cwd,
    dir: &Word,
    file: Option<&Word>,
) -> Result<PathBuf, String> {
    let given = match file {
        None => None,
        Some(Word::Lit {
            value, glob: false, ..
        }) => Some(Path::new(value.as_str())),
        Some(_) => return Err("its makefile is named at run time".into()),
    };
    let makefile = match judge::target(ctx, cwd, dir) {
        Target::Paths(dirs) if dirs.len() == 1 => makefile_in(&dirs[0].path, given),
        _ => None,
    }
    .ok_or_else(|| "airlock cannot tell which makefile it reads".to_string())?;
    match runs_anyway(&makefile) {
        None => Ok(makefile),
        Some(why) => Err(why),
    }
}

/// The makefile `make` would read in `dir` (`-f` given, or GNU make's search order).
pub fn makefile_in(dir: &Path, given: Option<&Path>) -> Option<PathBuf> {
    if let Some(file) = given {
        return Some(dir.join(file));
    }
    ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Why a dry run with this makefile would still run something, or `None` when it runs nothing.
pub fn runs_anyway(makefile: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(makefile);
    let mut file = match file {
        Ok(f) => f,
        Err(e) => return Some(format!("its makefile cannot be read ({e})")),
    };
    match file.metadata() {
        Ok(m) if m.is_file() && m.len() <= MAX_MAKEFILE_BYTES => {}
        _ => return Some("its makefile is not a regular file of at most 1 MiB".into()),
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.read_to_end(&mut bytes) {
        return Some(format!("its makefile cannot be read ({e})"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let name = makefile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        for call in ["shell", "file", "eval", "guile", "MAKE"] {
            for open in ['(', '{'] {
                if compact.contains(&format!("${open}{call}")) {
                    let what = if call == "MAKE" {
                        "calls `$(MAKE)`, which `make -n` still runs".to_string()
                    } else {
                        format!("uses `$({call} …)`, which make evaluates while it reads the file")
                    };
                    return Some(format!("line {n} of {name} {what}"));
                }
            }
        }
        if let Some(recipe) = line.strip_prefix('\t')
            && recipe.trim_start_matches(['@', '-', ' ']).starts_with('+')
        {
            return Some(format!(
                "line {n} of {name} is a recipe marked `+`, which `make -n` still runs"
            ));
        }
        let word = line.split_whitespace().next().unwrap_or("");
        if matches!(word, "include" | "-include" | "sinclude") {
            return Some(format!(
                "line {n} of {name} includes another makefile, which make remakes first if a rule can"
            ));
        }
        if !line.starts_with('\t')
            && let Some((targets, _)) = line.split_once(':')
            && !targets.contains('=')
            && targets
                .split_whitespace()
                .any(|t| t == name || t.contains('%') && t.trim_matches('%').is_empty())
        {
            return Some(format!(
                "line {n} of {name} has a rule that can remake the makefile, which `make -n` runs"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(makefile: &str) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), makefile).unwrap();
        runs_anyway(&makefile_in(dir.path(), None).unwrap())
    }

    #[test]
    fn a_plain_makefile_runs_nothing_in_a_dry_run() {
        assert_eq!(
            check("CC = cc\nall: main.o\n\t$(CC) -o app main.o\n\nclean:\n\trm -f app *.o\n"),
            None
        );
    }

    #[test]
    fn every_construct_make_runs_even_in_a_dry_run_is_named() {
        for (makefile, word) in [
            ("V := $(shell id)\nall:\n\techo $(V)\n", "shell"),
            ("all:\n\t+./deploy.sh\n", "marked `+`"),
            ("all:\n\t@+touch x\n", "marked `+`"),
            ("all:\n\tcd sub && $(MAKE)\n", "$(MAKE)"),
            ("all:\n\tcd sub && ${MAKE}\n", "$(MAKE)"),
            ("$(eval X := 1)\nall:\n", "eval"),
            ("$(file > out,x)\nall:\n", "file"),
            ("include config.mk\nall:\n", "includes"),
            ("-include deps.mk\nall:\n", "includes"),
            ("Makefile: Makefile.in\n\t./configure\n", "remake"),
            ("%:\n\t./anything $@\n", "remake"),
        ] {
            let why = check(makefile).unwrap_or_else(|| panic!("{makefile:?} ran nothing"));
            assert!(why.contains(word), "{makefile:?}: {why}");
        }
    }
}
