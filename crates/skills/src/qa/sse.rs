//! Server-Sent Events, as a streamed chat completion arrives: bytes in (split anywhere, as TCP
//! delivers them), events out.
//!
//! Lines end with LF, CRLF or CR; a blank line ends an event; `data:` lines of one event are
//! joined with newlines; comments (keep-alives) and other fields are skipped, except `event`,
//! whose name is kept. A line or an event over the cap is refused rather than buffered, so a
//! backend cannot make the reader's memory grow without bound.

/// One event: its `event:` name (if any) and its data lines, joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub name: Option<String>,
    pub data: String,
}

/// Why the bytes are not an event stream this reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SseError {
    /// A line, or the data of one event, is longer than the cap.
    TooLong,
    /// A line is not UTF-8.
    NotText,
}

/// Reads events from bytes given in any pieces.
pub(crate) struct SseReader {
    max_bytes: usize,
    /// The line read so far.
    line: Vec<u8>,
    /// The last line ended with CR: an LF right after it belongs to it.
    after_cr: bool,
    name: Option<String>,
    data: Option<String>,
}

impl SseReader {
    /// A reader that refuses lines and events over `max_bytes`.
    pub(crate) fn new(max_bytes: usize) -> SseReader {
        SseReader {
            max_bytes,
            line: Vec::new(),
            after_cr: false,
            name: None,
            data: None,
        }
    }

    /// Reads `bytes`, appending the events they complete to `events`.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        events: &mut Vec<SseEvent>,
    ) -> Result<(), SseError> {
        if bytes.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.after_cr)
            && let Some(rest) = bytes.strip_prefix(b"\n")
        {
            bytes = rest;
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&bytes[..end])?;
            let line = std::mem::take(&mut self.line);
            self.read_line(&line, events)?;
            let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
            if bytes[end] == b'\r' && end + 1 == bytes.len() {
                self.after_cr = true;
            }
            bytes = &bytes[end + if crlf { 2 } else { 1 }..];
        }
        self.extend_line(bytes)
    }

    /// The end of the stream: an event whose closing blank line never came is still given,
    /// but a line cut short is not (its end may be missing).
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        let name = self.name.take();
        self.data.take().map(|data| SseEvent { name, data })
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.max_bytes {
            return Err(SseError::TooLong);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn read_line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                events.push(SseEvent {
                    name: self.name.take(),
                    data,
                });
            }
            self.name = None;
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotText)?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    if data.len() + 1 + value.len() > self.max_bytes {
                        return Err(SseError::TooLong);
                    }
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.name = Some(value.to_string()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_in_pieces(stream: &[u8], piece: usize) -> Result<Vec<SseEvent>, SseError> {
        let mut reader = SseReader::new(64);
        let mut events = Vec::new();
        for bytes in stream.chunks(piece) {
            reader.feed(bytes, &mut events)?;
        }
        events.extend(reader.finish());
        Ok(events)
    }

    fn data(event: &SseEvent) -> &str {
        &event.data
    }

    #[test]
    fn events_are_the_same_however_the_bytes_are_split() {
        let stream = ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\ndata: one\ndata:two\n\nevent: error\rdata: é\r\rid: 7\nretry: 10\n\ndata: [DONE]\n\n";
        for piece in 1..=stream.len() {
            let events = read_in_pieces(stream.as_bytes(), piece).unwrap();
            let texts: Vec<&str> = events.iter().map(data).collect();
            assert_eq!(texts, ["{\"a\":1}", "one\ntwo", "é", "[DONE]"], "{piece}");
            assert_eq!(events[2].name.as_deref(), Some("error"));
            assert_eq!(events[0].name, None);
        }
    }

    #[test]
    fn an_empty_data_line_is_an_event_with_empty_data() {
        let events = read_in_pieces(b"data:\n\ndata\n\n", 3).unwrap();
        let texts: Vec<&str> = events.iter().map(data).collect();
        assert_eq!(texts, ["", ""]);
        let events = read_in_pieces(b"data\ndata\n\n", 5).unwrap();
        assert_eq!(events[0].data, "\n");
    }

    #[test]
    fn an_event_without_its_blank_line_is_kept_but_a_cut_line_is_not() {
        let events = read_in_pieces(b"data: last\n", 4).unwrap();
        assert_eq!(events[0].data, "last");
        assert!(read_in_pieces(b"data: cut", 4).unwrap().is_empty());
    }

    #[test]
    fn a_long_line_or_event_is_refused() {
        let long = format!("data: {}\n\n", "x".repeat(100));
        assert_eq!(read_in_pieces(long.as_bytes(), 7), Err(SseError::TooLong));
        let no_newline = "y".repeat(100);
        assert_eq!(
            read_in_pieces(no_newline.as_bytes(), 1),
            Err(SseError::TooLong)
        );
        let many_lines = "data: 0123456789\n".repeat(10);
        assert_eq!(
            read_in_pieces(many_lines.as_bytes(), 5),
            Err(SseError::TooLong)
        );
        let comments = ": ping\n".repeat(100);
        assert!(read_in_pieces(comments.as_bytes(), 3).unwrap().is_empty());
    }

    #[test]
    fn a_line_that_is_not_text_is_refused() {
        assert_eq!(
            read_in_pieces(b"data: \xff\xfe\n\n", 2),
            Err(SseError::NotText)
        );
    }
}
