//! A model that plays a scenario file: each answer is the next step's text and tool calls, and a
//! step may check what became of the previous step's calls. The format is in `assets/README.md`.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{CallResult, Message, ModelClient, ModelError, ModelReply};
use crate::approval::approver::BoxFuture;
use crate::protocol::ToolCall;

/// The largest scenario file read whole before it is parsed; a larger one is parsed as it is read.
pub const WHOLE_READ_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The prompt `airlock exec` submits when none is given on the command line.
    #[serde(default)]
    pub prompt: Option<String>,
    pub steps: Vec<Step>,
    /// The scripts sub-agents play, by the task their `agent` call names: a sub-agent started
    /// for a task plays its script from the start.
    #[serde(default)]
    pub agents: std::collections::BTreeMap<String, SubScript>,
}

/// What a sub-agent plays: its steps, and the scripts of the sub-agents it starts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubScript {
    #[serde(default)]
    pub description: String,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub agents: std::collections::BTreeMap<String, SubScript>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default)]
    pub say: String,
    /// Milliseconds between streamed words of `say` (0 streams it at once).
    #[serde(default)]
    pub delay_ms: u64,
    #[serde(default)]
    pub calls: Vec<ScriptedCall>,
    /// What the previous step's calls must have come to, one entry per call, in order.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// Text the previous step's results, as the model read them, must hold (each string in
    /// one of them).
    #[serde(default)]
    pub expect_seen: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    #[serde(default)]
    pub id: Option<String>,
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    /// The arguments as text, as a provider sends them, in place of `args`: to play a model
    /// whose arguments are not valid JSON (the call is then refused, and the model told why).
    #[serde(default)]
    pub raw_args: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    Ok,
    Failed,
    Denied,
    /// Ran, whatever the result.
    Ran,
    Any,
}

impl Expect {
    fn accepts(self, result: CallResult) -> bool {
        match self {
            Expect::Any => true,
            Expect::Ran => result != CallResult::Denied,
            Expect::Ok => result == CallResult::Ok,
            Expect::Failed => result == CallResult::Failed,
            Expect::Denied => result == CallResult::Denied,
        }
    }
}

impl Scenario {
    pub fn parse(text: &str, origin: &str) -> Result<Scenario, ModelError> {
        Self::checked(serde_json::from_str(text), origin)
    }

    /// Reads a scenario file. One of at most [`WHOLE_READ_BYTES`] is read whole and parsed from
    /// memory (serde_json's reader parses byte by byte through `io::Read`, several times slower:
    /// a 3 MB step took longer to parse than to diff). A larger one is parsed as it is read, so
    /// its text is never held whole beside the scenario made from it (a step writing 100 MB
    /// would otherwise be in memory three times while it is parsed: the text, the parser's
    /// buffer and the value).
    pub fn load(path: &Path) -> Result<Scenario, ModelError> {
        Self::load_within(path, WHOLE_READ_BYTES)
    }

    /// [`Scenario::load`], reading whole a file of at most `whole` bytes.
    fn load_within(path: &Path, whole: u64) -> Result<Scenario, ModelError> {
        use std::io::Read as _;
        let cannot_read = |e: &dyn std::fmt::Display| {
            ModelError::Scenario(format!("cannot read scenario {}: {e}", path.display()))
        };
        let mut file = std::fs::File::open(path).map_err(|e| cannot_read(&e))?;
        let small = file
            .metadata()
            .ok()
            .filter(|meta| meta.is_file() && meta.len() <= whole);
        if let Some(meta) = small {
            let mut text = Vec::with_capacity(meta.len() as usize + 1);
            (&mut file)
                .take(whole + 1)
                .read_to_end(&mut text)
                .map_err(|e| cannot_read(&e))?;
            if text.len() as u64 <= whole {
                return Self::checked(serde_json::from_slice(&text), &path.display().to_string());
            }
            // It grew past the bound while it was read: parsed as it is read, from the start.
            drop(text);
            file = std::fs::File::open(path).map_err(|e| cannot_read(&e))?;
        }
        let parsed = serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, file));
        match parsed {
            Err(e) if e.is_io() => Err(cannot_read(&e)),
            parsed => Self::checked(parsed, &path.display().to_string()),
        }
    }

    fn checked(
        parsed: Result<Scenario, serde_json::Error>,
        origin: &str,
    ) -> Result<Scenario, ModelError> {
        let scenario = parsed.map_err(|e| {
            ModelError::Scenario(format!(
                "{origin} is not a valid scenario: {e} (see assets/README.md for the format)"
            ))
        })?;
        check_steps(&scenario.steps, &scenario.agents, origin, "")?;
        Ok(scenario)
    }
}

