//! Anthropic Messages: the request (system prompt, `max_tokens`, tools, `tool_result` blocks) and
//! the streamed answer (`content_block_start` / `_delta` / `_stop`, `tool_use` with partial JSON
//! input, `message_stop` as the finish marker).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::http::{HttpModel, ProviderKind, Unfinished};
use super::{Message, ModelError, ModelReply};
use crate::facts::catalog::ToolCatalog;
use crate::protocol::ToolCall;

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Debug, Default)]
pub struct MessageStream {
    text: String,
    blocks: BTreeMap<u64, Block>,
    done: bool,
}

impl MessageStream {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn on_event(
        &mut self,
        data: &str,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<(), String> {
        let event: Value = serde_json::from_str(data.trim())
            .map_err(|e| format!("a stream event is not JSON ({e}): {data}"))?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "content_block_start" => {
                let block = &event["content_block"];
                let b = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            self.text.push_str(t);
                            let _ = deltas.send(t.to_string());
                        }
                        Block::Text
                    }
                    Some("tool_use") => Block::ToolUse {
                        id: block["id"].as_str().unwrap_or_default().to_string(),
                        name: block["name"].as_str().unwrap_or_default().to_string(),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, b);
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let t = delta["text"].as_str().unwrap_or_default();
                        self.text.push_str(t);
                        let _ = deltas.send(t.to_string());
                    }
                    Some("input_json_delta") => {
                        if let Some(Block::ToolUse { json, .. }) = self.blocks.get_mut(&index) {
                            json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                        }
                    }
                    _ => {}
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                return Err(format!(
                    "the server reported an error mid-stream: {}",
                    event["error"]
                ));
            }
            _ => {} // message_start, content_block_stop, message_delta, ping
        }
        Ok(())
    }

    pub fn finish(self) -> Result<ModelReply, Unfinished> {
        if !self.done {
            return Err(Unfinished::Cut("the stream ended without its finish marker (message_stop); the answer is incomplete, so none of its tool calls run".into()));
        }
        let mut calls = Vec::new();
        let mut malformed = Vec::new();
        for block in self.blocks.into_values() {
            if let Block::ToolUse { id, name, json } = block {
                let args = if json.trim().is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(&json).unwrap_or_else(|e| {
                        malformed.push((calls.len(), format!("its input is not valid JSON ({e})")));
                        json!({})
                    })
                };
                calls.push(ToolCall {
                    id,
                    tool: name,
                    args,
                });
            }
        }
        Ok(ModelReply {
            text: self.text,
            calls,
            malformed,
        })
    }
}

pub fn request_body(
    model: &str,
    max_tokens: u32,
    system: &str,
    conversation: &[Message],
    tools: &ToolCatalog,
) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for m in conversation {
        match m {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                for c in calls {
                    content.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.tool, "input": c.args}),
                    );
                }
                if content.is_empty() {
                    content.push(json!({"type": "text", "text": "(no text)"}));
                }
                messages.push(json!({"role": "assistant", "content": content}));
            }
            Message::Tool {
                call_id,
                result,
                content,
                ..
            } => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": *result != super::CallResult::Ok,
                });
                // Results of one batch go back together in one user message.
                match messages.last_mut() {
                    Some(last) if last["role"] == "user" && last["content"].is_array() => {
                        if let Some(list) = last["content"].as_array_mut() {
                            list.push(block);
                        }
                    }
                    _ => messages.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
        .collect();
    json!({"model": model, "max_tokens": max_tokens, "system": system, "messages": messages, "tools": tools, "stream": true})
}

pub async fn read_stream(
    http: &HttpModel,
    response: reqwest::Response,
    deltas: &mpsc::UnboundedSender<String>,
) -> Result<ModelReply, ModelError> {
    let mut stream = MessageStream::new();
    http.read_sse(response, ProviderKind::Anthropic, |event| {
        stream.on_event(&event.data, deltas)
    })
    .await?;
    stream.finish().map_err(|why| http.unfinished(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(events: &[&str]) -> Result<ModelReply, String> {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut s = MessageStream::new();
        for e in events {
            s.on_event(e, &tx)?;
        }
        s.finish().map_err(|e| e.to_string())
    }

    const START: &str =
        r#"{"type":"message_start","message":{"id":"m","role":"assistant","content":[]}}"#;
    const STOP: &str = r#"{"type":"message_stop"}"#;

    #[test]
    fn text_and_a_tool_use_with_partial_json_input() {
        let reply = play(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\": \"README.md\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
            STOP,
        ])
        .unwrap();
        assert_eq!(reply.text, "Let me look.");
        assert_eq!(reply.calls[0].tool, "read_file");
        assert_eq!(reply.calls[0].args, json!({"path": "README.md"}));
    }

    #[test]
    fn parallel_tool_uses_keep_their_order() {
        let reply = play(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"list_dir","input":{}}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"b","name":"read_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"x\"}"}}"#,
            STOP,
        ])
        .unwrap();
        let ids: Vec<&str> = reply.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert_eq!(reply.calls[0].args, json!({}));
    }

    #[test]
    fn a_truncated_stream_runs_nothing_and_malformed_input_is_marked_on_its_call() {
        let truncated = play(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"bash","input":{}}}"#,
        ]);
        assert!(truncated.unwrap_err().contains("message_stop"));
        let malformed = play(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"bash","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": "}}"#,
            STOP,
        ]);
        let malformed = malformed.unwrap();
        assert_eq!(malformed.calls[0].args, json!({}));
        assert_eq!(malformed.malformed[0].0, 0);
        assert!(malformed.malformed[0].1.contains("not valid JSON"));
    }

    #[test]
    fn tool_results_of_one_batch_go_back_in_one_user_message() {
        use crate::model::CallResult;
        let conv = vec![
            Message::User { text: "hi".into() },
            Message::Assistant {
                text: "".into(),
                calls: vec![
                    ToolCall {
                        id: "a".into(),
                        tool: "list_dir".into(),
                        args: json!({}),
                    },
                    ToolCall {
                        id: "b".into(),
                        tool: "bash".into(),
                        args: json!({"command": "x"}),
                    },
                ],
            },
            Message::Tool {
                call_id: "a".into(),
                tool: "list_dir".into(),
                result: CallResult::Ok,
                content: "ok".into(),
            },
            Message::Tool {
                call_id: "b".into(),
                tool: "bash".into(),
                result: CallResult::Denied,
                content: "denied".into(),
            },
        ];
        let body = request_body("m", 1024, "sys", &conv, &ToolCatalog::builtin());
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(messages[2]["content"][1]["is_error"], true);
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], 1024);
    }
}
