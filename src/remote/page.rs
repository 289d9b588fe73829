//! The page itself: plain HTML and one style sheet, no script. Every link and form is relative,
//! so the page works under the secret path it is served at (see `http`). Everything that came from a
//! model, a file or the state database goes through `visible` (control, bidi and zero-width
//! characters shown as the cockpit shows them) and then HTML escaping, in that order.

use serde_json::Value;

use crate::visible::{visible, visible_line};

/// One asking (or denied) part of a command: its byte range in the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkedPart {
    pub label: String,
    pub ruling: String,
    pub span: Option<(usize, usize)>,
    pub why: Vec<String>,
}

/// A request waiting for an answer, as the page shows it.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub code: String,
    pub digest: String,
    pub session: String,
    pub call_id: String,
    pub tool: String,
    /// The sub-agent that asks, as `a1 (task)`.
    pub agent: Option<String>,
    pub risk: String,
    pub reasons: Vec<String>,
    pub parts: Vec<MarkedPart>,
    /// The modal's preview, as stored with the request (`protocol::Preview`, serialized).
    pub preview: Value,
    /// The frozen arguments (canonical JSON), shown when there is no better preview.
    pub canonical: String,
    pub created_ms: u64,
    pub expires_ms: u64,
}

/// The style sheet (`/page.css`): the only thing the page loads.
pub const CSS: &str = r#"
*{box-sizing:border-box}
body{margin:0;font:16px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f4f2;color:#1d1d1b}
header{background:#1d1d1b;color:#fff;padding:.7rem 1rem;display:flex;justify-content:space-between;align-items:baseline;gap:.5rem;flex-wrap:wrap}
header h1{font-size:1.1rem;margin:0}
header span{font-size:.85rem;opacity:.8}
main{max-width:46rem;margin:0 auto;padding:.75rem}
.req{background:#fff;border:1px solid #d6d6d0;border-left:6px solid #c9a227;border-radius:8px;padding:.75rem;margin:0 0 1rem}
.req.dangerous{border-left-color:#b3261e}
.req.safe{border-left-color:#3b7d3b}
.req h2{font-size:1.05rem;margin:0 0 .25rem;word-break:break-word}
.risk{display:inline-block;font-size:.8rem;padding:.05rem .45rem;border-radius:1rem;background:#c9a227;color:#000;vertical-align:middle}
.dangerous .risk{background:#b3261e;color:#fff}
.safe .risk{background:#3b7d3b;color:#fff}
.meta{font-size:.85rem;color:#5b5b55;margin:.2rem 0 .5rem}
ul{margin:.25rem 0 .5rem;padding-left:1.2rem}
li{margin:.1rem 0;word-break:break-word}
.label{font-size:.85rem;color:#5b5b55;margin:.5rem 0 .2rem}
pre{margin:0;padding:.5rem;background:#1d1d1b;color:#f4f4f2;border-radius:6px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font:13px/1.35 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace}
pre mark{background:#c9a227;color:#000;padding:0 .1rem;border-radius:2px}
pre mark.deny{background:#b3261e;color:#fff}
.add{color:#8fdc8f}.del{color:#ff9a92}.hunk{color:#8ab4ff}.head{color:#c8c8c0}
.answer{display:flex;flex-direction:column;gap:.5rem;margin-top:.75rem}
.answer form{display:flex;gap:.5rem;flex-wrap:wrap;margin:0}
button{font:inherit;font-weight:600;border:0;border-radius:8px;padding:.8rem 1rem;min-height:3rem;cursor:pointer}
.allow{background:#2e6b2e;color:#fff;flex:1 1 100%}
.deny{background:#b3261e;color:#fff;flex:0 0 auto}
input[type=text]{font:inherit;flex:1 1 10rem;min-width:0;padding:.7rem;border:1px solid #b5b5ad;border-radius:8px}
.note{background:#fff;border:1px solid #d6d6d0;border-radius:8px;padding:1rem}
.note.bad{border-color:#b3261e}
a{color:#1d4f91}
.empty{text-align:center;color:#5b5b55;padding:2rem 1rem}
"#;

/// HTML-escapes text that is already made visible.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A line of untrusted text, for HTML: hidden characters shown, then escaped.
fn line(text: &str) -> String {
    escape(&visible_line(text))
}

fn document(title: &str, body: &str, refresh: Option<u32>) -> String {
    let refresh = refresh
        .map(|s| format!("<meta http-equiv=\"refresh\" content=\"{s}\">"))
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"referrer\" content=\"same-origin\">{refresh}\
         <title>{title}</title><link rel=\"stylesheet\" href=\"page.css\"></head>\
         <body><header><h1>airlock</h1><span>{title}</span></header><main>{body}</main></body></html>",
        title = escape(title),
    )
}

/// A short page that says one thing (a refusal, or what an answer did).
pub fn message(title: &str, text: &str, bad: bool, back: bool) -> String {
    let back = if back {
        "<p><a href=\"./\">Back to the requests</a></p>"
    } else {
        ""
    };
    document(
        title,
        &format!(
            "<div class=\"note{}\"><p>{}</p>{back}</div>",
            if bad { " bad" } else { "" },
            line(text)
        ),
        None,
    )
}

/// The pairing form for a token that would pair: a name for this device, then pair.
pub fn pair_form(token: &str) -> String {
    document(
        "pair this device",
        &format!(
            "<div class=\"note\"><p>Pair this device with airlock to answer its approval requests \
             here. Only pair a device you hold: it can allow what the agent asks.</p>\
             <form method=\"post\" action=\"pair\" class=\"answer\">\
             <input type=\"hidden\" name=\"token\" value=\"{}\">\
             <input type=\"text\" name=\"name\" id=\"name\" maxlength=\"40\" placeholder=\"Name of this device (e.g. my phone)\" required>\
             <button class=\"allow\" id=\"pair\" type=\"submit\">Pair this device</button></form></div>",
            escape(token)
        ),
        None,
    )
}

fn ago(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

/// Every request waiting, each with its answer forms.
pub fn requests(waiting: &[Waiting], device: &str, form_token: &str, now: u64) -> String {
    let title = match waiting.len() {
        0 => "nothing waits".to_string(),
        1 => "1 request waits".to_string(),
        n => format!("{n} requests wait"),
    };
    let mut body = format!(
        "<p class=\"meta\">Paired as <b>{}</b>. Each answer is bound to the exact call shown; the \
         first answer wins, here or in the terminal. <a href=\"./\">Refresh</a></p>",
        line(device)
    );
    if waiting.is_empty() {
        body.push_str(
            "<p class=\"empty\" id=\"empty\">Nothing waits for an answer. This page looks again \
             every 15 seconds.</p>",
        );
    }
    for w in waiting {
        body.push_str(&card(w, form_token, now));
    }
    // Reloaded only while nothing waits: a reason being typed is never lost to a reload.
    document(&title, &body, waiting.is_empty().then_some(15))
}

fn card(w: &Waiting, form_token: &str, now: u64) -> String {
    let risk_class = match w.risk.as_str() {
        "dangerous" => "dangerous",
        "safe" => "safe",
        _ => "mutating",
    };
    let mut out = format!(
        "<section class=\"req {risk_class}\" id=\"req-{id}\"><h2>{tool} <span class=\"risk\">{risk}</span></h2>\
         <p class=\"meta\">call {call} · {agent} · session {session} · waiting {age} · expires in {left}</p>",
        id = escape(&w.code),
        tool = line(&w.tool),
        risk = line(&w.risk),
        call = line(&w.call_id),
        agent = w
            .agent
            .as_deref()
            .map_or("main agent".to_string(), |a| format!("agent {}", line(a))),
        session = line(&w.session),
        age = ago(now.saturating_sub(w.created_ms)),
        left = ago(w.expires_ms.saturating_sub(now)),
    );
    if !w.reasons.is_empty() {
        out.push_str("<ul class=\"reasons\">");
        for r in &w.reasons {
            out.push_str(&format!("<li>{}</li>", line(r)));
        }
        out.push_str("</ul>");
    }
    out.push_str(&preview(w));
    let hidden = format!(
        "<input type=\"hidden\" name=\"code\" value=\"{}\"><input type=\"hidden\" name=\"digest\" value=\"{}\">\
         <input type=\"hidden\" name=\"form_token\" value=\"{}\">",
        escape(&w.code),
        escape(&w.digest),
        escape(form_token)
    );
    out.push_str(&format!(
        "<div class=\"answer\"><form method=\"post\" action=\"answer\">{hidden}\
         <button class=\"allow\" name=\"decision\" value=\"allow\" type=\"submit\">Allow once</button></form>\
         <form method=\"post\" action=\"answer\">{hidden}\
         <input type=\"text\" name=\"reason\" maxlength=\"500\" placeholder=\"Reason for the model (optional)\">\
         <button class=\"deny\" name=\"decision\" value=\"deny\" type=\"submit\">Deny</button></form></div></section>"
    ));
    out
}

/// What would run: the command with its asking parts marked, the diff, or the arguments.
fn preview(w: &Waiting) -> String {
    let p = &w.preview;
    match p["kind"].as_str() {
        Some("command") => command(w, p),
        Some("diff") => diff(p),
        Some("error") => format!(
            "<p class=\"label\">the change cannot be shown:</p><pre>{}</pre>",
            escape(&visible(p["message"].as_str().unwrap_or("")))
        ),
        Some("mcp") => {
            let mut out = format!(
                "<p class=\"label\">MCP tool {} of server {}</p>",
                line(p["tool"].as_str().unwrap_or("")),
                line(p["server"].as_str().unwrap_or(""))
            );
            let lines = |key: &str| -> Vec<String> {
                p[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| l.as_str().map(line))
                    .collect()
            };
            // Where its server runs, as the modal says it: above all a server with no sandbox,
            // which runs with all of the person's rights.
            if let Some(confinement) = p["confinement"].as_str() {
                let class = if confinement.starts_with("NO SANDBOX") {
                    "note bad"
                } else {
                    "label"
                };
                out.push_str(&format!(
                    "<p class=\"{class}\">its server runs in: {}</p>",
                    line(confinement)
                ));
            }
            let annotations = lines("annotations");
            if !annotations.is_empty() {
                out.push_str(&format!(
                    "<ul><li>{}</li></ul>",
                    annotations.join("</li><li>")
                ));
            }
            out.push_str(&format!(
                "<p class=\"label\">arguments:</p><pre>{}</pre>",
                lines("arguments").join("\n")
            ));
            match p["change"]["kind"].as_str() {
                Some("diff") => out.push_str(&diff(&p["change"])),
                Some("error") => out.push_str(&format!(
                    "<p class=\"label\">no diff: {}</p>",
                    line(p["change"]["message"].as_str().unwrap_or(""))
                )),
                _ => {}
            }
            out
        }
        _ => format!(
            "<p class=\"label\">arguments:</p><pre>{}</pre>",
            escape(&visible(&w.canonical))
        ),
    }
}

fn diff(p: &Value) -> String {
    let mut out = format!(
        "<p class=\"label\">change to {} (+{} −{}){}:</p><pre class=\"diff\">",
        line(p["path"].as_str().unwrap_or("")),
        p["added"].as_u64().unwrap_or(0),
        p["removed"].as_u64().unwrap_or(0),
        if p["approximate"].as_bool() == Some(true) {
            ", approximate"
        } else {
            ""
        }
    );
    for l in p["unified"].as_str().unwrap_or("").lines() {
        let class = if l.starts_with("+++") || l.starts_with("---") {
            "head"
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else if l.starts_with("@@") {
            "hunk"
        } else {
            ""
        };
        out.push_str(&format!("<span class=\"{class}\">{}</span>\n", line(l)));
    }
    out.push_str("</pre>");
    out
}

fn command(w: &Waiting, p: &Value) -> String {
    let text = p["command"].as_str().unwrap_or("");
    let mut out = String::new();
    let deciding: Vec<&MarkedPart> = w.parts.iter().filter(|m| m.ruling != "allow").collect();
    if !deciding.is_empty() {
        let n = w.parts.len();
        out.push_str(&format!(
            "<p class=\"label\">{} of {n} part{} {}:</p><ul class=\"parts\">",
            deciding.len(),
            if n == 1 { "" } else { "s" },
            if deciding.len() == 1 { "asks" } else { "ask" }
        ));
        for m in &deciding {
            out.push_str(&format!(
                "<li><b>{}</b>{}</li>",
                line(&m.label),
                if m.why.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", line(&m.why.join("; ")))
                }
            ));
        }
        out.push_str("</ul>");
    }
    out.push_str(&format!(
        "<p class=\"label\">command, in {}:</p><pre class=\"cmd\">{}</pre>",
        line(p["cwd"].as_str().unwrap_or("")),
        marked(text, &deciding)
    ));
    out
}

/// The command, made visible and escaped piece by piece, with each deciding part's range in
/// `<mark>`. A range that is not on character boundaries or overlaps another is not marked.
fn marked(text: &str, parts: &[&MarkedPart]) -> String {
    let mut spans: Vec<(usize, usize, bool)> = parts
        .iter()
        .filter_map(|m| {
            let (a, b) = m.span?;
            (a < b && b <= text.len() && text.is_char_boundary(a) && text.is_char_boundary(b))
                .then_some((a, b, m.ruling == "deny"))
        })
        .collect();
    spans.sort();
    let mut out = String::new();
    let mut at = 0;
    for (a, b, deny) in spans {
        if a < at {
            continue;
        }
        out.push_str(&escape(&visible(&text[at..a])));
        out.push_str(&format!(
            "<mark{}>{}</mark>",
            if deny { " class=\"deny\"" } else { "" },
            escape(&visible(&text[a..b]))
        ));
        at = b;
    }
    out.push_str(&escape(&visible(&text[at..])));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(preview: Value, parts: Vec<MarkedPart>) -> Waiting {
        Waiting {
            code: "ABCD-EFGH".into(),
            digest: "d1".into(),
            session: "s".into(),
            call_id: "c1".into(),
            tool: "bash".into(),
            agent: None,
            risk: "dangerous".into(),
            reasons: vec!["rm deletes files".into()],
            parts,
            preview,
            canonical: "{}".into(),
            created_ms: 0,
            expires_ms: 60_000,
        }
    }

    #[test]
    fn the_asking_part_of_a_command_is_marked_and_the_rest_is_not() {
        let command = "ls && rm -rf build";
        let w = waiting(
            serde_json::json!({"kind": "command", "command": command, "cwd": "/w"}),
            vec![
                MarkedPart {
                    label: "ls".into(),
                    ruling: "allow".into(),
                    span: Some((0, 2)),
                    why: vec![],
                },
                MarkedPart {
                    label: "rm -rf build".into(),
                    ruling: "ask".into(),
                    span: Some((6, 18)),
                    why: vec!["deletes files".into()],
                },
            ],
        );
        let html = requests(&[w], "phone", "tok", 1_000);
        assert!(
            html.contains("ls &amp;&amp; <mark>rm -rf build</mark>"),
            "{html}"
        );
        assert!(html.contains("1 of 2 parts asks"));
    }

    #[test]
    fn control_bidi_and_zero_width_characters_are_shown_not_obeyed() {
        let command = "echo \u{202e}txt.exe\u{200b} \u{1b}[2J";
        let w = waiting(
            serde_json::json!({"kind": "command", "command": command, "cwd": "/w"}),
            vec![],
        );
        let html = requests(&[w], "phone", "tok", 1_000);
        for hidden in ['\u{202e}', '\u{200b}', '\u{1b}'] {
            assert!(!html.contains(hidden), "{hidden:?} reached the page");
        }
        assert!(html.contains(&escape(&visible(command))));
    }

    #[test]
    fn markup_from_the_model_is_text_on_the_page() {
        let w = waiting(
            serde_json::json!({"kind": "diff", "path": "<script>", "unified": "+<img src=x onerror=alert(1)>", "added": 1, "removed": 0, "approximate": false}),
            vec![],
        );
        let html = requests(&[w], "<b>me</b>", "tok", 1_000);
        assert!(!html.contains("<img"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("&lt;b&gt;me&lt;/b&gt;"));
    }

    #[test]
    fn a_span_off_a_character_boundary_is_not_marked_and_nothing_panics() {
        let text = "echo é";
        let part = MarkedPart {
            label: "x".into(),
            ruling: "ask".into(),
            span: Some((5, 6)),
            why: vec![],
        };
        assert_eq!(marked(text, &[&part]), "echo é");
    }
}
