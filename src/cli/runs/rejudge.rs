//! Judging a parked call again at resume. A human approved the call as it stood when it parked;
//! by the time it resumes, the filesystem may have changed under it (a directory swapped for a
//! symlink that leads out of the workspace), or the rules and mode may have. So the frozen call is
//! assessed again against the world as it is now, and refused if the verdict got stricter.
//!
//! "Stricter" is: a higher ruling (allow < ask < deny), or any ask or deny reason (by its code)
//! that the parked verdict did not have at least as strongly: the human never saw it. A verdict
//! that got milder runs: what was approved is still what runs.
//!
//! An MCP call is refused if its tool's definition is not the one it was judged on: its server
//! is no longer configured or trusted, no longer lists it, or lists it otherwise (as last listed,
//! from the pins: nothing is started to judge it). The run then starts its servers, and the call
//! runs only if the live listing still has that definition (`Approved::mcp_definition`).
//!
//! A file call is also refused if its path lands somewhere else now than where it was judged
//! (`moved`), even with the same verdict: a `sub` swapped for a link to another workspace
//! directory is judged the same, but it is not the file whose diff was approved.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::approval::gate::shown_path;
use crate::facts::paths::PathContext;
use crate::protocol::Verdict;

/// A verdict as stored in the signed checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedVerdict {
    /// `allow`, `ask` or `deny`.
    pub ruling: String,
    pub reasons: Vec<ParkedReason>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedReason {
    pub ruling: String,
    /// The reason's stable name (`writes_outside_workspace`, ...).
    pub code: String,
    pub message: String,
}

