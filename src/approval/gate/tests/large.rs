//! A large call (a 2 MB `write_file`) through the gate: its question takes the one frozen text,
//! and what needs it after the answer (a parked request, an approval) gets it whole; its audit
//! record holds the digest and only the first part of the arguments.

use super::*;
use crate::approval::gate::record::RECORDED_ARGS_BYTES;

fn big_write(id: &str) -> ToolCall {
    let content: String = (0..40_000)
        .map(|i| format!("line {i:06} of a large file\n"))
        .collect();
    ToolCall {
        id: id.into(),
        tool: "write_file".into(),
        args: json!({"path": "big.txt", "content": content}),
    }
}

#[tokio::test]
async fn a_large_write_parked_after_its_question_carries_its_whole_frozen_call() {
    let rig = rig(Arc::new(crate::approval::approver::ParkAll));
    let call = big_write("c1");
    match rig.gate.check(&call, &CancellationToken::new()).await {
        GateOutcome::Parked(request) => {
            assert_eq!(request.frozen, FrozenCall::freeze(&call.tool, &call.args));
            assert_eq!(request.frozen.verified_args().unwrap(), call.args);
        }
        other => panic!("expected parked, got {other:?}"),
    }
}

#[tokio::test]
async fn a_large_write_approved_after_its_question_runs_the_frozen_call_that_was_asked_about() {
    let approver = Scripted::answering(vec![Ok(Decision::AllowOnce)]);
    let rig = rig(approver.clone());
    let call = big_write("c1");
    let approved = approval(rig.gate.check(&call, &CancellationToken::new()).await);
    let asked = approver.seen.lock().unwrap()[0].frozen.clone();
    assert_eq!(*approved.frozen(), asked);
    assert_eq!(approved.args().unwrap(), call.args);
}

#[tokio::test]
async fn a_large_request_is_audited_with_its_digest_and_the_bytes_left_out_and_the_chain_verifies()
{
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(AuditLog::open(dir.path(), "s1").unwrap());
    let approver = Scripted::answering(vec![Ok(Decision::Deny { reason: None })]);
    let rig = rig_with(approver, None, None, Some(log.clone()));
    let call = big_write("c1");
    denial(rig.gate.check(&call, &CancellationToken::new()).await);
    rig.gate.flush_audit().unwrap();
    assert_eq!(audit::verify(log.path()).unwrap().records, 2);
    let records = audit::read_records(log.path()).unwrap();
    let body = &records[0]["body"];
    let frozen = FrozenCall::freeze(&call.tool, &call.args);
    assert_eq!(body["digest"], frozen.digest.as_str());
    let kept = body["args"].as_str().unwrap();
    assert_eq!(kept.len(), RECORDED_ARGS_BYTES);
    assert!(frozen.canonical.starts_with(kept));
    assert_eq!(
        body["args_left_out"]["bytes"].as_u64().unwrap() as usize,
        frozen.canonical.len() - RECORDED_ARGS_BYTES
    );
    // The whole record stays small: the content is not in the log.
    let on_disk = std::fs::metadata(log.path()).unwrap().len() as usize;
    assert!(on_disk < 2 * RECORDED_ARGS_BYTES, "{on_disk} bytes");
}

#[test]
fn only_a_float_keeps_the_gate_from_judging_the_value_it_froze() {
    let exact = json!({"s": "a\"\n\u{1}é", "n": [1, -2, u64::MAX, i64::MIN], "b": true, "z": null});
    assert!(comes_back_exactly(&exact));
    assert_eq!(
        FrozenCall::freeze("t", &exact).verified_args().unwrap(),
        exact
    );
    assert!(!comes_back_exactly(&json!({"timeout": [1, {"x": 0.1}]})));
}
