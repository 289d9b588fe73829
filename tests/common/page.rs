//! A headless run answered on the approval page (`exec --approvals remote`), with its events
//! read as they come; killed when dropped.

use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::Value;

use super::World;

pub struct PageRun {
    child: Child,
    events: Receiver<Value>,
    /// The `remote` event's pairing link and the page's address.
    pub pairing: String,
    pub origin: String,
    /// The page's certificate fingerprint, when it serves TLS.
    pub fingerprint: Option<String>,
}

impl PageRun {
    /// Starts the scenario; returns once the page is up (its `remote` event printed).
    pub fn start(w: &World, env: &[(&str, &str)]) -> PageRun {
        let args = super::exec_args("remote", &[]);
        let mut child = w
            .command(w.dir.path(), &args, env)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(w.path("stderr.txt")).unwrap())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Ok(event) = serde_json::from_str::<Value>(&line)
                    && tx.send(event).is_err()
                {
                    return;
                }
            }
        });
        let mut run = PageRun {
            child,
            events,
            pairing: String::new(),
            origin: String::new(),
            fingerprint: None,
        };
        let remote = run.wait_for("remote");
        run.pairing = remote["pairing_url"].as_str().unwrap().to_string();
        run.origin = remote["origin"].as_str().unwrap().to_string();
        run.fingerprint = remote["fingerprint"].as_str().map(str::to_string);
        run
    }

    /// The next event named `event` (up to 20 s), the ones before it skipped.
    pub fn wait_for(&self, event: &str) -> Value {
        let mut seen = Vec::new();
        loop {
            let got = self
                .events
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no `{event}` event; before it: {seen:?}"));
            if got["event"] == event {
                return got;
            }
            seen.push(got);
        }
    }

    /// Waits for the run to end; its exit status.
    pub fn finish(mut self) -> Option<i32> {
        for _ in 0..400 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the run did not end");
    }
}

impl Drop for PageRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a push service is sent by the nudge, read from `stream` until its message is whole (or
/// the sender stops, or 5 s pass).
#[allow(dead_code)]
pub fn nudge_request(stream: &mut std::net::TcpStream) -> Vec<u8> {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    // Headers and the short body arrive in a write or two.
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&request).contains("Open the page to see it.") {
            break;
        }
    }
    request
}