/// Every call's `args` is an object, in the steps and in every sub-agent's script; `within`
/// names the script (`agent "tests": `) in the error.
fn check_steps(
    steps: &[Step],
    agents: &std::collections::BTreeMap<String, SubScript>,
    origin: &str,
    within: &str,
) -> Result<(), ModelError> {
    for (i, step) in steps.iter().enumerate() {
        for (j, call) in step.calls.iter().enumerate() {
            if !call.args.is_object() {
                return Err(ModelError::Scenario(format!(
                    "{origin}: {within}step {} call {}: `args` must be an object",
                    i + 1,
                    j + 1
                )));
            }
        }
    }
    for (task, script) in agents {
        let within = format!("{within}agent {task:?}: ");
        check_steps(&script.steps, &script.agents, origin, &within)?;
    }
    Ok(())
}

pub struct ScriptedModel {
    /// The script, without its calls' arguments: those are in `State::unplayed`.
    scenario: Scenario,
    state: Mutex<State>,
}

struct State {
    next_step: usize,
    next_id: usize,
    /// Each step's call arguments until the step is played: they are handed to the reply, not
    /// copied (a step may write 100 MB, and the model would otherwise hold it for the whole run
    /// on top of the agent's copies). `None` once played.
    unplayed: Vec<Option<Vec<Value>>>,
}

impl ScriptedModel {
    pub fn new(mut scenario: Scenario) -> Self {
        let unplayed = scenario
            .steps
            .iter_mut()
            .map(|step| {
                Some(
                    step.calls
                        .iter_mut()
                        .map(|call| std::mem::take(&mut call.args))
                        .collect(),
                )
            })
            .collect();
        ScriptedModel {
            scenario,
            state: Mutex::new(State {
                next_step: 0,
                next_id: 0,
                unplayed,
            }),
        }
    }
}

/// The messages since the last assistant message: the results of the calls it asked for.
fn since_last_answer(conversation: &[Message]) -> &[Message] {
    let start = conversation
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
        .map(|i| i + 1)
        .unwrap_or(conversation.len());
    &conversation[start..]
}

/// The results of the calls answered since the last assistant message, in order.
fn latest_results(conversation: &[Message]) -> Vec<CallResult> {
    since_last_answer(conversation)
        .iter()
        .filter_map(|m| match m {
            Message::Tool { result, .. } => Some(*result),
            _ => None,
        })
        .collect()
}

