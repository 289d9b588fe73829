//! Approving from another device, end to end: the real binary runs `exec --approvals remote`,
//! and headless Chromium (through ChromeDriver, at a phone's size) pairs with the token the run
//! printed and answers on the page the run serves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod common;

use std::time::Duration;

use browser::{Browser, png};
use common::World;
use common::page::PageRun;

const WRITE: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "write_file", "args": {"path": "calc.py", "content": "def sub(a, b):\n    return a - b\n"}}]},
    {"say": "done", "expect": ["ok"]}
]}"#;

const COMMAND: &str = r#"{"name": "p", "prompt": "go", "steps": [
    {"calls": [{"tool": "bash", "args": {"command": "echo ran >> made.txt"}}]},
    {"say": "understood", "expect": ["denied"], "expect_seen": ["not today"]}
]}"#;

const WAIT: Duration = Duration::from_secs(20);
const PHONE: (u32, u32) = (390, 844);

/// A run waiting at its first request, and a phone-size browser paired with its page, showing
/// the request (`shown`: text it waits for).
async fn paired_on(w: &World, shown: &str) -> (PageRun, Browser) {
    let run = PageRun::start(w, &[]);
    run.wait_for("approval_requested");
    let browser = Browser::start(PHONE.0, PHONE.1).await;
    pair(&browser, &run).await;
    browser.wait_for_text(shown, WAIT).await.unwrap();
    (run, browser)
}

/// Pairs the browser with the run's token, as a person opening the link would.
async fn pair(browser: &Browser, run: &PageRun) {
    browser.goto(&run.pairing).await;
    let name = browser.find("#name").await.unwrap();
    browser.type_into(&name, "test phone").await;
    browser.click(&browser.find("#pair").await.unwrap()).await;
    browser
        .wait_for_text("Paired as test phone", WAIT)
        .await
        .unwrap();
}

