//! The nudge: when a request starts waiting, one HTTP POST to a push service in the style of
//! ntfy (`notify_url` under [remote]). It says that an approval waits and links to the page,
//! nothing more: no command, path, file content or code travels through a service the person
//! does not run. Woken by the state directory's writes, not a timer.

use std::sync::Arc;
use std::time::Duration;

use super::http::Shared;

/// What the push says, whole.
pub const MESSAGE: &str =
    "An approval request waits for your answer in airlock. Open the page to see it.";

/// Nudges at most this often (a batch of requests is one nudge).
const AT_MOST_EVERY: Duration = Duration::from_secs(10);

/// How soon the nudge reads again when the state database could not be read (busy, or not
/// made yet): a change it was woken for is not lost to a read that failed.
const READ_AGAIN: Duration = Duration::from_millis(500);

pub async fn run(url: String, page: String, shared: Arc<Shared>) {
    // Where the kernel gives no inotify watch (its per-user limit reached), the nudge looks
    // every few seconds instead of never.
    let watch = shared
        .db_dir()
        .and_then(|d| crate::store::watch::DirWatch::new(&d));
    // reqwest is built without a crypto provider of its own: ring, as for the model's HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // No redirect is followed: one elsewhere would carry the page's link (and the topic's
    // address, as the referrer) to a host the person never named.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build();
    let Ok(client) = client else {
        return;
    };
    let mut seen: Vec<i64> = Vec::new();
    let mut last: Option<tokio::time::Instant> = None;
    loop {
        let look = shared.clone();
        let read = tokio::task::spawn_blocking(move || look.waiting_ids())
            .await
            .ok()
            .and_then(Result::ok);
        let Some(ids) = read else {
            tokio::time::sleep(READ_AGAIN).await;
            continue;
        };
        let new = ids.iter().any(|id| !seen.contains(id));
        seen = ids;
        if new {
            if let Some(last) = last {
                tokio::time::sleep_until(last + AT_MOST_EVERY).await;
            }
            last = Some(tokio::time::Instant::now());
            let _ = client
                .post(&url)
                .header("Title", "airlock: an approval waits")
                .header("Click", &page)
                .header("Tags", "lock")
                .body(MESSAGE)
                .send()
                .await;
        }
        match &watch {
            Some(watch) => watch.changed().await,
            None => tokio::time::sleep(crate::store::watch::LONGEST_WAIT).await,
        }
    }
}
