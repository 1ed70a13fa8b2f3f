//! The chat sent to the backend, kept within the token budget, and the citation markers of its
//! reply, checked against the passages it was given.

use super::Passage;
use super::extractive::shorten;
use super::llm::{ChatMessage, Role};
use crate::{Speaker, Turn};

/// What the model is told before the passages. It must cite by number, cite only what it was
/// given, and say so when the passages do not answer.
pub(crate) const SYSTEM_INSTRUCTIONS: &str = "You answer questions about Catholic teaching for the users of a document library. \
Use only the numbered passages below; do not rely on memory. \
After every statement drawn from a passage, cite it with its number in square brackets, e.g. [1] or [2][3]. \
Cite only the numbers listed below, never any other. \
If the passages do not answer the question, say plainly that the library's passages do not answer it, and do not guess. \
Answer in the language of the question, briefly and precisely.";

/// Characters per token assumed by the budget: a fair average for English and Romance texts
/// with the tokenisers of current open models.
pub(crate) const CHARS_PER_TOKEN: usize = 4;
/// Tokens a chat template adds around each message (role markers, separators).
const MESSAGE_OVERHEAD_TOKENS: usize = 4;
/// Fewest tokens of passage text worth sending: below it the model would answer from nothing.
const MIN_PASSAGE_TOKENS: usize = 50;
/// Earlier turns considered at all; the budget may keep fewer.
pub(crate) const MAX_HISTORY_TURNS: usize = 12;
/// The line that starts the source list of a rendered answer.
pub(crate) const SOURCES_HEADING: &str = "Sources:";

/// The chat for one question and what of the context it kept.
#[derive(Debug)]
pub(crate) struct Prompt {
    /// System message, earlier turns, question.
    pub messages: Vec<ChatMessage>,
    /// How many of the passages (the best ones) it holds; they are numbered 1..=passages.
    pub passages: usize,
}

/// The question and the instructions alone exceed the budget.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong {
    /// Most characters a question could have had with this budget.
    pub max_question_chars: usize,
}

/// Estimated tokens of one message.
fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS
}

fn passage_block(number: usize, passage: &Passage, text: &str) -> String {
    format!("[{number}] {}\n{text}", passage.describe())
}

fn system_message(passages: &[Passage], last_text: Option<&str>) -> String {
    let mut system = format!("{SYSTEM_INSTRUCTIONS}\n\nPassages:");
    for (index, passage) in passages.iter().enumerate() {
        let text = match last_text {
            Some(text) if index + 1 == passages.len() => text,
            _ => passage.text.as_str(),
        };
        system.push_str("\n\n");
        system.push_str(&passage_block(index + 1, passage, text));
    }
    system
}

/// An earlier agent answer as the model should see it: without the source list and markers,
/// whose numbers meant other passages.
fn prior_answer(text: &str) -> String {
    let answer = match text.find(&format!("\n\n{SOURCES_HEADING}\n")) {
        Some(end) => &text[..end],
        None => text,
    };
    let cited = cite(answer, 0);
    cited.text
}

fn history_messages(history: &[Turn]) -> Vec<ChatMessage> {
    let start = history.len().saturating_sub(MAX_HISTORY_TURNS);
    history[start..]
        .iter()
        .filter(|turn| !turn.text.trim().is_empty())
        .map(|turn| match turn.speaker {
            Speaker::User => ChatMessage {
                role: Role::User,
                content: turn.text.trim().to_string(),
            },
            Speaker::Agent => ChatMessage {
                role: Role::Assistant,
                content: prior_answer(turn.text.trim()),
            },
        })
        .collect()
}

/// Drops the oldest turn, and any answer left without its question, so that the chat still
/// starts with a user message as strict chat templates require.
fn drop_oldest_turn(turns: &mut Vec<ChatMessage>) {
    if !turns.is_empty() {
        turns.remove(0);
    }
    while turns
        .first()
        .is_some_and(|turn| turn.role == Role::Assistant)
    {
        turns.remove(0);
    }
}

