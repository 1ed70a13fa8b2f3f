//! The offline answer: the sentences of the best passages that bear most on the question, quoted
//! as found and marked with their passage number. No text is generated, and the answer says so
//! in its first sentence.

use std::collections::BTreeSet;

use super::Passage;
use super::retrieval::words;

/// Most passages an extractive answer quotes, and so cites, whatever `maxCitations` allows:
/// enough to show several sources, few enough to read.
pub const EXTRACTIVE_PASSAGES: usize = 3;
/// Most sentences quoted from one passage.
const SENTENCES_PER_PASSAGE: usize = 2;
/// Longest quotation from one passage, in characters, before it is shortened.
const QUOTE_CHARS: usize = 450;

/// The opening sentence of every extractive answer: it must not pass for a written answer.
pub(crate) const EXTRACTIVE_OPENING: &str = "These passages from the corpus bear on your question (quoted as found: no language model is configured on this server, so nothing was summarised or paraphrased):";

/// The answer text for passages numbered 1..=n in the order given.
pub(crate) fn extractive_answer(passages: &[Passage], stems: &BTreeSet<String>) -> String {
    let mut answer = EXTRACTIVE_OPENING.to_string();
    for (index, passage) in passages.iter().enumerate() {
        let quote = best_sentences(&passage.text, stems);
        answer.push_str(&format!(
            "\n\n{}: “{}” [{}]",
            passage.label(),
            quote,
            index + 1
        ));
    }
    answer
}

/// The sentences of a text that share the most topic words with the question, in reading
/// order; the opening sentences when none does.
fn best_sentences(text: &str, stems: &BTreeSet<String>) -> String {
    let sentences = sentences(text);
    let mut scored: Vec<(usize, usize)> = sentences
        .iter()
        .enumerate()
        .map(|(position, sentence)| (shared_topics(sentence, stems), position))
        .collect();
    // Best first; among equals, earlier first.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<usize> = Vec::new();
    let mut length = 0;
    for (score, position) in scored {
        if chosen.len() == SENTENCES_PER_PASSAGE {
            break;
        }
        if !chosen.is_empty() && (score == 0 || length + sentences[position].len() > QUOTE_CHARS) {
            break;
        }
        length += sentences[position].len();
        chosen.push(position);
    }
    chosen.sort_unstable();
    let mut quote = String::new();
    let mut previous: Option<usize> = None;
    for position in chosen {
        if let Some(previous) = previous {
            quote.push_str(if position == previous + 1 {
                " "
            } else {
                " … "
            });
        } else if position > 0 {
            quote.push_str("… ");
        }
        quote.push_str(sentences[position]);
        previous = Some(position);
    }
    shorten(&quote, QUOTE_CHARS)
}

/// How many distinct topic stems a sentence contains.
fn shared_topics(sentence: &str, stems: &BTreeSet<String>) -> usize {
    let sentence_words = words(sentence);
    stems
        .iter()
        .filter(|topic| {
            sentence_words
                .iter()
                .any(|word| word.starts_with(topic.as_str()))
        })
        .count()
}

/// Splits a text after `.`, `?`, `!` or `;` followed by white space, and at line breaks.
fn sentences(text: &str) -> Vec<&str> {
    let mut result = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((position, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let ends = c == '\n' || (matches!(c, '.' | '?' | '!' | ';') && next_is_space);
        if ends {
            let end = position + c.len_utf8();
            let sentence = text[start..end].trim();
            if !sentence.is_empty() {
                result.push(sentence);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        result.push(rest);
    }
    result
}

/// A text cut to at most `max` characters at a word boundary, with an ellipsis when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let at_word = match cut.rfind(char::is_whitespace) {
        Some(space) if space > max / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

#[cfg(test)]
mod tests {
    use super::super::retrieval::topic_stems;
    use super::*;

    #[test]
    fn sentences_split_on_end_marks() {
        assert_eq!(
            sentences("First one. Second? Third! 3.5 stays; fourth\nfifth"),
            [
                "First one.",
                "Second?",
                "Third!",
                "3.5 stays;",
                "fourth",
                "fifth"
            ]
        );
    }

    #[test]
    fn the_most_relevant_sentences_are_quoted_in_order() {
        let text = "The lamp burns. Prayer to the saints asks their help. Rain fell. The saints pray for us in glory.";
        let quote = best_sentences(text, &topic_stems("Why pray to saints?"));
        assert_eq!(
            quote,
            "… Prayer to the saints asks their help. … The saints pray for us in glory."
        );
    }

    #[test]
    fn without_a_shared_word_the_opening_is_quoted() {
        let quote = best_sentences("Alpha beta. Gamma delta.", &topic_stems("zeta"));
        assert_eq!(quote, "Alpha beta.");
    }

    #[test]
    fn shorten_cuts_at_a_word() {
        assert_eq!(shorten("one two three four", 10), "one two…");
        assert_eq!(shorten("short", 10), "short");
    }
}
