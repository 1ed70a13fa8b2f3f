//! What a skill tells its caller while it works: the text of its artifact, piece by piece, so
//! that a streamed answer appears as it is written.
//!
//! The caller owns the channel (a bounded `tokio::sync::mpsc` channel) and its capacity; the
//! skill never waits for room while it works. Text that finds the channel full is kept and sent
//! with the next piece (fewer, larger pieces for a slow reader), so a slow reader costs at most
//! the answer itself, which the skill holds anyway, and never slows the skill's own backend.
//! Only the last piece waits for room. A closed channel (the reader is gone) stops the sending,
//! not the work: the skill still finishes and returns its output.

use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;

use crate::SkillOutput;

/// One event of a skill at work, sent before `run_streaming` returns its output. An enum so
/// that later kinds of event can join without changing the method.
///
/// Events arrive in the order sent. The caller owns the bounded channel and its capacity; the
/// skill never waits for room except for the last piece (text that finds the channel full is
/// joined to the next piece), so the caller must keep receiving until the channel closes, which
/// happens when the call ends. A closed receiver stops the sending, not the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillEvent {
    /// A piece of the text part of the skill's one artifact. The pieces of one call, joined in
    /// the order sent, are exactly the `text` of the [`SkillOutput`] the call returns.
    ArtifactText {
        /// The artifact's name, as [`SkillOutput::artifact_name`] will be, so that the first
        /// piece can create the artifact.
        artifact_name: &'static str,
        /// The text of this piece; the last piece's may be empty.
        text: String,
        /// `false` on the first piece (it starts the artifact), `true` on the others (they
        /// extend it): the A2A `append` flag.
        append: bool,
        /// `true` on the last piece only: the A2A `lastChunk` flag. A call that fails sends no
        /// last piece.
        last_chunk: bool,
    },
}

/// Sends one artifact's text in pieces without ever waiting for the reader, except for the
/// last piece (see the module documentation).
pub(crate) struct ChunkSender {
    events: Sender<SkillEvent>,
    pieces: Pieces,
    /// The reader is gone: nothing more is sent.
    closed: bool,
}

/// The text not sent yet, and what the next piece must say.
struct Pieces {
    artifact_name: &'static str,
    /// Text not sent yet because the channel was full.
    pending: String,
    /// Whether a piece has been sent, so that the next one appends.
    started: bool,
}

impl Pieces {
    fn take(&mut self, last_chunk: bool) -> SkillEvent {
        let append = std::mem::replace(&mut self.started, true);
        SkillEvent::ArtifactText {
            artifact_name: self.artifact_name,
            text: std::mem::take(&mut self.pending),
            append,
            last_chunk,
        }
    }
}

impl ChunkSender {
    /// A sender of the artifact `artifact_name` over `events`.
    pub(crate) fn new(events: Sender<SkillEvent>, artifact_name: &'static str) -> ChunkSender {
        ChunkSender {
            events,
            pieces: Pieces {
                artifact_name,
                pending: String::new(),
                started: false,
            },
            closed: false,
        }
    }

    /// Sends `text` now if the channel has room; otherwise keeps it for the next piece.
    pub(crate) fn push(&mut self, text: &str) {
        if self.closed || text.is_empty() {
            return;
        }
        self.pieces.pending.push_str(text);
        match self.events.try_reserve() {
            Ok(permit) => permit.send(self.pieces.take(false)),
            Err(TrySendError::Full(())) => {}
            Err(TrySendError::Closed(())) => {
                self.closed = true;
                self.pieces.pending = String::new();
            }
        }
    }

    /// Resolves once the text kept back has been sent (or the reader is gone); never resolves
    /// while nothing is kept back. Cancel-safe: meant for a `select!` beside the skill's work,
    /// so that kept-back text leaves as soon as the reader makes room.
    pub(crate) async fn flushed(&mut self) {
        if self.closed || self.pieces.pending.is_empty() {
            return std::future::pending().await;
        }
        match self.events.reserve().await {
            Ok(permit) => permit.send(self.pieces.take(false)),
            Err(_) => {
                self.closed = true;
                self.pieces.pending = String::new();
            }
        }
    }

    /// Sends the kept-back text and `tail` as the last piece, waiting for room.
    pub(crate) async fn finish(mut self, tail: &str) {
        if self.closed {
            return;
        }
        self.pieces.pending.push_str(tail);
        let last = self.pieces.take(true);
        // A reader that left meanwhile has nothing to receive: the output is returned anyway.
        let _ = self.events.send(last).await;
    }
}

/// Sends a finished output's whole text as one last piece: the streaming of a skill that has
/// nothing to say before it is done.
pub(crate) async fn send_whole(events: Sender<SkillEvent>, output: &SkillOutput) {
    ChunkSender::new(events, output.artifact_name)
        .finish(&output.text)
        .await;
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    fn text_of(event: &SkillEvent) -> (&str, bool, bool) {
        let SkillEvent::ArtifactText {
            text,
            append,
            last_chunk,
            ..
        } = event;
        (text, *append, *last_chunk)
    }

    #[tokio::test]
    async fn a_full_channel_gets_the_text_kept_back_in_one_later_piece() {
        let (events, mut reader) = mpsc::channel(1);
        let mut sender = ChunkSender::new(events, "answer");
        sender.push("a");
        sender.push("b");
        sender.push("c");
        assert_eq!(text_of(&reader.recv().await.unwrap()), ("a", false, false));
        sender.flushed().await;
        assert_eq!(text_of(&reader.recv().await.unwrap()), ("bc", true, false));
        sender.push("d");
        assert_eq!(text_of(&reader.recv().await.unwrap()), ("d", true, false));
        sender.finish("!").await;
        assert_eq!(text_of(&reader.recv().await.unwrap()), ("!", true, true));
        assert!(
            reader.recv().await.is_none(),
            "the sender is dropped at the end"
        );
    }

    #[tokio::test]
    async fn a_reader_that_left_stops_the_sending_only() {
        let (events, reader) = mpsc::channel(1);
        drop(reader);
        let mut sender = ChunkSender::new(events, "answer");
        sender.push("kept nowhere");
        assert!(sender.closed && sender.pieces.pending.is_empty());
        sender.finish("done").await;
    }

    #[tokio::test]
    async fn a_whole_output_is_one_last_piece() {
        let (events, mut reader) = mpsc::channel(4);
        let output = SkillOutput {
            artifact_name: "search_results",
            text: "Three results".into(),
            data: serde_json::Map::new(),
        };
        send_whole(events, &output).await;
        assert_eq!(
            reader.recv().await.unwrap(),
            SkillEvent::ArtifactText {
                artifact_name: "search_results",
                text: "Three results".into(),
                append: false,
                last_chunk: true,
            }
        );
        assert!(reader.recv().await.is_none());
    }
}
