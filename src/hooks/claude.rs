//! Claude Code's hook protocol, so a script written for it runs unchanged: its tool names and
//! argument names (`Bash` ↔ `bash`, `Write` ↔ `write_file` with `file_path` ↔ `path`, …,
//! `mcp__server__tool` ↔ `server__tool`), its input fields, and its outputs (exit code 2 blocks
//! with stderr as the reason; JSON with `hookSpecificOutput.permissionDecision`, the older
//! `decision: approve / block`, or PermissionRequest's `decision.behavior`).

use serde_json::{Map, Value, json};

use crate::protocol::{HookEvent, HookInput, HookSay, claude_tool_name as tool_name};

/// A tool's arguments under the names a Claude Code script reads (paths made absolute, as
/// Claude Code gives them; `path`, where the gate resolved it, is where the call lands);
/// anything else keeps its name. An argument already under a Claude Code name that airlock's
/// tool does not read (`new_string` beside `new`) is left out: the hook sees what runs.
pub fn tool_input(tool: &str, args: &Value, cwd: &str, path: Option<&str>) -> Value {
    let Some(fields) = args.as_object() else {
        return args.clone();
    };
    let renames: &[(&str, &str)] = match tool {
        "write_file" | "read_file" => &[("path", "file_path")],
        "edit_file" => &[
            ("path", "file_path"),
            ("old", "old_string"),
            ("new", "new_string"),
        ],
        _ => &[],
    };
    let mut out = Map::new();
    for (key, value) in fields {
        if renames.iter().any(|(_, to)| to == key) {
            continue;
        }
        let renamed = renames
            .iter()
            .find(|(from, _)| from == key)
            .map_or(key.as_str(), |(_, to)| to);
        let value = match (renamed, value.as_str(), path) {
            ("file_path", Some(_), Some(resolved)) => Value::String(resolved.to_string()),
            ("file_path", Some(spelled), None) if !spelled.starts_with('/') => {
                Value::String(format!("{}/{spelled}", cwd.trim_end_matches('/')))
            }
            _ => value.clone(),
        };
        out.insert(renamed.to_string(), value);
    }
    Value::Object(out)
}

/// The JSON a hook reads on its standard input.
pub fn input(event: HookEvent, input: &HookInput) -> Value {
    let mut value = json!({
        "session_id": input.session_id,
        "transcript_path": "",
        "cwd": input.cwd,
        "hook_event_name": event.as_str(),
    });
    if let Some(tool) = &input.tool {
        value["tool_name"] = Value::String(tool_name(tool));
        let args = input.args.clone().unwrap_or(Value::Null);
        value["tool_input"] = tool_input(tool, &args, &input.cwd, input.path.as_deref());
        // airlock's own names too, for hooks written for airlock.
        value["airlock"] = json!({"tool": tool, "args": args, "call_id": input.call_id});
    }
    if let Some(response) = &input.response {
        value["tool_response"] = response.clone();
    }
    if let Some(message) = &input.message {
        value["message"] = Value::String(message.clone());
    }
    match event {
        HookEvent::SessionStart => value["source"] = Value::String("startup".into()),
        HookEvent::Stop => value["stop_hook_active"] = Value::Bool(false),
        _ => {}
    }
    value
}

/// What a hook's run said: its decision and reason, a note for the model, or why it has no
/// say (`Err`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Said {
    pub say: Option<HookSay>,
    pub reason: Option<String>,
    pub note: Option<String>,
}

