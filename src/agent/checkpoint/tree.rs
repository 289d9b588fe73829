//! A parked tree of agents. When nobody is there to answer (`airlock exec --approvals park`), a
//! sub-agent whose call needs a person parks, and its caller parks with it: the sub-agent's
//! checkpoint is kept in its caller's, at the `agent` call that started it, down to the agent
//! whose call waits. Resuming brings the whole tree back, each agent from its own checkpoint.

use serde::{Deserialize, Serialize};

use super::Checkpoint;
use crate::protocol::{AgentLabel, ToolCall};

/// A sub-agent that parked, as its caller's checkpoint keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParkedAgent {
    /// The index, in its caller's `calls`, of the `agent` call that started it.
    pub call: usize,
    pub label: AgentLabel,
    /// 1 for a sub-agent of the session's agent, 2 for one of its sub-agents, ...
    pub depth: usize,
    /// The mode and sandbox profile its calls were judged under: it goes on under them (never
    /// wider, and refused if its caller's are narrower now).
    pub mode: String,
    pub sandbox: Option<String>,
    pub checkpoint: Checkpoint,
}

/// A call of a parked tree that waits for its decision, and the sub-agent it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Asking<'a> {
    pub call: &'a ToolCall,
    /// The sub-agent whose call it is; `None` for the session's own agent.
    pub agent: Option<&'a ParkedAgent>,
}

impl Checkpoint {
    /// The call `call_id` that waits for a decision somewhere in this tree: this agent's
    /// parked call, or one of a parked sub-agent's (at any depth).
    pub fn asking(&self, call_id: &str) -> Option<Asking<'_>> {
        if let Some(call) = self.calls.get(self.parked).filter(|c| c.id == call_id) {
            return Some(Asking { call, agent: None });
        }
        self.agents.iter().find_map(|parked| {
            let inner = parked.checkpoint.asking(call_id)?;
            Some(Asking {
                call: inner.call,
                agent: inner.agent.or(Some(parked)),
            })
        })
    }

    /// Counts the waiting call `call_id` as started (its approval was used by a process that
    /// then stopped: it may have run, so it never runs again); false if no agent of this tree
    /// waits on it.
    pub fn count_as_started(&mut self, call_id: &str) -> bool {
        if self.calls.get(self.parked).is_some_and(|c| c.id == call_id) {
            self.started.push(self.parked);
            self.parked += 1;
            return true;
        }
        self.agents
            .iter_mut()
            .any(|parked| parked.checkpoint.count_as_started(call_id))
    }

    /// Every call of this tree that had started and has no result (each may still be running
    /// on its own, and is reported as interrupted when the run goes on).
    pub fn started_calls(&self) -> Vec<&ToolCall> {
        let mut calls: Vec<&ToolCall> = self
            .started
            .iter()
            .filter_map(|&index| self.calls.get(index))
            .collect();
        for parked in &self.agents {
            calls.extend(parked.checkpoint.started_calls());
        }
        calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;

    fn bash(id: &str, command: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            tool: "bash".into(),
            args: serde_json::json!({ "command": command }),
        }
    }

    fn checkpoint(calls: Vec<ToolCall>, parked: usize, agents: Vec<ParkedAgent>) -> Checkpoint {
        Checkpoint {
            conversation: vec![Message::User { text: "go".into() }],
            results: vec![None; calls.len()],
            calls,
            parked,
            model: serde_json::Value::Null,
            turn: 1,
            started: Vec::new(),
            idle: false,
            agents,
            sub_agents: 0,
        }
    }

    fn parked_agent(id: &str, call: usize, checkpoint: Checkpoint) -> ParkedAgent {
        ParkedAgent {
            call,
            label: AgentLabel {
                id: id.into(),
                parent: "main".into(),
                task: format!("task of {id}"),
            },
            depth: 1,
            mode: "default".into(),
            sandbox: None,
            checkpoint,
        }
    }

    /// The session's agent parked on `c2`; its sub-agent a1 (started by call 0) parked on
    /// `a1-c1`, and a1's own sub-agent a2 on `a2-c1`.
    fn tree() -> Checkpoint {
        let a2 = checkpoint(vec![bash("a2-c1", "make deep")], 0, Vec::new());
        let a1 = checkpoint(
            vec![bash("a1-c0", "spawn"), bash("a1-c1", "make")],
            1,
            vec![parked_agent("a2", 0, a2)],
        );
        let mut main = checkpoint(
            vec![bash("c1", "spawn"), bash("c2", "make main")],
            1,
            vec![parked_agent("a1", 0, a1)],
        );
        main.sub_agents = 2;
        main
    }

    #[test]
    fn a_waiting_call_is_found_at_any_depth_with_the_agent_it_belongs_to() {
        let tree = tree();
        let main = tree.asking("c2").unwrap();
        assert_eq!((main.call.id.as_str(), main.agent.is_none()), ("c2", true));
        let a1 = tree.asking("a1-c1").unwrap();
        assert_eq!(a1.agent.unwrap().label.id, "a1");
        let a2 = tree.asking("a2-c1").unwrap();
        assert_eq!(
            (
                a2.call.args["command"].as_str(),
                a2.agent.unwrap().label.id.as_str()
            ),
            (Some("make deep"), "a2")
        );
        // A call that does not wait (already decided, or started) is not found.
        assert!(tree.asking("c1").is_none());
        assert!(tree.asking("a1-c0").is_none());
    }

    #[test]
    fn a_parked_tree_is_written_and_read_back_whole() {
        let tree = tree();
        let json = serde_json::to_string(&tree).unwrap();
        let back = Checkpoint::from_saved(&tree.saved()).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert_eq!(back.sub_agents, 2);
        assert_eq!(back.agents[0].checkpoint.agents[0].label.id, "a2");
        // A checkpoint with no sub-agents is written as before.
        let plain = checkpoint(vec![bash("c1", "ls")], 0, Vec::new());
        let json = serde_json::to_string(&plain).unwrap();
        assert!(
            !json.contains("agents") && !json.contains("sub_agents"),
            "{json}"
        );
    }

    #[test]
    fn a_used_approval_counts_its_call_as_started_in_the_agent_it_belongs_to() {
        let mut tree = tree();
        assert!(tree.count_as_started("a2-c1"));
        let a2 = &tree.agents[0].checkpoint.agents[0].checkpoint;
        assert_eq!((a2.started.clone(), a2.parked), (vec![0], 1));
        // The session's agent's own parked call is untouched.
        assert_eq!(
            (tree.started.clone(), tree.parked),
            (Vec::<usize>::new(), 1)
        );
        let started: Vec<&str> = tree.started_calls().iter().map(|c| c.id.as_str()).collect();
        assert_eq!(started, vec!["a2-c1"]);
        assert!(!tree.count_as_started("nowhere"));
    }
}
