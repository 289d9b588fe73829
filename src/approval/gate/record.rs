//! The audit record of a request: the call, its digest, its verdict, and its arguments up to
//! [`RECORDED_ARGS_BYTES`]. The digest is of the whole frozen text, so it identifies exactly what
//! was judged and approved; the arguments beyond the bound (a 100 MB `write_file`) are said to be
//! left out, with how many bytes, rather than copied into the record three times over (the value,
//! its escaped text, the pending group commit) and kept on disk once per call.

use serde_json::{Value, json};

use super::ToolCall;
use crate::protocol::FrozenCall;
use crate::protocol::Verdict;

/// How much of a call's canonical arguments a request record holds.
pub const RECORDED_ARGS_BYTES: usize = 64 * 1024;

/// The `request` record of `call`, frozen as `frozen` and judged `verdict`.
pub(super) fn request(
    call: &ToolCall,
    frozen: &FrozenCall,
    verdict: &Verdict,
    agent: Option<&crate::protocol::AgentLabel>,
) -> Value {
    let (args, left_out) = bounded(&frozen.canonical, RECORDED_ARGS_BYTES);
    let mut record = json!({
        "call_id": call.id,
        "tool": call.tool,
        "digest": frozen.digest,
        "args": args,
        "ruling": verdict.ruling,
        "risk": verdict.risk,
        "reasons": verdict.reason_lines(),
    });
    if let Some(agent) = agent {
        record["agent"] = json!({"id": agent.id, "parent": agent.parent, "task": agent.task});
    }
    if left_out > 0 {
        record["args_left_out"] = json!({
            "bytes": left_out,
            "of": frozen.canonical.len(),
            "why": format!(
                "only the first {} bytes of the arguments are recorded; the digest is of all of them",
                args.len()
            ),
        });
    }
    record
}

/// The first `limit` bytes of `text` at most, cut at a character boundary, and how many bytes
/// were left out.
fn bounded(text: &str, limit: usize) -> (&str, usize) {
    if text.len() <= limit {
        return (text, 0);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Risk;
    use crate::protocol::Ruling;

    fn verdict() -> Verdict {
        Verdict {
            ruling: Ruling::Ask,
            risk: Risk::Mutating,
            reasons: Vec::new(),
            parts: Vec::new(),
            no_session_grant: None,
        }
    }

    #[test]
    fn a_small_call_is_recorded_whole_with_nothing_said_to_be_left_out() {
        let call = ToolCall {
            id: "c1".into(),
            tool: "write_file".into(),
            args: json!({"path": "a.txt", "content": "hi\n"}),
        };
        let frozen = FrozenCall::freeze(&call.tool, &call.args);
        let record = request(&call, &frozen, &verdict(), None);
        assert_eq!(record["args"], frozen.canonical.as_str());
        assert_eq!(record["digest"], frozen.digest.as_str());
        assert!(record.get("args_left_out").is_none(), "{record}");
    }

    #[test]
    fn a_large_call_keeps_its_digest_and_says_how_many_bytes_of_it_were_left_out() {
        let content = "é".repeat(RECORDED_ARGS_BYTES);
        let call = ToolCall {
            id: "c1".into(),
            tool: "write_file".into(),
            args: json!({"path": "big.txt", "content": content}),
        };
        let frozen = FrozenCall::freeze(&call.tool, &call.args);
        let record = request(&call, &frozen, &verdict(), None);
        let kept = record["args"].as_str().unwrap();
        // Cut at a character: `é` is two bytes, and the text starts with `{"content":"`.
        assert!(kept.len() <= RECORDED_ARGS_BYTES && kept.len() > RECORDED_ARGS_BYTES - 2);
        assert!(frozen.canonical.starts_with(kept));
        assert_eq!(record["digest"], frozen.digest.as_str());
        let left_out = &record["args_left_out"];
        assert_eq!(
            left_out["bytes"].as_u64().unwrap() as usize,
            frozen.canonical.len() - kept.len()
        );
        assert_eq!(
            left_out["of"].as_u64().unwrap() as usize,
            frozen.canonical.len()
        );
        assert!(
            left_out["why"]
                .as_str()
                .unwrap()
                .contains("the digest is of all of them")
        );
    }
}