/// The chat for a question, within `max_tokens`: the lowest-ranked passages go first, then the
/// oldest turns, then the one remaining passage is shortened.
pub(crate) fn build(
    question: &str,
    history: &[Turn],
    passages: &[Passage],
    max_tokens: usize,
) -> Result<Prompt, TooLong> {
    let question_tokens = tokens(question);
    let mut turns = history_messages(history);
    while turns
        .first()
        .is_some_and(|turn| turn.role == Role::Assistant)
    {
        turns.remove(0);
    }
    let mut kept = passages.len();
    let mut last_text: Option<String> = None;
    loop {
        let system = system_message(&passages[..kept], last_text.as_deref());
        let total = tokens(&system)
            + turns.iter().map(|t| tokens(&t.content)).sum::<usize>()
            + question_tokens;
        if total <= max_tokens {
            let mut messages = Vec::with_capacity(turns.len() + 2);
            messages.push(ChatMessage {
                role: Role::System,
                content: system,
            });
            messages.append(&mut turns);
            messages.push(ChatMessage {
                role: Role::User,
                content: question.to_string(),
            });
            return Ok(Prompt {
                messages,
                passages: kept,
            });
        }
        if kept > 1 {
            kept -= 1;
        } else if !turns.is_empty() {
            drop_oldest_turn(&mut turns);
        } else {
            let Some(only) = passages.first() else {
                return Err(too_long(max_tokens, passages));
            };
            let fixed = tokens(&system_message(&passages[..1], Some(""))) + question_tokens;
            let room = max_tokens.saturating_sub(fixed);
            if room < MIN_PASSAGE_TOKENS || last_text.is_some() {
                return Err(too_long(max_tokens, passages));
            }
            // One token of slack for the ellipsis and the rounding of the estimate.
            last_text = Some(shorten(&only.text, (room - 1) * CHARS_PER_TOKEN));
        }
    }
}

fn too_long(max_tokens: usize, passages: &[Passage]) -> TooLong {
    let fixed = passages.first().map_or(tokens(SYSTEM_INSTRUCTIONS), |_| {
        tokens(&system_message(&passages[..1], Some("")))
    });
    let room = max_tokens.saturating_sub(fixed + MIN_PASSAGE_TOKENS + MESSAGE_OVERHEAD_TOKENS);
    TooLong {
        max_question_chars: room * CHARS_PER_TOKEN,
    }
}

/// An answer whose markers were checked against the passages given.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Cited {
    /// The answer, markers renumbered 1..=m in order of first use.
    pub text: String,
    /// The passage numbers (as given to the model) of markers 1..=m.
    pub used: Vec<usize>,
    /// Numbers the answer cited that were not given, now removed.
    pub dropped: Vec<usize>,
}

/// Checks and renumbers the `[n]` markers of an answer (also `[1, 2]`, `[1-3]`) when
/// `given` passages were numbered 1..=given: markers of passages not given are removed, the
/// rest renumbered in order of first use. Brackets holding anything but numbers are left alone.
/// The answer is trimmed. The same [`Citer`] checks a streamed answer, so both agree exactly.
pub(crate) fn cite(answer: &str, given: usize) -> Cited {
    let mut citer = Citer::new(given);
    let mut text = citer.push(answer);
    let rest = citer.finish();
    text.push_str(&rest.text);
    Cited { text, ..rest }
}

/// Longest inside of a marker, in bytes: a longer bracket is prose.
const LONGEST_MARKER_INSIDE: usize = 40;

/// [`cite`] for an answer that arrives in pieces: each piece gives the text that is final so
/// far. Text that the rest of the answer could still change is held back: an open `[` that may
/// be a marker, and trailing whitespace (trimmed at the end, or before a removed marker). What
/// is held back is at most one marker's inside and one run of whitespace.
pub(crate) struct Citer {
    given: usize,
    used: Vec<usize>,
    dropped: Vec<usize>,
    /// A character other than whitespace has arrived: whitespace before it is dropped.
    started: bool,
    /// The whitespace at the end of the text so far, not given out yet.
    held: String,
    /// How many bytes of `held` the answer continued after (the rest may be trailing).
    held_before_more: usize,
    /// The inside of an open `[` that may still be a marker.
    marker: Option<String>,
    /// A marker was removed: the next character decides whether the space before it goes.
    after_removed_marker: bool,
}

impl Citer {
    /// A citer for an answer given `given` passages.
    pub(crate) fn new(given: usize) -> Citer {
        Citer {
            given,
            used: Vec::new(),
            dropped: Vec::new(),
            started: false,
            held: String::new(),
            held_before_more: 0,
            marker: None,
            after_removed_marker: false,
        }
    }

    /// Takes the next piece of the answer; returns the text that became final.
    pub(crate) fn push(&mut self, piece: &str) -> String {
        let mut out = String::new();
        for c in piece.chars() {
            self.take(c, &mut out);
        }
        out
    }