/// Reads a finished hook: its exit code, standard output and standard error.
pub fn output(event: HookEvent, code: i32, stdout: &str, stderr: &str) -> Result<Said, String> {
    let stderr = stderr.trim();
    match code {
        0 => {}
        // Blocks, with stderr as the reason (for the model, after a call).
        2 => {
            let reason = (!stderr.is_empty()).then(|| stderr.to_string());
            return Ok(match event {
                HookEvent::PostToolUse => Said {
                    note: reason,
                    ..Said::default()
                },
                e if e.decides() => Said {
                    say: Some(HookSay::Deny),
                    reason: Some(reason.unwrap_or_else(|| "blocked (exit code 2)".into())),
                    note: None,
                },
                _ => Said::default(),
            });
        }
        code => {
            let why = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", first_line(stderr))
            };
            return Err(format!("it failed with exit code {code}{why}"));
        }
    }
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(Said::default());
    }
    let value: Value = match strict_json(text) {
        Ok(value @ Value::Object(_)) => value,
        _ if !event.decides() => return Ok(Said::default()),
        Err(why) if why.contains("appears twice") => {
            return Err(format!("its answer is ambiguous: {why}"));
        }
        _ => {
            return Err(format!(
                "it printed something that is not its JSON answer: {}",
                first_line(text)
            ));
        }
    };
    let specific = &value["hookSpecificOutput"];
    let text_of = |v: &Value| v.as_str().map(str::to_string).filter(|s| !s.is_empty());
    let mut said = Said {
        note: text_of(&specific["additionalContext"]),
        ..Said::default()
    };
    if event == HookEvent::PostToolUse {
        if value["decision"] == "block" {
            said.note = text_of(&value["reason"]).or(said.note);
        }
        return Ok(said);
    }
    if !event.decides() {
        return Ok(said);
    }
    // Every form an answer may take (the newer one, PermissionRequest's, the older one, and
    // `continue: false`, which stops everything): when they disagree, the strictest stands.
    let mut answers: Vec<(HookSay, Option<String>)> = Vec::new();
    let forms = [
        (
            &specific["permissionDecision"],
            &specific["permissionDecisionReason"],
        ),
        (
            &specific["decision"]["behavior"],
            &specific["decision"]["message"],
        ),
        (&value["decision"], &value["reason"]),
    ];
    for (decision, why) in forms {
        let Some(decision) = decision.as_str() else {
            continue;
        };
        let say = match decision {
            "allow" | "approve" => HookSay::Allow,
            "deny" | "block" => HookSay::Deny,
            "ask" => HookSay::Ask,
            other => {
                return Err(format!(
                    "it answered `{other}`, which is not allow, deny or ask"
                ));
            }
        };
        answers.push((say, text_of(why)));
    }
    if value["continue"] == false {
        answers.push((HookSay::Deny, text_of(&value["stopReason"])));
    }
    let strictest = |say: HookSay| answers.iter().find(|(s, _)| *s == say);
    let (say, reason) = match strictest(HookSay::Deny)
        .or_else(|| strictest(HookSay::Ask))
        .or_else(|| strictest(HookSay::Allow))
    {
        Some((say, reason)) => (Some(*say), reason.clone()),
        None => (None, None),
    };
    said.say = say;
    said.reason = reason;
    Ok(said)
}

