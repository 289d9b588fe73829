//! The inbox in the loop: a request parked elsewhere shows when the state changes, and leaves
//! when it expires though nothing was written.

use super::*;

/// A parked run's `make`, waiting elsewhere until `expires_ms`.
fn parked_make(expires_ms: u64) -> crate::protocol::InboxEntry {
    crate::protocol::InboxEntry {
        id: 1,
        session: "exec-1".into(),
        call_id: "c1".into(),
        tool: "bash".into(),
        agent: None,
        risk: "mutating".into(),
        reasons: Vec::new(),
        preview: vec!["$ make".into()],
        created_ms: 0,
        expires_ms,
        parked: true,
    }
}

/// An inbox whose changes the test announces.
struct Announced {
    entries: Mutex<Vec<crate::protocol::InboxEntry>>,
    changed: Arc<tokio::sync::Notify>,
}

impl crate::protocol::InboxSource for Announced {
    fn list(&self) -> Result<Vec<crate::protocol::InboxEntry>, String> {
        Ok(self.entries.lock().unwrap().clone())
    }

    fn answer(&self, _: i64, _: bool, _: Option<String>) -> Result<String, String> {
        Err("not here".into())
    }

    fn changes(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let changed = self.changed.clone();
        Box::pin(async move { changed.notified().await })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_parked_elsewhere_shows_in_the_status_bar_when_the_state_changes() {
    let source = Arc::new(Announced {
        entries: Mutex::new(Vec::new()),
        changed: Arc::new(tokio::sync::Notify::new()),
    });
    let mut cockpit = Cockpit::streaming_with(Some(source.clone())).await;
    source.entries.lock().unwrap().push(parked_make(u64::MAX));
    source.changed.notify_one();
    cockpit
        .frame_where(|f| f.screen.contains("1 waiting elsewhere (F4)"))
        .await;
    cockpit.stop().await;
}

/// An inbox that drops what expired when it is read, as the state database does, and never
/// announces a change.
struct Expiring(
    Mutex<Vec<crate::protocol::InboxEntry>>,
    Arc<tokio::sync::Notify>,
);

impl crate::protocol::InboxSource for Expiring {
    fn list(&self) -> Result<Vec<crate::protocol::InboxEntry>, String> {
        let now = crate::clock::now_ms();
        Ok(self
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.expires_ms > now)
            .cloned()
            .collect())
    }

    fn answer(&self, _: i64, _: bool, _: Option<String>) -> Result<String, String> {
        Err("not here".into())
    }

    fn changes(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let changed = self.1.clone();
        Box::pin(async move { changed.notified().await })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_elsewhere_leaves_the_status_bar_when_it_expires_though_nothing_was_written()
 {
    let source = Arc::new(Expiring(
        Mutex::new(Vec::new()),
        Arc::new(tokio::sync::Notify::new()),
    ));
    let mut cockpit = Cockpit::streaming_with(Some(source.clone())).await;
    source
        .0
        .lock()
        .unwrap()
        .push(parked_make(crate::clock::now_ms() + 1_500));
    source.1.notify_one();
    cockpit
        .frame_where(|f| f.screen.contains("1 waiting elsewhere (F4)"))
        .await;
    // No change is announced: the cockpit reads the inbox again when the request expires.
    tokio::time::timeout(
        Duration::from_secs(10),
        cockpit.frame_where(|f| !f.screen.contains("waiting elsewhere")),
    )
    .await
    .expect("the expired request left the status bar");
    cockpit.stop().await;
}
