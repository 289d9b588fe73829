//! The module walls, kept by `cargo test` rather than by review.
//!
//! Each top-level module of `src/` says in its `//!` comment which modules it must never import
//! ("must never import `a`, `b`") or that it "imports nothing of the crate". This test reads
//! `src/` the way the compiler does (from `lib.rs`, following `mod` declarations, leaving out
//! code under `#[cfg(test)]`), finds every `crate::module` a module's own code names, and fails
//! when one is a module its comment forbids, when a module declares no wall at all, or when the
//! imports between top-level modules close a cycle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's source as the walls see it: each top-level module's doc comment and the modules its
/// non-test code names, with where.
#[derive(Debug, Default)]
struct Crate {
    modules: BTreeMap<String, Module>,
}

#[derive(Debug, Default)]
struct Module {
    doc: String,
    /// Module named → the files (relative to `src/`) that name it.
    names: BTreeMap<String, BTreeSet<String>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
        let mut krate = Crate::default();
        for name in declared_modules(&code_of(&lib)) {
            krate.modules.insert(name, Module::default());
        }
        let names: Vec<String> = krate.modules.keys().cloned().collect();
        for name in &names {
            let file = module_file(src, name);
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
            let module = krate.modules.get_mut(name).unwrap();
            module.doc = inner_doc(&text);
            walk(src, &file, &text, &names, name, module);
        }
        krate
    }

    /// Every broken wall, in words.
    fn broken_walls(&self) -> Vec<String> {
        let all: BTreeSet<&str> = self.modules.keys().map(String::as_str).collect();
        let mut broken = Vec::new();
        for (name, module) in &self.modules {
            let Some(forbidden) = forbidden(&module.doc, name, &all) else {
                broken.push(format!(
                    "`{name}` declares no wall: its `//!` comment must say which modules it \
                     \"must never import\" (or that it \"imports nothing of the crate\")"
                ));
                continue;
            };
            for (named, files) in &module.names {
                if forbidden.contains(named.as_str()) {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    broken.push(format!(
                        "`{name}` must never import `{named}`, but {} does",
                        files.join(", ")
                    ));
                }
            }
        }
        broken
    }

    /// A cycle among the top-level modules, as `a -> b -> … -> a`, if there is one.
    fn cycle(&self) -> Option<String> {
        let mut finished = BTreeSet::new();
        self.modules
            .keys()
            .find_map(|name| self.cycle_from(name, &mut Vec::new(), &mut finished))
    }

    /// A depth-first walk from `at`: a module met again on the current path closes a cycle.
    fn cycle_from<'a>(
        &'a self,
        at: &'a str,
        path: &mut Vec<&'a str>,
        finished: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|m| *m == at) {
            let mut cycle = path[start..].to_vec();
            cycle.push(at);
            return Some(cycle.join(" -> "));
        }
        if finished.contains(at) {
            return None;
        }
        path.push(at);
        for next in self.modules[at].names.keys() {
            if let Some(found) = self.cycle_from(next, path, finished) {
                return Some(found);
            }
        }
        path.pop();
        finished.insert(at);
        None
    }
}

/// `src/name.rs` or `src/name/mod.rs`.
fn module_file(dir: &Path, name: &str) -> PathBuf {
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// Reads one file of `top`, and the files of the modules it declares (test modules left out).
fn walk(src: &Path, file: &Path, text: &str, tops: &[String], top: &str, module: &mut Module) {
    let code = code_of(text);
    let relative = file.strip_prefix(src).unwrap().display().to_string();
    for named in crate_paths(&code) {
        if named != top && tops.contains(&named) {
            module
                .names
                .entry(named)
                .or_default()
                .insert(relative.clone());
        }
    }
    // Where this file's child modules live: `dir/` for `mod.rs` and `lib.rs`, `dir/stem/` else.
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let base = if stem == "mod" {
        file.parent().unwrap().to_path_buf()
    } else {
        file.parent().unwrap().join(stem)
    };
    for child in declared_modules(&code) {
        let path = child_file(file, &base, &child, &code);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        walk(src, &path, &text, tops, top, module);
    }
}

/// The file of `mod child;`: a `#[path = "…"]` on it, else `base/child.rs` or
/// `base/child/mod.rs`.
fn child_file(file: &Path, base: &Path, child: &str, code: &str) -> PathBuf {
    let declaration = format!("mod {child};");
    if let Some(at) = code.find(&declaration) {
        let before = &code[..at];
        let attribute = before
            .rfind("#[path")
            .filter(|p| !before[*p..].contains(';'));
        if let Some(p) = attribute {
            let rest = &before[p..];
            if let (Some(open), Some(close)) = (rest.find('"'), rest.rfind('"')) {
                return file.parent().unwrap().join(&rest[open + 1..close]);
            }
        }
    }
    module_file(base, child)
}

/// The modules a file declares with `mod name;` (with any visibility), in code already stripped
/// of comments, strings and test-only items.
fn declared_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';'))
        .filter(|w| !w.is_empty())
        .collect();
    for pair in words.windows(2) {
        if pair[0] == "mod"
            && let Some(name) = pair[1].strip_suffix(';')
        {
            found.push(name.to_string());
        }
    }
    found
}

