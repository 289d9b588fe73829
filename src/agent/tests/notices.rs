//! What the driver learned outside the agent (an MCP server that failed) reaches the person in
//! order with the agent's own events, whether a turn is running or not.

use super::*;

#[tokio::test]
async fn a_notice_sent_between_turns_comes_back_as_an_error_event() {
    let mut rig = rig(
        json!({"name": "notice", "steps": [{"say": "ok"}]}),
        Approvals::AllowAll,
    );
    rig.op(Op::Notice {
        message: "MCP server `fs` failed: cannot start `npx`".into(),
    });
    match rig.next().await {
        AgentEvent::Error { message } => assert!(message.contains("`fs` failed"), "{message}"),
        other => panic!("expected the notice, got {other:?}"),
    }
}

#[tokio::test]
async fn a_notice_sent_during_a_turn_is_passed_on_and_the_turn_goes_on() {
    let mut rig = rig(
        json!({"name": "notice", "steps": [
            {"calls": [bash("while [ ! -e go ]; do sleep 0.02; done; echo finished")]},
            {"say": "ok"}
        ]}),
        Approvals::AllowAll,
    );
    rig.submit();
    loop {
        if let AgentEvent::ToolStarted { .. } = rig.next().await {
            break;
        }
    }
    rig.op(Op::Notice {
        message: "MCP server `web` failed: it stopped".into(),
    });
    let mut noticed = false;
    loop {
        match rig.next().await {
            AgentEvent::Error { message } if message.contains("`web` failed") => {
                noticed = true;
                std::fs::write(rig.dir.path().join("ws/go"), "").unwrap();
            }
            AgentEvent::TurnFinished { outcome, .. } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(noticed, "the notice was passed on while the call ran");
}
