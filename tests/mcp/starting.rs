//! Calls a model makes while their MCP server is still starting (a session's first step): they
//! wait for the server, bounded by its start-up limit, and the batch's forecast ("how many
//! questions are coming") judges them on its listed tools, not as unknown tools.

use super::*;

impl World {
    /// Only the rug server, slow to start, with these extra config lines.
    fn slow_rug(&self, delay_secs: f64, extra: &str) {
        let config = format!(
            "[mcp_servers.rug]\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ RUG_DIR = {:?}, RUG_START_DELAY = \"{delay_secs}\" }}\n{extra}",
            rug_server(),
            self.rug_dir(),
        );
        std::fs::write(self.path("home/.config/airlock/config.toml"), config).unwrap();
    }
}

#[test]
fn calls_made_while_their_server_starts_wait_for_it_and_are_forecast_as_what_they_are() {
    let w = World::new();
    w.slow_rug(1.5, "");
    let events = w.exec(
        json!([
            {"calls": [
                {"tool": "rug__echo", "args": {"message": "late"}},
                {"tool": "rug__unannotated"},
            ]},
            {"expect": ["ok", "denied"]},
        ]),
        &[],
    );
    let queued = events
        .iter()
        .find(|e| e["event"] == "batch_queued")
        .expect("a batch_queued event");
    let forecast: Vec<(&str, bool)> = queued["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["call_id"].as_str().unwrap(),
                c["needs_decision"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(forecast, [("c1", false), ("c2", true)]);
    assert_eq!(output(&events, "c1"), "echo: late");
    assert_eq!(
        event(&events, "tool_denied", "c2").unwrap()["source"],
        "headless"
    );
}

#[test]
fn a_call_whose_server_does_not_start_within_its_limit_is_denied_saying_why() {
    let w = World::new();
    w.slow_rug(5.0, "startup_timeout_secs = 1\n");
    let events = w.exec(
        json!([
            {"calls": [{"tool": "rug__echo", "args": {"message": "never"}}]},
            {"expect": ["denied"]},
        ]),
        &[],
    );
    let denied = event(&events, "tool_denied", "c1").expect("denied");
    let message = denied["message"].as_str().unwrap();
    assert!(
        message.contains("MCP server `rug` is not available")
            && message.contains("did not finish the MCP handshake within 1s"),
        "{message}"
    );
}