/// `text` as JSON, refusing an object that names a key twice (a parser keeps one of the two
/// and another may keep the other: such an answer says two things).
fn strict_json(text: &str) -> Result<Value, String> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    let Strict(value) = Strict::deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` appears twice"
                )));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    crate::visible::visible_line(&cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn airlock_tools_carry_the_names_claude_code_scripts_expect() {
        assert_eq!(tool_name("bash"), "Bash");
        assert_eq!(tool_name("write_file"), "Write");
        assert_eq!(tool_name("edit_file"), "Edit");
        assert_eq!(tool_name("read_file"), "Read");
        assert_eq!(tool_name("git__status"), "mcp__git__status");
        let edit = tool_input(
            "edit_file",
            &json!({"path": "src/a.rs", "old": "x", "new": "y"}),
            "/ws",
            None,
        );
        assert_eq!(
            edit,
            json!({"file_path": "/ws/src/a.rs", "old_string": "x", "new_string": "y"})
        );
        // A decoy under Claude Code's name is not what runs; the resolved path is.
        let decoy = tool_input(
            "edit_file",
            &json!({"path": "docs/../k", "old": "x", "new": "EVIL", "new_string": "fine",
                    "file_path": "/elsewhere"}),
            "/ws",
            Some("/ws/k"),
        );
        assert_eq!(
            decoy,
            json!({"file_path": "/ws/k", "old_string": "x", "new_string": "EVIL"})
        );
    }

    #[test]
    fn each_way_a_claude_code_hook_answers_is_read() {
        let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no pushes to main"}}"#;
        let said = output(HookEvent::PreToolUse, 0, deny, "").unwrap();
        assert_eq!(said.say, Some(HookSay::Deny));
        assert_eq!(said.reason.as_deref(), Some("no pushes to main"));
        let old = r#"{"decision":"approve","reason":"fine"}"#;
        assert_eq!(
            output(HookEvent::PreToolUse, 0, old, "").unwrap().say,
            Some(HookSay::Allow)
        );
        let request = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not now"}}}"#;
        let said = output(HookEvent::PermissionRequest, 0, request, "").unwrap();
        assert_eq!(said.say, Some(HookSay::Deny));
        let blocked = output(HookEvent::PreToolUse, 2, "", "Blocked: push to main\n").unwrap();
        assert_eq!(blocked.say, Some(HookSay::Deny));
        assert_eq!(blocked.reason.as_deref(), Some("Blocked: push to main"));
        assert_eq!(
            output(HookEvent::PreToolUse, 0, "", "").unwrap(),
            Said::default()
        );
    }

    #[test]
    fn an_answer_that_says_two_things_is_read_as_the_strictest_or_not_at_all() {
        let said = |text: &str| output(HookEvent::PreToolUse, 0, text, "");
        let stop = r#"{"continue":false,"stopReason":"stop","hookSpecificOutput":{"permissionDecision":"allow"}}"#;
        assert_eq!(said(stop).unwrap().say, Some(HookSay::Deny));
        let block = r#"{"decision":"block","reason":"no","hookSpecificOutput":{"permissionDecision":"allow"}}"#;
        assert_eq!(said(block).unwrap().say, Some(HookSay::Deny));
        assert_eq!(said(block).unwrap().reason.as_deref(), Some("no"));
        let ask = r#"{"decision":"approve","hookSpecificOutput":{"permissionDecision":"ask"}}"#;
        assert_eq!(said(ask).unwrap().say, Some(HookSay::Ask));
        let twice =
            r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecision":"allow"}}"#;
        assert!(said(twice).unwrap_err().contains("appears twice"));
        let two = "{\"decision\":\"block\"}\n{\"decision\":\"approve\"}";
        assert!(said(two).is_err(), "two answers are none");
    }

    #[test]
    fn a_crash_or_garbage_is_no_answer() {
        assert!(output(HookEvent::PreToolUse, 1, "", "Traceback").is_err());
        assert!(output(HookEvent::PreToolUse, 0, "sure, go ahead", "").is_err());
        assert!(output(HookEvent::PreToolUse, 0, r#"{"decision":"maybe"}"#, "").is_err());
        // After a call, text on stdout is only text.
        assert_eq!(
            output(HookEvent::PostToolUse, 0, "lint ok", "").unwrap(),
            Said::default()
        );
    }

    #[test]
    fn after_a_call_a_block_or_added_context_is_a_note_for_the_model() {
        let block = r#"{"decision":"block","reason":"lint: unused import in a.py"}"#;
        assert_eq!(
            output(HookEvent::PostToolUse, 0, block, "")
                .unwrap()
                .note
                .as_deref(),
            Some("lint: unused import in a.py")
        );
        assert_eq!(
            output(HookEvent::PostToolUse, 2, "", "3 tests fail")
                .unwrap()
                .note
                .as_deref(),
            Some("3 tests fail")
        );
    }
}