/// The top-level names `crate::name` spells, counting `use crate::{a, b::c}` groups too.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        rest = &rest[at + "crate::".len()..];
        if preceded {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The module's own `//!` comment, as one line of text.
fn inner_doc(text: &str) -> String {
    text.lines()
        .map(str::trim_start)
        .take_while(|l| l.starts_with("//!") || l.is_empty())
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The modules `doc` forbids `name` to import, from the first of these its comment says:
/// "imports nothing of the crate" (every other module), "imports only `a`, `b`" (every other
/// module but those), "must never import `a`, `b`" (those), "may import every module" (none).
/// `None` when it says none of them.
fn forbidden<'a>(doc: &str, name: &str, all: &BTreeSet<&'a str>) -> Option<BTreeSet<&'a str>> {
    let lower = doc.to_lowercase();
    let others = || all.iter().copied().filter(move |m| *m != name);
    let named = |phrase: &str| -> Option<BTreeSet<&'a str>> {
        let at = lower.find(phrase)?;
        let sentence = &doc[at..];
        let sentence = &sentence[..sentence.find(". ").unwrap_or(sentence.len())];
        Some(
            sentence
                .split('`')
                .skip(1)
                .step_by(2)
                .filter_map(|n| all.get(n).copied())
                .collect(),
        )
    };
    if lower.contains("imports nothing of the crate") {
        return Some(others().collect());
    }
    if let Some(allowed) = named("imports only") {
        return Some(others().filter(|m| !allowed.contains(m)).collect());
    }
    if let Some(never) = named("must never import") {
        return Some(never);
    }
    lower
        .contains("may import every module")
        .then(BTreeSet::new)
}

/// `text` with comments, string and character literals blanked, and every item under
/// `#[cfg(test)]` removed: what the compiler builds outside tests, in a form where searching for
/// `crate::` and `mod` finds only code.
fn code_of(text: &str) -> String {
    remove_test_items(&blank_literals(text))
}