/// The contents of the results the model read since its last answer.
fn latest_contents(conversation: &[Message]) -> Vec<&str> {
    since_last_answer(conversation)
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

/// What the scripted model answers once its scenario has played to the end.
fn finished_notice(scenario: &str) -> String {
    format!(
        "The scripted scenario `{scenario}` has played to its end, and no model is configured, so \
         nothing answers new prompts. To work with a real model, set `provider` and `model` in \
         ~/.config/airlock/config.toml (or AIRLOCK_PROVIDER and AIRLOCK_MODEL) and put your API \
         key in OPENAI_API_KEY or ANTHROPIC_API_KEY; README.md, \"Real models and \
         configuration\", has the details. Then start airlock again."
    )
}

impl ModelClient for ScriptedModel {
    fn name(&self) -> String {
        format!("scripted: {}", self.scenario.name)
    }

    fn save(&self) -> Value {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::json!({"next_step": state.next_step, "next_id": state.next_id})
    }

    fn restore(&self, saved: &Value) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.next_step = saved["next_step"].as_u64().unwrap_or(0) as usize;
        state.next_id = saved["next_id"].as_u64().unwrap_or(0) as usize;
    }

    fn sub_agent(&self, task: &str) -> Result<Option<std::sync::Arc<dyn ModelClient>>, ModelError> {
        let Some(script) = self.scenario.agents.get(task) else {
            let known: Vec<_> = self
                .scenario
                .agents
                .keys()
                .map(|k| format!("{k:?}"))
                .collect();
            return Err(ModelError::Scenario(format!(
                "scenario `{}` has no script for a sub-agent with the task {task:?} (it has: {})",
                self.scenario.name,
                if known.is_empty() {
                    "none; add one under `agents`".to_string()
                } else {
                    known.join(", ")
                }
            )));
        };
        Ok(Some(std::sync::Arc::new(ScriptedModel::new(Scenario {
            name: format!("{} / {task}", self.scenario.name),
            description: script.description.clone(),
            prompt: None,
            steps: script.steps.clone(),
            agents: script.agents.clone(),
        }))))
    }

    fn respond<'a>(
        &'a self,
        conversation: &'a [Message],
        deltas: mpsc::UnboundedSender<String>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            let (step, index, first_id, args) = {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let index = state.next_step;
                let Some(step) = self.scenario.steps.get(index) else {
                    // A person typing a new prompt after the demo must not be met by silence.
                    let text = finished_notice(&self.scenario.name);
                    let _ = deltas.send(text.clone());
                    return Ok(ModelReply {
                        text,
                        ..ModelReply::default()
                    });
                };
                state.next_step += 1;
                let first_id = state.next_id;
                state.next_id += step.calls.len();
                // A model restored to an earlier step in the same process (nothing does that:
                // a resumed run restores a new model before its first step) cannot replay it.
                let Some(args) = state.unplayed.get_mut(index).and_then(Option::take) else {
                    return Err(ModelError::Scenario(format!(
                        "scenario `{}` step {}: this step was played already, and a scripted step \
                         hands its calls over once",
                        self.scenario.name,
                        index + 1
                    )));
                };
                (step, index, first_id, args)
            };
            if !step.expect.is_empty() {
                let results = latest_results(conversation);
                if results.len() != step.expect.len()
                    || step
                        .expect
                        .iter()
                        .zip(&results)
                        .any(|(e, r)| !e.accepts(*r))
                {
                    return Err(ModelError::Scenario(format!(
                        "scenario `{}` step {}: expected the previous calls to come to {:?}, they came to {:?}",
                        self.scenario.name,
                        index + 1,
                        step.expect,
                        results
                    )));
                }
            }
            let read = latest_contents(conversation);
            if let Some(missing) = step
                .expect_seen
                .iter()
                .find(|want| !read.iter().any(|content| content.contains(want.as_str())))
            {
                return Err(ModelError::Scenario(format!(
                    "scenario `{}` step {}: the previous results do not say {missing:?}; they said {read:?}",
                    self.scenario.name,
                    index + 1,
                )));
            }
            if step.delay_ms == 0 {
                if !step.say.is_empty() {
                    let _ = deltas.send(step.say.clone());
                }
            } else {
                for (i, word) in step.say.split_inclusive(' ').enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(step.delay_ms)).await;
                    }
                    let _ = deltas.send(word.to_string());
                }
            }
            let mut malformed = Vec::new();
            let calls = step
                .calls
                .iter()
                .zip(args)
                .enumerate()
                .map(|(i, (c, args))| {
                    let args = match c.raw_args.as_deref().map(serde_json::from_str::<Value>) {
                        None => args,
                        Some(Ok(parsed)) => parsed,
                        Some(Err(e)) => {
                            malformed.push((i, format!("its arguments are not valid JSON ({e})")));
                            empty_object()
                        }
                    };
                    ToolCall {
                        id: c
                            .id
                            .clone()
                            .unwrap_or_else(|| format!("c{}", first_id + i + 1)),
                        tool: c.tool.clone(),
                        args,
                    }
                })
                .collect();
            Ok(ModelReply {
                text: step.say.clone(),
                calls,
                malformed,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_scenario_says_where() {
        let err = Scenario::parse(r#"{"name": "x", "steps": [{"sey": "hi"}]}"#, "demo.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("demo.json") && err.contains("sey"), "{err}");
        let err = Scenario::parse(
            r#"{"name": "x", "steps": [{"calls": [{"tool": "bash", "args": "ls"}]}]}"#,
            "demo.json",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("step 1 call 1"), "{err}");
    }

    #[test]
    fn a_scenario_file_loads_as_its_text_parses_and_a_bad_one_says_which_file_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"{"name": "f", "steps": [{"calls": [{"tool": "write_file",
            "args": {"path": "a.txt", "content": "one\ntwo \u00e9\n"}}]}]}"#;
        let path = dir.path().join("s.json");
        std::fs::write(&path, text).unwrap();
        let loaded = Scenario::load(&path).unwrap();
        let parsed = Scenario::parse(text, "s.json").unwrap();
        assert_eq!(loaded.steps[0].calls[0].args, parsed.steps[0].calls[0].args);
        // Past the bound for reading whole, it is parsed as it is read, to the same scenario.
        let streamed = Scenario::load_within(&path, 10).unwrap();
        assert_eq!(
            streamed.steps[0].calls[0].args,
            parsed.steps[0].calls[0].args
        );
        let missing = Scenario::load(&dir.path().join("none.json"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot read scenario") && missing.contains("none.json"));
        std::fs::write(
            &path,
            r#"{"name": "f", "steps": [{"calls": [{"tool": "x", "args": 1}]}]}"#,
        )
        .unwrap();
        for whole in [WHOLE_READ_BYTES, 10] {
            let err = Scenario::load_within(&path, whole).unwrap_err().to_string();
            assert!(
                err.contains("s.json") && err.contains("step 1 call 1"),
                "{err}"
            );
        }
        let unreadable = Scenario::load(dir.path()).unwrap_err().to_string();
        assert!(unreadable.contains("cannot read scenario"), "{unreadable}");
    }

    #[tokio::test]
    async fn steps_play_in_order_and_check_what_the_previous_calls_came_to() {
        let scenario = Scenario::parse(
            r#"{"name": "t", "steps": [
                {"say": "one", "calls": [{"tool": "bash", "args": {"command": "ls"}}]},
                {"say": "two", "expect": ["denied"]}
            ]}"#,
            "t",
        )
        .unwrap();
        let model = ScriptedModel::new(scenario);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let first = model.respond(&[], tx.clone()).await.unwrap();
        assert_eq!(first.calls[0].id, "c1");
        assert_eq!(rx.recv().await.unwrap(), "one");
        let ran = vec![
            Message::Assistant {
                text: "one".into(),
                calls: first.calls.clone(),
            },
            Message::Tool {
                call_id: "c1".into(),
                tool: "bash".into(),
                result: CallResult::Ok,
                content: String::new(),
            },
        ];
        let err = model.respond(&ran, tx).await.unwrap_err();
        assert!(
            err.to_string().contains("expected the previous calls"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_step_hands_its_calls_over_once_and_a_resumed_model_starts_where_it_was_saved() {
        let text = r#"{"name": "t", "steps": [
            {"calls": [{"tool": "write_file", "args": {"path": "a", "content": "x"}},
                       {"tool": "bash", "args": {"command": "ls"}}]},
            {"calls": [{"tool": "bash", "args": {"command": "pwd"}}]}
        ]}"#;
        let model = ScriptedModel::new(Scenario::parse(text, "t").unwrap());
        let (tx, _rx) = mpsc::unbounded_channel();
        let first = model.respond(&[], tx.clone()).await.unwrap();
        assert_eq!(
            first.calls[0].args,
            serde_json::json!({"path": "a", "content": "x"})
        );
        assert_eq!(first.calls[1].args, serde_json::json!({"command": "ls"}));
        let saved = model.save();
        // Another process going on from `saved` plays the next step.
        let resumed = ScriptedModel::new(Scenario::parse(text, "t").unwrap());
        resumed.restore(&saved);
        let second = resumed.respond(&[], tx.clone()).await.unwrap();
        assert_eq!(second.calls[0].id, "c3");
        assert_eq!(second.calls[0].args, serde_json::json!({"command": "pwd"}));
        // The same model sent back to a step it played refuses, rather than playing it empty.
        model.restore(&serde_json::json!({"next_step": 0, "next_id": 0}));
        let err = model.respond(&[], tx).await.unwrap_err().to_string();
        assert!(err.contains("played already"), "{err}");
    }

    #[tokio::test]
    async fn a_prompt_after_the_scenario_ended_is_told_how_to_configure_a_model() {
        let scenario =
            Scenario::parse(r#"{"name": "demo", "steps": [{"say": "done"}]}"#, "t").unwrap();
        let model = ScriptedModel::new(scenario);
        let (tx, mut rx) = mpsc::unbounded_channel();
        model.respond(&[], tx.clone()).await.unwrap();
        assert_eq!(rx.recv().await.unwrap(), "done");
        let after = model.respond(&[], tx).await.unwrap();
        assert!(after.calls.is_empty());
        assert!(
            after.text.contains("no model is configured"),
            "{}",
            after.text
        );
        assert!(after.text.contains("config.toml"), "{}", after.text);
        assert_eq!(rx.recv().await.unwrap(), after.text);
    }
}