/// The name serde gives a value (`"ask"`, `"writes_workspace"`).
fn name_of(value: impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

/// allow 0, ask 1, deny 2; anything else is taken as the strictest.
fn rank(ruling: &str) -> u8 {
    match ruling {
        "allow" => 0,
        "ask" => 1,
        _ => 2,
    }
}

impl ParkedVerdict {
    pub fn of(verdict: &Verdict) -> ParkedVerdict {
        ParkedVerdict {
            ruling: name_of(verdict.ruling),
            reasons: verdict
                .reasons
                .iter()
                .map(|r| ParkedReason {
                    ruling: name_of(r.ruling),
                    code: name_of(r.code),
                    message: r.message.clone(),
                })
                .collect(),
        }
    }
}

/// Why `now` is stricter than `parked`, if it is: one sentence with the reasons that are new.
pub fn stricter(parked: &ParkedVerdict, now: &ParkedVerdict) -> Option<String> {
    let new: Vec<&ParkedReason> = now
        .reasons
        .iter()
        .filter(|r| rank(&r.ruling) >= 1)
        .filter(|r| {
            !parked
                .reasons
                .iter()
                .any(|p| p.code == r.code && rank(&p.ruling) >= rank(&r.ruling))
        })
        .collect();
    let listed = |reasons: &[&ParkedReason]| {
        reasons
            .iter()
            .map(|r| format!("{}: {}", r.ruling, r.message))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if rank(&now.ruling) > rank(&parked.ruling) {
        let deciding: Vec<&ParkedReason> = now
            .reasons
            .iter()
            .filter(|r| r.ruling == now.ruling)
            .collect();
        return Some(format!(
            "it would now be {} ({}), where it was {} when it was approved",
            now.ruling,
            listed(&deciding),
            parked.ruling
        ));
    }
    (!new.is_empty()).then(|| {
        format!(
            "it now has reasons it did not have when it was approved ({})",
            listed(&new)
        )
    })
}

/// Why a parked MCP call may not run against its tool as listed now, if it may not. `catalog`:
/// the configured servers' tools from their pins (`None`: no server is configured); `parked`:
/// the digest of the definition it was judged on (`None`: not an MCP call when it parked).
pub fn mcp_definition_gone(
    catalog: Option<&crate::mcp::McpCatalog>,
    tool: &str,
    parked: Option<&str>,
) -> Option<String> {
    let Some(parked) = parked else {
        return catalog.and_then(|c| c.lookup(tool)).map(|_| {
            "the checkpoint does not say which definition of the MCP tool it was approved for (parked by an older airlock?)".to_string()
        });
    };
    let server = tool.split_once("__").map_or(tool, |(server, _)| server);
    let short = |d: &str| d.get(..12).unwrap_or(d).to_string();
    let Some(catalog) = catalog else {
        return Some(format!("MCP server `{server}` is no longer configured"));
    };
    match catalog.state(server) {
        None => return Some(format!("MCP server `{server}` is no longer configured")),
        Some(crate::mcp::ServerState::NotTrusted) => {
            return Some(format!(
                "MCP server `{server}` is in a project that is no longer trusted"
            ));
        }
        Some(crate::mcp::ServerState::Failed(why)) => {
            return Some(format!(
                "the tools of MCP server `{server}` are not known here ({why})"
            ));
        }
        Some(_) => {}
    }
    match catalog.lookup(tool) {
        None => Some(format!("MCP server `{server}` no longer lists `{tool}`")),
        Some(now) if now.digest != parked => Some(format!(
            "the definition of `{tool}` changed since it was approved (sha256:{} then, sha256:{} as last listed): run it again and approve the new request",
            short(parked),
            short(&now.digest)
        )),
        Some(_) => None,
    }
}

/// Why a file call's path is not where it was judged when it parked, if it is not. `parked` and
/// `now` are the physical paths judged then and now (`None`: not a file call).
pub fn moved(ctx: &PathContext, parked: Option<&Path>, now: Option<&Path>) -> Option<String> {
    match (parked, now) {
        (None, None) => None,
        (Some(parked), Some(now)) if parked == now => None,
        (Some(parked), Some(now)) => Some(format!(
            "its path now leads to {}, not to {} where it led when it was approved (a directory or file on the way was replaced, perhaps by a symlink)",
            shown_path(ctx, now),
            shown_path(ctx, parked)
        )),
        (None, Some(_)) => Some(
            "the checkpoint does not say which path it was approved for (parked by an older airlock?)"
                .into(),
        ),
        (Some(_), None) => Some("it no longer names a path to judge".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(ruling: &str, reasons: &[(&str, &str)]) -> ParkedVerdict {
        ParkedVerdict {
            ruling: ruling.into(),
            reasons: reasons
                .iter()
                .map(|(r, c)| ParkedReason {
                    ruling: (*r).into(),
                    code: (*c).into(),
                    message: format!("{c} here"),
                })
                .collect(),
        }
    }

    #[test]
    fn ask_turned_deny_is_stricter_and_says_the_deny_reason() {
        let parked = verdict("ask", &[("ask", "writes_workspace")]);
        let now = verdict("deny", &[("deny", "writes_outside_workspace")]);
        let why = stricter(&parked, &now).unwrap();
        assert!(
            why.contains("deny (deny: writes_outside_workspace here)"),
            "{why}"
        );
        assert!(why.contains("where it was ask"), "{why}");
    }

    #[test]
    fn the_same_verdict_or_a_milder_one_is_not_stricter() {
        let parked = verdict("ask", &[("ask", "writes_workspace"), ("ask", "runs_code")]);
        assert_eq!(stricter(&parked, &parked), None);
        assert_eq!(
            stricter(&parked, &verdict("ask", &[("ask", "runs_code")])),
            None
        );
        assert_eq!(
            stricter(&parked, &verdict("allow", &[("allow", "rule_allow")])),
            None
        );
    }

    #[test]
    fn a_new_ask_reason_the_human_never_saw_is_stricter_at_the_same_ruling() {
        let parked = verdict("ask", &[("ask", "writes_workspace")]);
        let now = verdict(
            "ask",
            &[
                ("ask", "writes_workspace"),
                ("ask", "writes_sensitive_file"),
            ],
        );
        let why = stricter(&parked, &now).unwrap();
        assert!(why.contains("writes_sensitive_file here"), "{why}");
        assert!(!why.contains("writes_workspace here"), "{why}");
    }

    #[test]
    fn a_reason_that_went_from_ask_to_deny_is_stricter_even_if_the_code_is_the_same() {
        let parked = verdict(
            "deny",
            &[("deny", "credential_material"), ("ask", "network")],
        );
        let now = verdict(
            "deny",
            &[("deny", "credential_material"), ("deny", "network")],
        );
        assert!(
            stricter(&parked, &now)
                .unwrap()
                .contains("deny: network here")
        );
    }

    #[test]
    fn a_file_call_whose_path_moved_or_was_never_stored_is_refused() {
        let ctx = PathContext {
            workspace: "/ws".into(),
            home: "/home/me".into(),
            temp_dirs: vec![],
            state_dir: "/state".into(),
            protected_files: vec![],
            program_dirs: vec![],
        };
        let (sub, other) = (Path::new("/ws/sub/x"), Path::new("/ws/other/x"));
        assert_eq!(moved(&ctx, Some(sub), Some(sub)), None);
        assert_eq!(moved(&ctx, None, None), None, "not a file call");
        let why = moved(&ctx, Some(sub), Some(other)).unwrap();
        assert!(
            why.starts_with("its path now leads to other/x, not to sub/x"),
            "{why}"
        );
        assert!(
            moved(&ctx, None, Some(sub))
                .unwrap()
                .contains("does not say")
        );
        assert!(moved(&ctx, Some(sub), None).is_some());
    }

    #[test]
    fn an_unknown_ruling_counts_as_the_strictest() {
        let parked = verdict("ask", &[]);
        assert!(stricter(&parked, &verdict("weird", &[])).is_some());
    }

    #[test]
    fn a_parked_mcp_call_runs_only_against_the_definition_it_was_approved_for() {
        use crate::mcp::definition::ToolDefinition;
        use crate::mcp::{McpCatalog, McpTool, ServerState};
        let definition = ToolDefinition::from_listing(&serde_json::json!({
            "name": "echo", "description": "Echoes.", "inputSchema": {"type": "object"},
        }))
        .unwrap();
        let echo = McpTool {
            server: "rug".into(),
            exposed: "rug__echo".into(),
            digest: definition.digest(),
            definition,
            changed: None,
            file_tool: None,
            confinement: None,
        };
        let digest = echo.digest.clone();
        let catalog = McpCatalog::new();
        catalog.set_tools("rug", vec![echo], Vec::new());
        catalog.set_state("rug", ServerState::Ready);
        catalog.set_state("proj", ServerState::NotTrusted);
        let gone =
            |tool: &str, parked: Option<&str>| mcp_definition_gone(Some(&catalog), tool, parked);
        assert_eq!(gone("rug__echo", Some(&digest)), None);
        assert!(
            gone("rug__echo", Some("0123456789abcdef"))
                .unwrap()
                .contains("changed since it was approved")
        );
        assert!(
            gone("rug__other", Some(&digest))
                .unwrap()
                .contains("no longer lists `rug__other`")
        );
        assert!(
            gone("proj__x", Some(&digest))
                .unwrap()
                .contains("no longer trusted")
        );
        assert!(
            gone("web__x", Some(&digest))
                .unwrap()
                .contains("`web` is no longer configured")
        );
        assert!(gone("rug__echo", None).unwrap().contains("older airlock"));
        assert_eq!(gone("bash", None), None);
        assert!(
            mcp_definition_gone(None, "rug__echo", Some(&digest))
                .unwrap()
                .contains("no longer configured")
        );
    }
}
