//! The built-in tools, one line each, and what is looked up through them: the gate's catalog,
//! a call's title. Adding a tool is its file (implementing [`Tool`]) and its line in [`BUILTIN`].
//! MCP tools are not listed here: their servers list them at run time (`crate::mcp`), and the
//! registry reaches them through the hub.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::tool::{ArgText, Tool, descriptor};
use super::{agent, bash, files};
use crate::facts::catalog::ToolCatalog;

/// Every built-in tool.
pub static BUILTIN: &[&dyn Tool] = &[
    &files::read_file::ReadFile,
    &files::list_dir::ListDir,
    &files::search::Search,
    &files::write_file::WriteFile,
    &files::edit_file::EditFile,
    &bash::tool::Bash,
    &agent::SpawnAgent,
];

/// The built-in tool of this name.
pub fn builtin(name: &str) -> Option<&'static dyn Tool> {
    BUILTIN.iter().copied().find(|tool| tool.name() == name)
}

/// The built-in catalog lives here, not in `approval`, because it is made from the tools
/// themselves (and `approval` never imports `tools`).
impl ToolCatalog {
    /// The built-in tools as the gate knows them: name, schema, declared risk, path arguments.
    pub fn builtin() -> Self {
        let mut catalog = Self::empty();
        for tool in BUILTIN {
            catalog.register(descriptor(*tool));
        }
        catalog
    }
}

/// A one-line title for a call, for the cockpit. A tool airlock does not know (an MCP tool) is
/// titled by its name.
pub fn title(tool: &str, args: &Value) -> String {
    let read = |key: &str| args.get(key).and_then(Value::as_str);
    match builtin(tool) {
        Some(found) => found.title(&ArgText::new(&read)),
        None => tool.to_string(),
    }
}

/// The title of a refused call: a refusal may be about any part of it, so a tool may show more
/// than its running title does (a command whole, not its first line).
pub fn refused_title(tool: &str, args: &Value) -> String {
    let read = |key: &str| args.get(key).and_then(Value::as_str);
    match builtin(tool) {
        Some(found) => found.refused_title(&ArgText::new(&read)),
        None => tool.to_string(),
    }
}

/// The title of a frozen call, from its canonical text, reading only the fields its title
/// shows: a multi-megabyte `content` is skipped over, not copied into a tree.
pub fn title_of_canonical(tool: &str, canonical: &str) -> String {
    let Some(found) = builtin(tool) else {
        return tool.to_string();
    };
    let mut parser = serde_json::Deserializer::from_str(canonical);
    let fields = TitleFields(found.title_fields())
        .deserialize(&mut parser)
        .and_then(|fields| parser.end().map(|()| fields));
    let Ok(fields) = fields else {
        // A field the title reads is not a string: read the whole value, as `title` does.
        let args: Value = serde_json::from_str(canonical).unwrap_or_default();
        return title(tool, &args);
    };
    // The last of a repeated key wins, as it does in a parsed value.
    let read = |key: &str| {
        fields
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_ref())
    };
    found.title(&ArgText::new(&read))
}

/// Reads the string values of these keys from a JSON object, skipping every other value.
struct TitleFields(&'static [&'static str]);

type Found<'de> = Vec<(&'static str, Cow<'de, str>)>;

impl<'de> DeserializeSeed<'de> for TitleFields {
    type Value = Found<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Found<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TitleFields {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a call's arguments, with string values where a title reads them")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found<'de>, A::Error> {
        let mut found = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match self.0.iter().find(|wanted| **wanted == key) {
                Some(wanted) => {
                    let Text(value) = map.next_value()?;
                    found.push((*wanted, value));
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// A JSON string, borrowed from the text when it holds no escape.
struct Text<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E>(self, text: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

#[cfg(test)]
mod tests;