/// The first hidden field `name` of the page.
async fn field(browser: &Browser, name: &str) -> String {
    let input = browser.find(&format!("input[name={name}]")).await.unwrap();
    browser.attribute(&input, "value").await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_phone_pairs_sees_the_diff_of_a_waiting_write_approves_it_and_exactly_that_is_written() {
    let w = World::new(WRITE);
    let run = PageRun::start(&w, &[]);
    run.wait_for("approval_requested");
    let browser = Browser::start(PHONE.0, PHONE.1).await;
    pair(&browser, &run).await;
    let page = browser
        .wait_for_text("+    return a - b", WAIT)
        .await
        .unwrap();
    assert!(page.contains("-return a - b"), "{page}");
    assert!(
        page.contains("write_file") && page.contains("calc.py"),
        "{page}"
    );
    // The session cookie is out of the page's reach and never sent from another site.
    let cookies = browser.cookies().await;
    let cookie = &cookies.as_array().unwrap()[0];
    assert_eq!(cookie["httpOnly"], true);
    assert_eq!(cookie["sameSite"], "Strict");
    // The phone-size screenshot, with what changes from run to run (session, age) held still.
    browser
        .execute(
            "document.querySelectorAll('.req .meta').forEach(m => m.textContent = \
             'call c1 · main agent · session exec-0 · waiting 3 s · expires in 29 min')",
            vec![],
        )
        .await;
    let shot = browser.screenshot().await;
    let snapshot = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/remote_page_phone.png");
    png::check_snapshot(&snapshot, &shot, 0.01).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.path("ws/calc.py")).unwrap(),
        "return a - b\n",
        "nothing is written before the answer"
    );
    browser
        .click(&browser.find("button.allow").await.unwrap())
        .await;
    browser
        .wait_for_text("Allowed c1 once", WAIT)
        .await
        .unwrap();
    let settled = run.wait_for("approval_settled");
    assert_eq!(settled["by"], "on paired device test phone");
    run.wait_for("turn_finished");
    assert_eq!(run.finish(), Some(0));
    assert_eq!(
        std::fs::read_to_string(w.path("ws/calc.py")).unwrap(),
        "def sub(a, b):\n    return a - b\n"
    );
    // The audit names the channel and the device.
    let audit = std::fs::read_dir(w.path("state/audit"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(
        audit.contains(r#""via":{"channel":"page","device":"test phone""#),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denial_with_a_reason_given_on_the_page_reaches_the_model() {
    let w = World::new(COMMAND);
    let (run, browser) = paired_on(&w, "echo ran >> made.txt").await;
    let reason = browser.find("input[name=reason]").await.unwrap();
    browser.type_into(&reason, "not today").await;
    browser
        .click(&browser.find("button.deny").await.unwrap())
        .await;
    browser.wait_for_text("Denied c1", WAIT).await.unwrap();
    let denied = run.wait_for("tool_denied");
    assert_eq!(denied["message"], "denied by the user: not today");
    // The scenario's next step checks the model was told the reason.
    let finished = run.wait_for("turn_finished");
    assert_eq!(finished["outcome"], "completed", "{finished}");
    assert_eq!(run.finish(), Some(0));
    assert!(!w.path("ws/made.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_for_a_stale_digest_is_refused_and_the_request_still_waits() {
    let w = World::new(COMMAND);
    let (run, browser) = paired_on(&w, "echo ran >> made.txt").await;
    // The page as it was for another version of the call.
    browser
        .execute(
            "document.querySelectorAll('input[name=digest]').forEach(i => i.value = '0'.repeat(64))",
            vec![],
        )
        .await;
    browser
        .click(&browser.find("button.allow").await.unwrap())
        .await;
    browser
        .wait_for_text("no longer the one this page showed", WAIT)
        .await
        .unwrap();
    assert!(!w.path("ws/made.txt").exists());
    // Reloaded, it is still there to answer.
    browser.goto(&format!("{}/", run.origin)).await;
    browser
        .wait_for_text("echo ran >> made.txt", WAIT)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_used_pairing_link_and_an_expired_one_are_refused() {
    let w = World::new(COMMAND);
    let run = PageRun::start(&w, &[]);
    let browser = Browser::start(PHONE.0, PHONE.1).await;
    pair(&browser, &run).await;
    browser.goto(&run.pairing).await;
    browser.wait_for_text("already used", WAIT).await.unwrap();
    drop(run);
    let w = World::new(COMMAND);
    let run = PageRun::start(&w, &[("AIRLOCK_PAIRING_TTL_MS", "300")]);
    std::thread::sleep(Duration::from_millis(400));
    let fresh = Browser::start(PHONE.0, PHONE.1).await;
    fresh.goto(&run.pairing).await;
    fresh.wait_for_text("expired", WAIT).await.unwrap();
    fresh.goto(&format!("{}/", run.origin)).await;
    fresh.wait_for_text("not paired", WAIT).await.unwrap();
}

/// A page on another origin that posts a complete answer (code, digest, even the form token,
/// as if they leaked) to the approval page.
async fn serve_forgery(origin: &str, code: &str, digest: &str, token: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let page = format!(
        "<!doctype html><html><body><form method=\"post\" action=\"{origin}/answer\">\
         <input type=\"hidden\" name=\"code\" value=\"{code}\"><input type=\"hidden\" name=\"digest\" value=\"{digest}\">\
         <input type=\"hidden\" name=\"form_token\" value=\"{token}\"><input type=\"hidden\" name=\"decision\" value=\"allow\">\
         <button id=\"go\" type=\"submit\">win a prize</button></form></body></html>"
    );
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        }
    });
    format!("http://{address}/")
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_without_the_cookie_from_another_origin_or_with_a_wrong_form_token_are_refused() {
    let w = World::new(COMMAND);
    let (run, browser) = paired_on(&w, "echo ran >> made.txt").await;
    let (code, digest, token) = (
        field(&browser, "code").await,
        field(&browser, "digest").await,
        field(&browser, "form_token").await,
    );
    // In the same browser (paired), a page from another origin submits a complete answer.
    let evil = serve_forgery(&run.origin, &code, &digest, &token).await;
    browser.goto(&evil).await;
    browser.click(&browser.find("#go").await.unwrap()).await;
    browser
        .wait_for_text("came from another site", WAIT)
        .await
        .unwrap();
    // Outside any browser: no cookie; the device's cookie with a wrong form token.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let answer = format!("{}/answer", run.origin);
    let fields =
        |token: &str| format!("code={code}&digest={digest}&form_token={token}&decision=allow");
    let no_cookie = client
        .post(&answer)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(fields(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(no_cookie.status(), 401);
    let cookies = browser.cookies().await;
    let cookie = format!("airlock_device={}", cookies[0]["value"].as_str().unwrap());
    let forged = client
        .post(&answer)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", &cookie)
        .body(fields(&"0".repeat(64)))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    // Still waiting, nothing ran: the real page still offers it.
    assert!(!w.path("ws/made.txt").exists());
    browser.goto(&format!("{}/", run.origin)).await;
    browser
        .wait_for_text("echo ran >> made.txt", WAIT)
        .await
        .unwrap();
}
