//! OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio...):
//! the request, and the streamed answer assembled from deltas.
//!
//! Tool calls are assembled by index: some servers repeat `id` and `name` in every chunk, so they
//! are set once and only `arguments` is appended. Whether the answer calls tools is decided by the
//! presence of tool calls, never by `finish_reason`. A stream that ends without `[DONE]`, or a
//! call whose arguments are not JSON, is an error, and no call from that answer runs.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::http::{HttpModel, ProviderKind, Unfinished};
use super::{Message, ModelError, ModelReply};
use crate::facts::catalog::ToolCatalog;
use crate::protocol::ToolCall;

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Assembles one streamed answer.
#[derive(Debug, Default)]
pub struct ChatStream {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    done: bool,
}

impl ChatStream {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn on_data(
        &mut self,
        data: &str,
        deltas: &mpsc::UnboundedSender<String>,
    ) -> Result<(), String> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("a stream chunk is not JSON ({e}): {data}"))?;
        if let Some(error) = chunk.get("error") {
            return Err(format!("the server reported an error mid-stream: {error}"));
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return Ok(()); // usage-only chunks, keep-alives
        };
        let delta = &choice["delta"];
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            let _ = deltas.send(text.to_string());
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let entry = self.calls.entry(index).or_default();
                if entry.id.is_none() {
                    entry.id = call.get("id").and_then(Value::as_str).map(str::to_string);
                }
                let function = &call["function"];
                if entry.name.is_none() {
                    entry.name = function
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                if let Some(part) = function.get("arguments").and_then(Value::as_str) {
                    entry.arguments.push_str(part);
                }
            }
        }
        Ok(())
    }

    pub fn finish(self) -> Result<ModelReply, Unfinished> {
        if !self.done {
            return Err(Unfinished::Cut("the stream ended without its finish marker ([DONE]); the answer is incomplete, so none of its tool calls run".into()));
        }
        let mut calls = Vec::new();
        let mut malformed = Vec::new();
        for (index, call) in self.calls {
            let name = call.name.ok_or_else(|| {
                format!("tool call #{index} has no name; none of this answer's calls run")
            })?;
            let args: Value = if call.arguments.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(&call.arguments).unwrap_or_else(|e| {
                    malformed.push((
                        calls.len(),
                        format!("its arguments are not valid JSON ({e})"),
                    ));
                    json!({})
                })
            };
            calls.push(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}")),
                tool: name,
                args,
            });
        }
        Ok(ModelReply {
            text: self.text,
            calls,
            malformed,
        })
    }
}

/// The request body for a conversation.
pub fn request_body(
    model: &str,
    system: &str,
    conversation: &[Message],
    tools: &ToolCatalog,
) -> Value {
    let mut messages = vec![json!({"role": "system", "content": system})];
    for m in conversation {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, calls } if calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, calls } => json!({
                "role": "assistant",
                // Some servers reject null content on tool-call turns.
                "content": text,
                "tool_calls": calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.tool, "arguments": c.args.to_string()},
                })).collect::<Vec<_>>(),
            }),
            Message::Tool {
                call_id, content, ..
            } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
        .collect();
    json!({"model": model, "messages": messages, "tools": tools, "stream": true})
}

/// Reads one streamed answer from a response body.
pub async fn read_stream(
    http: &HttpModel,
    response: reqwest::Response,
    deltas: &mpsc::UnboundedSender<String>,
) -> Result<ModelReply, ModelError> {
    let mut stream = ChatStream::new();
    http.read_sse(response, ProviderKind::OpenAi, |event| {
        stream.on_data(&event.data, deltas)
    })
    .await?;
    stream.finish().map_err(|why| http.unfinished(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(chunks: &[&str]) -> (Result<ModelReply, String>, String) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut s = ChatStream::new();
        for c in chunks {
            if let Err(e) = s.on_data(c, &tx) {
                return (Err(e), String::new());
            }
        }
        drop(tx);
        let mut text = String::new();
        while let Ok(t) = rx.try_recv() {
            text.push_str(&t);
        }
        (s.finish().map_err(|e| e.to_string()), text)
    }

    #[test]
    fn text_only_streams_deltas_and_has_no_calls() {
        let (reply, streamed) = play(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        let reply = reply.unwrap();
        assert_eq!((reply.text.as_str(), streamed.as_str()), ("Hello", "Hello"));
        assert!(reply.calls.is_empty());
    }

    #[test]
    fn one_tool_call_with_arguments_split_across_many_chunks() {
        let (reply, _) = play(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\": \"ls"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":" -la\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        let calls = reply.unwrap().calls;
        assert_eq!(
            calls.len(),
            1,
            "a call counts even when finish_reason says stop"
        );
        assert_eq!(calls[0].id, "call_1");
        assert_eq!(calls[0].args, json!({"command": "ls -la"}));
    }

    #[test]
    fn parallel_tool_calls_with_ids_and_names_repeated_in_every_chunk() {
        let (reply, _) = play(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"path\":"}},{"index":1,"id":"b","function":{"name":"list_dir","arguments":"{\"path\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"\"x\"}"}},{"index":1,"id":"b","function":{"name":"list_dir","arguments":":\".\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let calls = reply.unwrap().calls;
        let got: Vec<(String, String, Value)> =
            calls.into_iter().map(|c| (c.id, c.tool, c.args)).collect();
        assert_eq!(
            got,
            vec![
                ("a".into(), "read_file".into(), json!({"path": "x"})),
                ("b".into(), "list_dir".into(), json!({"path": "."})),
            ]
        );
    }

    #[test]
    fn a_truncated_stream_is_an_error_and_no_call_runs() {
        let (reply, _) = play(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}]}"#,
        ]);
        assert!(reply.unwrap_err().contains("finish marker"));
    }

    #[test]
    fn malformed_arguments_are_marked_on_their_call_and_the_answer_is_kept() {
        let (reply, _) = play(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}},{"index":1,"id":"b","function":{"name":"bash","arguments":"{\"command\": rm"}}]}}]}"#,
            "[DONE]",
        ]);
        let reply = reply.unwrap();
        assert_eq!(reply.calls.len(), 2);
        assert_eq!(reply.calls[1].args, json!({}));
        assert_eq!(reply.malformed.len(), 1);
        let (index, why) = &reply.malformed[0];
        assert_eq!(*index, 1);
        assert!(why.contains("not valid JSON"), "{why}");
    }

    #[test]
    fn tool_turns_are_sent_back_with_empty_content_not_null() {
        let conv = vec![
            Message::User { text: "hi".into() },
            Message::Assistant {
                text: String::new(),
                calls: vec![ToolCall {
                    id: "c1".into(),
                    tool: "bash".into(),
                    args: json!({"command": "ls"}),
                }],
            },
            Message::Tool {
                call_id: "c1".into(),
                tool: "bash".into(),
                result: crate::model::CallResult::Ok,
                content: "x".into(),
            },
        ];
        let body = request_body("m", "sys", &conv, &ToolCatalog::builtin());
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages[2]["content"], "");
        assert_eq!(
            messages[2]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":\"ls\"}"
        );
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "x"})
        );
        assert_eq!(body["tools"].as_array().unwrap().len(), 7);
    }
}
