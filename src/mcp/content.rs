//! A tool result as the model is given it: the text of its content blocks, in order, with a
//! line for what is not text (an image, a resource), and the structured result when there is
//! nothing else.

use serde_json::Value;

/// The result's text and whether the server marked it an error (`isError`).
pub fn text_of(result: &Value) -> (String, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut parts: Vec<String> = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => parts.push(text("text").to_string()),
            "image" | "audio" => parts.push(format!(
                "[{kind} {}, {} bytes of base64]",
                text("mimeType"),
                text("data").len()
            )),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
                match resource.get("text").and_then(Value::as_str) {
                    Some(t) => parts.push(format!("[resource {uri}]\n{t}")),
                    None => parts.push(format!("[resource {uri}]")),
                }
            }
            "resource_link" => parts.push(format!("[resource link {}]", text("uri"))),
            other => parts.push(format!("[{other} content]")),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        parts.push(crate::digest::canonical_json(structured));
    }
    (parts.join("\n"), is_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_and_other_blocks_named() {
        let (text, error) = text_of(&json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "body"}},
        ]}));
        assert_eq!(
            text,
            "a\n[image image/png, 4 bytes of base64]\n[resource file:///x]\nbody"
        );
        assert!(!error);
    }

    #[test]
    fn an_error_result_is_marked_and_structured_content_is_the_fallback() {
        let (text, error) = text_of(
            &json!({"isError": true, "content": [], "structuredContent": {"b": 1, "a": 2}}),
        );
        assert_eq!(text, r#"{"a":2,"b":1}"#);
        assert!(error);
    }
}
