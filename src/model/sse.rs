//! Server-sent events, parsed incrementally from bytes as they arrive. Hand-written: the format
//! is four rules (fields `event` and `data`, comments, blank line dispatches, any line ending),
//! and this is smaller than a dependency that would bring its own stream types.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// A `\r` ended the last chunk; a `\n` at the start of the next one belongs to it.
    pending_cr: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if self.pending_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.pending_cr = false;
        self.buffer.extend_from_slice(bytes);
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let line: Vec<u8> = self.buffer[..end].to_vec();
            let mut consumed = end + 1;
            if self.buffer[end] == b'\r' {
                match self.buffer.get(end + 1) {
                    Some(b'\n') => consumed += 1,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            self.buffer.drain(..consumed);
            self.line(&String::from_utf8_lossy(&line), &mut out);
        }
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: self.data.join("\n"),
                });
                self.data.clear();
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => self.data.push(value.to_string()),
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_across_chunks_come_out_whole() {
        let stream = b"event: a\ndata: one\ndata: two\n\n: comment\r\ndata:{\"x\":1}\r\n\r\n";
        for split in 0..stream.len() {
            let mut p = SseParser::new();
            let mut events = p.push(&stream[..split]);
            events.extend(p.push(&stream[split..]));
            assert_eq!(
                events,
                vec![
                    SseEvent {
                        event: Some("a".into()),
                        data: "one\ntwo".into()
                    },
                    SseEvent {
                        event: None,
                        data: "{\"x\":1}".into()
                    },
                ],
                "split at {split}"
            );
        }
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let mut p = SseParser::new();
        assert_eq!(p.push(b"data: x\r\r").len(), 1);
    }
}
