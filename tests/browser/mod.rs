//! A small WebDriver harness: Debian's headless Chromium driven through ChromeDriver, for tests
//! that look at a page as a person would (click, type, read, screenshot).
//!
//! Use it from a test file as `mod browser;`. Every `Browser` starts its own ChromeDriver on a
//! free loopback port and its own Chromium with a fresh, empty profile; dropping the `Browser`
//! ends the session and both processes.
//!
//! Methods whose failure a test may want to see (`find`, `wait_for`, `wait_for_text`,
//! `command`) return `Result<_, String>`; the rest panic with the WebDriver error and message,
//! which is what a test would do with the error anyway.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod png;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The key under which WebDriver names an element (W3C).
pub const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long ChromeDriver gets to answer `GET /status` with `ready: true`.
const STARTUP: Duration = Duration::from_secs(20);
/// How long one WebDriver request may take (a page load included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A headless Chromium, its ChromeDriver and one WebDriver session.
pub struct Browser {
    driver: Child,
    port: u16,
    base: String,
    session: String,
    /// The browser's own process id, as ChromeDriver reported it; killed on drop only when the
    /// session could not be deleted.
    browser_pid: Option<i32>,
    http: reqwest::Client,
    /// Holds the profile (`profile/`) and ChromeDriver's log (`chromedriver.log`).
    dir: tempfile::TempDir,
    width: u32,
    height: u32,
}

/// Same as [`Browser::start`].
pub async fn start(width: u32, height: u32) -> Browser {
    Browser::start(width, height).await
}