    /// Ends the answer: the text still held back (trailing whitespace trimmed), and the
    /// numbers used and dropped over the whole answer.
    pub(crate) fn finish(mut self) -> Cited {
        let mut out = String::new();
        // A `[` never closed is no marker.
        while let Some(inside) = self.marker.take() {
            self.reject_marker(&inside, &mut out);
        }
        if self.after_removed_marker {
            self.trim_held_spaces();
        }
        out.push_str(&self.held[..self.held_before_more]);
        Cited {
            text: out,
            used: self.used,
            dropped: self.dropped,
        }
    }

    fn take(&mut self, c: char, out: &mut String) {
        if let Some(inside) = &mut self.marker {
            if c == ']' {
                let inside = std::mem::take(inside);
                self.marker = None;
                match marker_numbers(&inside) {
                    Some(numbers) => self.write_marker(numbers, out),
                    None => {
                        self.reject_marker(&inside, out);
                        self.take(']', out);
                    }
                }
            } else {
                inside.push(c);
                if inside.len() > LONGEST_MARKER_INSIDE {
                    let inside = std::mem::take(inside);
                    self.marker = None;
                    self.reject_marker(&inside, out);
                }
            }
            return;
        }
        if std::mem::take(&mut self.after_removed_marker)
            && (c.is_whitespace() || c.is_ascii_punctuation())
        {
            self.trim_held_spaces();
        }
        if c == '[' {
            self.started = true;
            self.held_before_more = self.held.len();
            self.marker = Some(String::new());
        } else if c.is_whitespace() {
            if self.started {
                self.held.push(c);
            }
        } else {
            self.started = true;
            self.release_held(out);
            out.push(c);
        }
    }

    /// An open `[` turned out to be prose: it is text, and what followed it is read again.
    fn reject_marker(&mut self, inside: &str, out: &mut String) {
        self.release_held(out);
        out.push('[');
        for c in inside.chars() {
            self.take(c, out);
        }
    }

    fn write_marker(&mut self, numbers: Vec<usize>, out: &mut String) {
        let mut written = Vec::new();
        for number in numbers {
            if number == 0 || number > self.given {
                if !self.dropped.contains(&number) {
                    self.dropped.push(number);
                }
                continue;
            }
            let renumbered = match self.used.iter().position(|&n| n == number) {
                Some(position) => position + 1,
                None => {
                    self.used.push(number);
                    self.used.len()
                }
            };
            if !written.contains(&renumbered) {
                written.push(renumbered);
            }
        }
        if written.is_empty() {
            self.after_removed_marker = true;
            return;
        }
        self.release_held(out);
        for number in written {
            out.push_str(&format!("[{number}]"));
        }
    }

    fn release_held(&mut self, out: &mut String) {
        out.push_str(&self.held);
        self.held.clear();
        self.held_before_more = 0;
    }

    /// A removed marker followed by a gap takes the spaces before it along.
    fn trim_held_spaces(&mut self) {
        let kept = self.held.trim_end_matches([' ', '\t']).len();
        self.held.truncate(kept);
        self.held_before_more = self.held_before_more.min(kept);
    }
}

/// The numbers of a marker's inside (`1`, `1, 2`, `1-3`), or `None` when it is not a marker.
/// Numbers of three digits or more are years or pages (`[1891]`), never passage numbers.
fn marker_numbers(inside: &str) -> Option<Vec<usize>> {
    const LONGEST_RANGE: usize = 10;
    const FIRST_NON_MARKER: usize = 100;
    if inside.trim().is_empty() || inside.len() > LONGEST_MARKER_INSIDE {
        return None;
    }
    let mut numbers = Vec::new();
    for item in inside.split([',', ';']) {
        let item = item.trim();
        if let Some((from, to)) = item.split_once(['-', '–']) {
            let from: usize = from.trim().parse().ok()?;
            let to: usize = to.trim().parse().ok()?;
            if to < from || to - from > LONGEST_RANGE {
                return None;
            }
            numbers.extend(from..=to);
        } else {
            numbers.push(item.parse().ok()?);
        }
    }
    numbers
        .iter()
        .all(|&number| number < FIRST_NON_MARKER)
        .then_some(numbers)
}

#[cfg(test)]
mod tests {
    use super::super::tests::passage;
    use super::*;

    #[test]
    fn markers_are_renumbered_in_order_of_first_use() {
        let cited = cite("Grace heals [3]. Nature is good [1][3]. Both [1, 2].", 3);
        assert_eq!(
            cited.text,
            "Grace heals [1]. Nature is good [2][1]. Both [2][3]."
        );
        assert_eq!(cited.used, [3, 1, 2]);
        assert!(cited.dropped.is_empty());
    }

