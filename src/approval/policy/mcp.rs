//! MCP tools (`SERVER__TOOL`): the verdict from the tool's annotations, then the user's rules
//! for `mcp:SERVER/TOOL` (deny > ask > allow, argument matchers in `arg_rules`), then the mode,
//! then the pins: a tool whose server's definitions changed since the user accepted them asks
//! whatever the rules or grants say, until `airlock mcp accept`.
//!
//! The call's part carries its subject for grants: the tool, the digest of its frozen arguments
//! and its definition's digest (`GrantScope::McpCall`). A session grant covers the same call
//! again and nothing looser; and the gate reads the definition digest from it, so the call runs
//! only against the definition it was judged on.

use serde_json::Value;

use super::{Assessment, Facts, Policy, decide, type_name};
use crate::approval::arg_rules;
use crate::approval::rules::{Action, Rule};
use crate::mcp::McpTool;
use crate::protocol::FrozenCall;
use crate::protocol::GrantScope;
use crate::protocol::Part;
use crate::protocol::PartKind;
use crate::protocol::Reason;
use crate::protocol::ReasonCode;
use crate::protocol::Risk;
use crate::protocol::Ruling;
use crate::protocol::Subject;

/// The assessment of an MCP call, or `None` when `tool` is not an MCP tool's name.
pub(super) fn assess(
    policy: &Policy,
    tool: &str,
    args: &Value,
    mode: super::Mode,
) -> Option<Assessment> {
    let catalog = policy.mcp.as_ref()?;
    if !tool.contains("__") {
        return None;
    }
    let Some(found) = catalog.lookup(tool) else {
        let message = unlisted(catalog, tool);
        return Some(whole(tool, Ruling::Deny, ReasonCode::UnknownTool, message));
    };
    if !args.is_object() {
        let message = format!(
            "the arguments of `{tool}` must be a JSON object, got {}",
            type_name(args)
        );
        return Some(whole(
            tool,
            Ruling::Deny,
            ReasonCode::InvalidArguments,
            message,
        ));
    }
    Some(judge(policy, tool, &found, args, mode))
}

/// Why `tool` (`SERVER__TOOL`) is not offered, from where its server stands.
fn unlisted(catalog: &crate::mcp::McpCatalog, tool: &str) -> String {
    use crate::mcp::ServerState;
    let (server, name) = tool.split_once("__").unwrap_or((tool, ""));
    match catalog.state(server) {
        None => format!(
            "`{tool}` is not an MCP tool airlock knows: no MCP server `{server}` is configured (`airlock mcp list` shows the ones that are)"
        ),
        Some(ServerState::Starting) => format!(
            "MCP server `{server}` has not listed its tools yet (still starting after its start-up limit), so `{tool}` cannot be judged; nothing ran, try again in a moment"
        ),
        Some(ServerState::Ready) => format!("MCP server `{server}` does not list a tool `{name}`"),
        Some(ServerState::Failed(why)) => {
            format!("MCP server `{server}` is not available, so `{tool}` cannot run: {why}")
        }
        Some(ServerState::NotTrusted) => format!(
            "MCP server `{server}` is in a project that is not trusted, so it was never started (run `airlock trust` in that project)"
        ),
    }
}

fn whole(tool: &str, ruling: Ruling, code: ReasonCode, message: String) -> Assessment {
    let part = Part {
        kind: PartKind::Call,
        label: tool.to_string(),
        span: None,
        ruling,
        risk: Risk::Dangerous,
        subject: None,
        scope: None,
    };
    Assessment {
        facts: Facts::None,
        verdict: decide(
            vec![part],
            vec![Reason::policy(ruling, code, Some(0), message)],
        ),
    }
}

fn judge(
    policy: &Policy,
    tool: &str,
    found: &McpTool,
    args: &Value,
    mode: super::Mode,
) -> Assessment {
    let risk = found.risk();
    let name = found.rule_name();
    let ruling = if risk == Risk::Safe {
        Ruling::Allow
    } else {
        Ruling::Ask
    };
    // "Allow for the session" covers this call again, with these arguments, and nothing else.
    let arguments = FrozenCall::freeze(tool, args).digest;
    let mut parts = vec![Part {
        kind: PartKind::Call,
        label: name.clone(),
        span: None,
        ruling,
        risk,
        subject: Some(Subject::McpCall {
            tool: tool.to_string(),
            arguments: arguments.clone(),
            definition: found.digest.clone(),
        }),
        scope: Some(GrantScope::McpCall {
            tool: tool.to_string(),
            arguments,
            definition: found.digest.clone(),
        }),
    }];
    let mut reasons = vec![Reason::policy(
        ruling,
        ReasonCode::DeclaredRisk,
        Some(0),
        format!(
            "`{name}` is {}: {}",
            risk.as_str(),
            found.definition.risk_reason()
        ),
    )];
    apply_rules(policy, found, args, &mut parts[0], &mut reasons);
    policy.apply_mode(tool, mode, &mut parts, &mut reasons);
    if let Some(why) = &found.changed {
        let part = &mut parts[0];
        part.ruling = part.ruling.max(Ruling::Ask);
        reasons.push(Reason::policy(
            Ruling::Ask,
            ReasonCode::ToolChanged,
            Some(0),
            why.clone(),
        ));
    }
    let mut verdict = decide(parts, reasons);
    if found.changed.is_some() && verdict.ruling == Ruling::Ask {
        verdict.no_session_grant = Some(format!(
            "the tools of MCP server `{}` changed since you accepted them: each call is approved on its own until `airlock mcp accept {}`",
            found.server, found.server
        ));
    }
    Assessment {
        facts: Facts::None,
        verdict,
    }
}

fn apply_rules(
    policy: &Policy,
    found: &McpTool,
    args: &Value,
    part: &mut Part,
    reasons: &mut Vec<Reason>,
) {
    let applies = |rule: &&Rule| {
        let named = arg_rules::names_tool(&rule.tool, &found.server, &found.definition.name)
            || (rule.tool == "*" && rule.pattern.is_none());
        named && arg_rules::matches(rule, args)
    };
    let matching: Vec<&Rule> = policy.rules.rules.iter().filter(applies).collect();
    let asked = super::deny_and_ask(&matching, 0, part, reasons);
    if part.ruling == Ruling::Ask
        && !asked
        && let Some(rule) = matching.iter().find(|r| r.action == Action::Allow)
    {
        part.ruling = Ruling::Allow;
        for r in reasons.iter_mut().filter(|r| r.ruling == Ruling::Ask) {
            r.ruling = Ruling::Allow;
            r.message = format!("{} (allowed by the rule `{}`)", r.message, rule.name);
        }
        reasons.push(super::rule_reason(
            Ruling::Allow,
            ReasonCode::RuleAllow,
            rule,
            0,
        ));
    }
}

#[cfg(test)]
#[path = "tests/mcp.rs"]
mod tests;