/// An argument for [`Browser::execute`] that the script receives as the DOM element.
pub fn element_arg(element: &str) -> Value {
    json!({ ELEMENT_KEY: element })
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium whose viewport (`window.innerWidth` x
    /// `window.innerHeight`) is exactly `width` x `height` CSS pixels at device scale 1.
    pub async fn start(width: u32, height: u32) -> Browser {
        for binary in [CHROMEDRIVER, CHROMIUM] {
            assert!(
                std::path::Path::new(binary).exists(),
                "{binary} is missing: browser tests need Debian's headless Chromium and its \
                 driver (apt-get install chromium chromium-driver)"
            );
        }
        let dir = tempfile::tempdir().expect("a temp dir for the browser");
        let profile = dir.path().join("profile");
        std::fs::create_dir(&profile).expect("the browser's profile dir");
        let log_path = dir.path().join("chromedriver.log");
        let log = std::fs::File::create(&log_path).expect("chromedriver's log file");
        let log2 = log.try_clone().expect("chromedriver's log file");

        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));

        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .no_proxy()
            .tls_certs_only(std::iter::empty())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .expect("the WebDriver HTTP client");

        let mut browser = Browser {
            driver,
            port,
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            browser_pid: None,
            http,
            dir,
            width,
            height,
        };
        browser.wait_until_ready(&log_path).await;

        let args = [
            "--headless".to_string(),
            "--no-sandbox".to_string(),
            "--disable-gpu".to_string(),
            "--disable-quic".to_string(),
            "--no-first-run".to_string(),
            "--disable-background-networking".to_string(),
            "--disable-component-update".to_string(),
            "--disable-sync".to_string(),
            "--disable-dev-shm-usage".to_string(),
            "--force-device-scale-factor=1".to_string(),
            "--hide-scrollbars".to_string(),
            "--font-render-hinting=none".to_string(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
                }
            }
        });
        let created = browser
            .request(Method::POST, "/session", Some(capabilities))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "ChromeDriver could not start Chromium: {e}\n--- chromedriver.log ---\n{}",
                    tail(&log_path)
                )
            });
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("a new session without an id: {created}"))
            .to_string();
        browser.browser_pid = created["capabilities"]["goog:processID"]
            .as_i64()
            .and_then(|p| i32::try_from(p).ok());
        browser.size_viewport().await;
        browser
    }

    async fn wait_until_ready(&mut self, log_path: &std::path::Path) {
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Ok(Some(status)) = self.driver.try_wait() {
                panic!(
                    "{CHROMEDRIVER} exited at start ({status})\n--- chromedriver.log ---\n{}",
                    tail(log_path)
                );
            }
            let last = match self.request(Method::GET, "/status", None).await {
                Ok(v) if v["ready"] == json!(true) => return,
                Ok(v) => v.to_string(),
                Err(e) => e,
            };
            assert!(
                Instant::now() < deadline,
                "{CHROMEDRIVER} on port {} was not ready within {STARTUP:?}: {last}\n\
                 --- chromedriver.log ---\n{}",
                self.port,
                tail(log_path)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Headless Chromium counts browser chrome in the window's height (and will not open a
    /// window narrower than 500 px from `--window-size`), so the window is resized until the
    /// viewport itself has the size asked for.
    async fn size_viewport(&self) {
        let (want_w, want_h) = (i64::from(self.width), i64::from(self.height));
        let (mut outer_w, mut outer_h) = (want_w, want_h);
        let mut seen = Vec::new();
        for _ in 0..6 {
            self.command(
                Method::POST,
                "/window/rect",
                Some(json!({ "width": outer_w, "height": outer_h })),
            )
            .await
            .unwrap_or_else(|e| panic!("cannot resize the window to {outer_w}x{outer_h}: {e}"));
            let (w, h) = self.viewport().await;
            if (w, h) == (self.width, self.height) {
                return;
            }
            seen.push(format!("window {outer_w}x{outer_h} gave viewport {w}x{h}"));
            outer_w = (outer_w + want_w - i64::from(w)).max(1);
            outer_h = (outer_h + want_h - i64::from(h)).max(1);
        }
        panic!(
            "cannot make the viewport {}x{}: {}",
            self.width,
            self.height,
            seen.join("; ")
        );
    }

    /// `window.innerWidth` and `window.innerHeight`.
    pub async fn viewport(&self) -> (u32, u32) {
        let v = self
            .execute("return [window.innerWidth, window.innerHeight];", vec![])
            .await;
        let dim = |i: usize| {
            v[i].as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_else(|| panic!("the viewport is not two numbers: {v}"))
        };
        (dim(0), dim(1))
    }

    /// The viewport size asked for at start.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Where ChromeDriver writes its log (useful in a failing test's message).
    pub fn driver_log(&self) -> PathBuf {
        self.dir.path().join("chromedriver.log")
    }

    /// One request to ChromeDriver at `path` (from its root). The answer's `value`, or the
    /// WebDriver error and message.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let what = format!("{method} {path}");
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if method == Method::POST {
            req = req.json(&body.unwrap_or_else(|| json!({})));
        }
        let resp = req.send().await.map_err(|e| format!("{what}: {e}"))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| format!("{what}: {e}"))?;
        let parsed: Value = serde_json::from_str(&text).map_err(|e| {
            format!("{what}: HTTP {status} with a body that is not JSON ({e}): {text}")
        })?;
        let value = parsed.get("value").cloned().unwrap_or(Value::Null);
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            let message = value.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(format!("{what}: {error}: {message}"));
        }
        if !status.is_success() {
            return Err(format!("{what}: HTTP {status}: {text}"));
        }
        Ok(value)
    }

    /// One command in this session: `path` is relative to `/session/{id}` (e.g. `/url`).
    pub async fn command(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        self.request(method, &format!("/session/{}{path}", self.session), body)
            .await
    }

    async fn must(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        self.command(method, path, body)
            .await
            .unwrap_or_else(|e| panic!("WebDriver: {e}"))
    }

    /// Loads `url` and waits for the page load (WebDriver's normal page-load strategy).
    pub async fn goto(&self, url: &str) {
        self.must(Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    pub async fn current_url(&self) -> String {
        let v = self.must(Method::GET, "/url", None).await;
        v.as_str()
            .unwrap_or_else(|| panic!("the URL is not a string: {v}"))
            .to_string()
    }

    /// The first element matching the CSS selector, or the WebDriver error (`no such element`).
    pub async fn find(&self, css: &str) -> Result<String, String> {
        let v = self
            .command(
                Method::POST,
                "/element",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await?;
        element_id(&v).ok_or_else(|| format!("not an element: {v}"))
    }

    /// Every element matching the CSS selector, in document order (none is not an error).
    pub async fn find_all(&self, css: &str) -> Vec<String> {
        let v = self
            .must(
                Method::POST,
                "/elements",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await;
        v.as_array()
            .unwrap_or_else(|| panic!("the elements are not a list: {v}"))
            .iter()
            .map(|e| element_id(e).unwrap_or_else(|| panic!("not an element: {e}")))
            .collect()
    }

    /// Polls for an element matching `css` every 100 ms.
    pub async fn wait_for(&self, css: &str, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let err = match self.find(css).await {
                Ok(id) => return Ok(id),
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                return Err(format!("no {css} within {timeout:?}: {err}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn click(&self, element: &str) {
        self.must(Method::POST, &format!("/element/{element}/click"), None)
            .await;
    }

    /// Types `text` into the element (WebDriver's Element Send Keys).
    pub async fn type_into(&self, element: &str, text: &str) {
        self.must(
            Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        )
        .await;
    }

    pub async fn clear(&self, element: &str) {
        self.must(Method::POST, &format!("/element/{element}/clear"), None)
            .await;
    }

    /// The element's rendered text.
    pub async fn text(&self, element: &str) -> String {
        let v = self
            .must(Method::GET, &format!("/element/{element}/text"), None)
            .await;
        v.as_str().unwrap_or_default().to_string()
    }

    /// The element's attribute, `None` when it has none.
    pub async fn attribute(&self, element: &str, name: &str) -> Option<String> {
        let v = self
            .must(
                Method::GET,
                &format!("/element/{element}/attribute/{name}"),
                None,
            )
            .await;
        v.as_str().map(str::to_string)
    }

    /// `document.body.innerText` (empty while there is no body).
    pub async fn body_text(&self) -> String {
        self.try_body_text()
            .await
            .unwrap_or_else(|e| panic!("WebDriver: {e}"))
    }

    async fn try_body_text(&self) -> Result<String, String> {
        let v = self
            .command(
                Method::POST,
                "/execute/sync",
                Some(json!({
                    "script": "return document.body ? document.body.innerText : '';",
                    "args": [],
                })),
            )
            .await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    /// Runs `script` as a function body (`arguments[i]` are `args`; use [`element_arg`] for an
    /// element) and returns what it returns.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.must(
            Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .await
    }

    /// Polls the body's text every 100 ms until it contains `needle`; the text then, or the
    /// last text seen. A page that is between documents is retried, not an error.
    pub async fn wait_for_text(&self, needle: &str, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.try_body_text().await {
                Ok(text) if text.contains(needle) => return Ok(text),
                Ok(text) => text,
                Err(e) => format!("(no text: {e})"),
            };
            if Instant::now() >= deadline {
                return Err(format!(
                    "{needle:?} did not appear within {timeout:?}; the page's text was:\n{last}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Vec<u8> {
        let v = self.must(Method::GET, "/screenshot", None).await;
        let b64 = v
            .as_str()
            .unwrap_or_else(|| panic!("the screenshot is not a string: {v}"));
        base64_decode(b64).unwrap_or_else(|e| panic!("the screenshot is not base64: {e}"))
    }

    /// Every cookie the page can see, as WebDriver lists them (`name`, `value`, `httpOnly`,
    /// `sameSite`, `secure`, `path`, ...).
    pub async fn cookies(&self) -> Value {
        self.must(Method::GET, "/cookie", None).await
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let deleted = !self.session.is_empty() && self.delete_session_blocking().is_ok();
        if !deleted && let Some(pid) = self.browser_pid.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    /// `DELETE /session/{id}` over a plain blocking socket: a drop may happen outside any
    /// runtime, or inside one that is shutting down.
    fn delete_session_blocking(&self) -> Result<(), String> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let mut stream =
            TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let req = format!(
            "DELETE /session/{} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n",
            self.session, self.port
        );
        stream
            .write_all(req.as_bytes())
            .map_err(|e| e.to_string())?;
        // ChromeDriver keeps the connection open whatever `Connection: close` says: read the
        // status line and headers, and stop there.
        let mut answer = Vec::new();
        let mut chunk = [0u8; 1024];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
        }
        if answer.starts_with(b"HTTP/1.1 200") {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&answer).into_owned())
        }
    }
}

fn element_id(v: &Value) -> Option<String> {
    v.get(ELEMENT_KEY)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("the port's address").port()
}

/// The last lines of a log file, for a panic message.
fn tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Standard base64 (RFC 4648, `+/`, padded or not); whitespace is skipped.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in text.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return Err(format!("byte {c:#04x} at {i} is not base64")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}