    #[test]
    fn markers_of_passages_not_given_are_dropped() {
        let cited = cite("True [1]. Invented [7]. Mixed [2, 9]. Zero [0]", 3);
        assert_eq!(cited.text, "True [1]. Invented. Mixed [2]. Zero");
        assert_eq!(cited.used, [1, 2]);
        assert_eq!(cited.dropped, [7, 9, 0]);
    }

    #[test]
    fn brackets_that_are_not_markers_stay() {
        let cited = cite("He [the Pope] wrote [sic] in [1891-1901] [2-3].", 3);
        assert_eq!(
            cited.text,
            "He [the Pope] wrote [sic] in [1891-1901] [1][2]."
        );
        assert_eq!(cited.used, [2, 3]);
        assert!(cited.dropped.is_empty());
    }

    #[test]
    fn a_streamed_answer_is_checked_exactly_as_a_whole_one() {
        let answers = [
            "  Grace heals [3]. Invented [7]. Both [1, 2] [sic] [1891]\n[9] end [2-3] [  ",
            "He [the Pope [1] wrote] [a very long bracket that is surely not a marker [2]] x [7], y",
            "\tTrue [1].\n\n[8] [9]\t ",
        ];
        for answer in answers {
            let whole = cite(answer, 3);
            let chars: Vec<char> = answer.chars().collect();
            for size in 1..=chars.len() {
                let mut citer = Citer::new(3);
                let mut text = String::new();
                for piece in chars.chunks(size) {
                    text.push_str(&citer.push(&piece.iter().collect::<String>()));
                }
                let rest = citer.finish();
                text.push_str(&rest.text);
                assert_eq!(
                    Cited { text, ..rest },
                    whole,
                    "{answer:?} in pieces of {size}"
                );
            }
        }
    }

    #[test]
    fn prior_answers_lose_sources_and_markers() {
        let text = "Baptism cleanses [1].\n\nSources:\n[1] Catechism, q1";
        assert_eq!(prior_answer(text), "Baptism cleanses.");
    }

    fn turns(n: usize) -> Vec<Turn> {
        (0..n)
            .map(|i| Turn {
                speaker: if i % 2 == 0 {
                    Speaker::User
                } else {
                    Speaker::Agent
                },
                text: format!("turn number {i} {}", "word ".repeat(40)),
            })
            .collect()
    }

    #[test]
    fn everything_fits_a_generous_budget() {
        let passages = [passage(1, "alpha"), passage(2, "beta")];
        let prompt = build("Why?", &turns(4), &passages, 10_000).unwrap();
        assert_eq!(prompt.passages, 2);
        assert_eq!(prompt.messages.len(), 6);
        assert_eq!(prompt.messages[0].role, Role::System);
        assert!(prompt.messages[0].content.contains("[2] "));
        assert_eq!(prompt.messages[5].content, "Why?");
    }

    #[test]
    fn the_budget_drops_low_passages_then_old_turns_then_shortens() {
        let long = "lorem ipsum ".repeat(200);
        let passages = [passage(1, &long), passage(2, &long), passage(3, &long)];
        let history = turns(4);
        let fits = |prompt: &Prompt, budget: usize| {
            prompt
                .messages
                .iter()
                .map(|m| tokens(&m.content))
                .sum::<usize>()
                <= budget
        };

        let size = |prompt: &Prompt| {
            prompt
                .messages
                .iter()
                .map(|m| tokens(&m.content))
                .sum::<usize>()
        };
        let whole = size(&build("Why?", &history, &passages, usize::MAX).unwrap());
        let prompt = build("Why?", &history, &passages, whole - 1).unwrap();
        assert_eq!(prompt.passages, 2, "the lowest-ranked passage goes first");
        assert_eq!(
            prompt.messages.len(),
            6,
            "turns are kept while passages can go"
        );
        assert!(fits(&prompt, whole - 1));

        let one_alone = size(&build("Why?", &[], &passages[..1], usize::MAX).unwrap());
        let prompt = build("Why?", &history, &passages, one_alone + 10).unwrap();
        assert_eq!(prompt.passages, 1);
        assert_eq!(
            prompt.messages.len(),
            2,
            "old turns went once one passage was left"
        );
        assert!(fits(&prompt, one_alone + 10));

        let tight = one_alone - 100;
        let prompt = build("Why?", &history, &passages, tight).unwrap();
        assert_eq!(prompt.passages, 1);
        assert!(fits(&prompt, tight));
        assert!(
            prompt.messages[0].content.ends_with('…'),
            "the passage was shortened"
        );
        assert_eq!(prompt.messages.last().unwrap().content, "Why?");

        let error = build(&"why ".repeat(1000), &[], &passages, 300).unwrap_err();
        assert!(error.max_question_chars < 1200);
    }
}
