//! The wall clock, in one place: unix milliseconds for deadlines, grants, records and the
//! cockpit's clock face. Imports nothing of the crate, so every layer may use it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix time in milliseconds.
pub type Millis = u64;

/// Milliseconds since the Unix epoch, by the system clock.
pub fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as Millis)
        .unwrap_or(0)
}
