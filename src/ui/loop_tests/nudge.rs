//! The nudge when the terminal has no focus: the bytes the loop writes to the terminal.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_while_the_terminal_has_no_focus_writes_one_osc9_naming_only_agent_and_tool()
 {
    let mut cockpit = Cockpit::streaming().await;
    // Focused (as a terminal that reports no focus is assumed to be): nothing is written.
    cockpit.send(AgentEvent::ApprovalRequested {
        request: Box::new(crate::ui::testing::command_request(
            "c1",
            "rm -rf secret-project",
        )),
    });
    cockpit
        .frame_where(|f| f.top == Some(Window::Approval))
        .await;
    assert!(cockpit.nudged.lock().unwrap().is_empty());
    cockpit.keys.send(Ok(Event::FocusLost)).unwrap();
    let mut request = crate::ui::testing::command_request("a1-c1", "cat ~/.ssh/id_rsa");
    request.agent = Some(crate::protocol::AgentLabel {
        id: "a1".into(),
        parent: "main".into(),
        task: "read the secret key".into(),
    });
    cockpit.send(AgentEvent::ApprovalRequested {
        request: Box::new(request),
    });
    let deadline = Instant::now() + WAIT;
    while cockpit.nudged.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no notification was written");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let bytes = String::from_utf8(cockpit.nudged.lock().unwrap().clone()).unwrap();
    assert!(bytes.starts_with("\u{1b}]9;"), "{bytes:?}");
    assert!(bytes.ends_with('\u{7}'), "{bytes:?}");
    assert!(bytes.contains("a1") && bytes.contains("bash"), "{bytes:?}");
    for secret in ["ssh", "id_rsa", "cat", "secret"] {
        assert!(!bytes.contains(secret), "{secret} leaked: {bytes:?}");
    }
    // Focus back: the next request writes nothing.
    cockpit.keys.send(Ok(Event::FocusGained)).unwrap();
    cockpit.send(AgentEvent::ApprovalRequested {
        request: Box::new(crate::ui::testing::command_request("c3", "make")),
    });
    cockpit.send(AgentEvent::Error {
        message: "marker".into(),
    });
    cockpit.frame_where(|f| f.screen.contains("marker")).await;
    assert_eq!(
        String::from_utf8(cockpit.nudged.lock().unwrap().clone()).unwrap(),
        bytes
    );
    cockpit.stop().await;
}