/// Comments, strings (plain, byte, raw) and character literals replaced by spaces; lifetimes
/// are kept.
fn blank_literals(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &b in s {
            out.push(if b == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if let Some(len) = raw_string_len(rest) {
            blank(&mut out, &rest[..len]);
            i += len;
        } else if rest[0] == b'"' || rest.starts_with(b"b\"") {
            let start = usize::from(rest[0] == b'b');
            let mut j = start + 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest[0] == b'\'' {
            // A character literal ('a', '\n', '\u{1F600}', '\''), not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&b| b == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(2 + ch)
            };
            match len {
                Some(len) => {
                    blank(&mut out, &rest[..len]);
                    i += len;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `rest`.
fn raw_string_len(rest: &[u8]) -> Option<usize> {
    let start = if rest.starts_with(b"br") {
        2
    } else if rest.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = rest[start..].iter().take_while(|&&b| b == b'#').count();
    if rest.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = start + hashes + 1;
    let end = rest[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(body + end + close.len())
}

/// Removes each item that follows `#[cfg(test)]`: up to its `;` (a `mod x;`, a `use`) or to the
/// brace that closes its body.
fn remove_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (j, c) in item.char_indices().skip("#[cfg(test)]".len()) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_imports_one_its_own_comment_forbids() {
    let broken = Crate::read(&src()).broken_walls();
    assert!(
        broken.is_empty(),
        "walls broken:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_imports_between_top_level_modules_form_no_cycle() {
    let krate = Crate::read(&src());
    assert_eq!(krate.cycle(), None, "the top-level imports close a cycle");
}

#[test]
fn the_walls_are_read_from_the_real_tree() {
    // The check is worth something only if it sees the crate: every module, their comments and
    // the imports that are known to be there.
    let krate = Crate::read(&src());
    for name in [
        "protocol", "approval", "agent", "ui", "cli", "tools", "facts",
    ] {
        assert!(krate.modules.contains_key(name), "`{name}` is read");
    }
    assert!(krate.modules["cli"].names.contains_key("agent"));
    assert!(krate.modules["agent"].names.contains_key("protocol"));
    assert!(krate.modules["approval"].names.contains_key("facts"));
}

/// A crate written to a temporary `src/`: `files` are (path, text).
fn scratch(files: &[(&str, &str)]) -> (tempfile::TempDir, Crate) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let krate = Crate::read(dir.path());
    (dir, krate)
}

const LIB: &str = "pub mod leaf;\npub mod gate;\npub mod ui;\n";
const LEAF: &str = "//! The contract. Imports nothing of the crate.\npub struct Op;\n";
const GATE: &str = "//! The gate. Imports `leaf`; must never import `ui`.\nuse crate::leaf::Op;\n";

#[test]
fn a_forbidden_import_added_anywhere_in_a_module_breaks_its_wall() {
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        ("leaf.rs", LEAF),
        ("gate/mod.rs", &format!("{GATE}mod deep;\n")),
        ("gate/deep.rs", "fn f() { let _ = crate::ui::draw(); }\n"),
        (
            "ui.rs",
            "//! The cockpit. Must never import `gate`.\npub fn draw() {}\n",
        ),
    ]);
    assert_eq!(
        krate.broken_walls(),
        ["`gate` must never import `ui`, but gate/deep.rs does"]
    );
}

#[test]
fn a_grouped_use_and_a_leaf_importing_anything_break_walls_too() {
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        (
            "leaf.rs",
            "//! Imports nothing of the crate.\nuse crate::{gate, ui::draw};\n",
        ),
        ("gate.rs", GATE),
        (
            "ui.rs",
            "//! The cockpit. Must never import `gate`.\npub fn draw() {}\n",
        ),
    ]);
    let broken = krate.broken_walls();
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(
        broken[0].contains("`leaf` must never import `gate`"),
        "{broken:?}"
    );
    assert!(
        broken[1].contains("`leaf` must never import `ui`"),
        "{broken:?}"
    );
}

#[test]
fn imports_in_tests_comments_and_strings_are_not_imports() {
    let gate = format!(
        "{GATE}// crate::ui is drawn elsewhere\nconst S: &str = \"crate::ui\";\nconst R: &str = r#\"crate::ui\"#;\n\
         #[cfg(test)]\nmod tests {{ use crate::ui::draw; fn f() {{ let _ = '{{'; }} }}\n\
         #[cfg(test)]\nmod more;\nfn g<'a>(x: &'a str) -> &'a str {{ x }}\n"
    );
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        ("leaf.rs", LEAF),
        ("gate.rs", &gate),
        (
            "ui.rs",
            "//! The cockpit. Must never import `gate`.\npub fn draw() {}\n",
        ),
    ]);
    assert_eq!(krate.broken_walls(), Vec::<String>::new());
    assert!(!krate.modules["gate"].names.contains_key("ui"));
}

#[test]
fn a_module_that_imports_only_some_may_import_no_other() {
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        ("leaf.rs", LEAF),
        (
            "gate.rs",
            "//! Imports only `leaf`.\nuse crate::leaf::Op;\nuse crate::ui::draw;\n",
        ),
        (
            "ui.rs",
            "//! The cockpit. May import every module.\npub fn draw() {}\n",
        ),
    ]);
    assert_eq!(
        krate.broken_walls(),
        ["`gate` must never import `ui`, but gate.rs does"]
    );
}

#[test]
fn a_module_that_declares_no_wall_is_reported() {
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        ("leaf.rs", LEAF),
        ("gate.rs", GATE),
        ("ui.rs", "//! The cockpit.\npub fn draw() {}\n"),
    ]);
    assert_eq!(krate.broken_walls().len(), 1);
    assert!(krate.broken_walls()[0].contains("`ui` declares no wall"));
}

#[test]
fn a_cycle_between_modules_is_found_and_named() {
    let (_dir, krate) = scratch(&[
        ("lib.rs", LIB),
        ("leaf.rs", LEAF),
        (
            "gate.rs",
            "//! Must never import `leaf`.\nuse crate::ui::draw;\n",
        ),
        (
            "ui.rs",
            "//! Must never import `leaf`.\nuse crate::gate;\npub fn draw() {}\n",
        ),
    ]);
    assert_eq!(krate.cycle().as_deref(), Some("gate -> ui -> gate"));
}

#[test]
fn no_module_re_exports_another_modules_items_under_a_second_path() {
    // `pub use crate::a::Item` in `b` lets `Item` be imported through `b`, so the import graph
    // shows `b` where `a` is meant. Each item is imported from its home.
    fn visit(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let code = code_of(&std::fs::read_to_string(&path).unwrap());
                if code.contains("pub use crate::") {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    let mut found = Vec::new();
    visit(&src(), &mut found);
    assert!(found.is_empty(), "re-exports of crate items: {found:?}");
}
