//! The offline answer: the sentences of the best passages that bear most on the question, quoted
//! as found and marked with their passage number. No text is generated, and the answer says so
//! in its first sentence.

use super::Passage;
use super::judgement::Judgement;

/// Most passages an extractive answer quotes, and so cites, whatever `maxCitations` allows:
/// enough to show several sources, few enough to read.
pub const EXTRACTIVE_PASSAGES: usize = 3;
/// Most sentences quoted from one passage.
const SENTENCES_PER_PASSAGE: usize = 2;
/// Longest quotation from one passage, in characters, before it is shortened.
const QUOTE_CHARS: usize = 450;
/// Longest catechism answer quoted whole, numbered points and all: an answer is one thought,
/// and its second half often completes the first.
const WHOLE_ANSWER_CHARS: usize = 900;

/// The opening sentence of every extractive answer: it must not pass for a written answer.
pub(crate) const EXTRACTIVE_OPENING: &str = "These passages from the corpus bear on your question (quoted as found: no language model is configured on this server, so nothing was summarised or paraphrased):";

/// The answer text for passages numbered 1..=n in the order given.
pub(crate) fn extractive_answer(passages: &[Passage], judgement: &Judgement) -> String {
    let mut answer = EXTRACTIVE_OPENING.to_string();
    for (index, passage) in passages.iter().enumerate() {
        let quote = if passage.is_catechism_answer()
            && passage.text.chars().count() <= WHOLE_ANSWER_CHARS
        {
            passage.text.clone()
        } else {
            best_sentences(&passage.text, |sentence| judgement.weight_held(sentence))
        };
        answer.push_str(&format!(
            "\n\n{}: “{}” [{}]",
            passage.label(),
            quote,
            index + 1
        ));
        if !passage.also_in.is_empty() {
            answer.push_str(&format!(" (also in {})", passage.also_in.join("; ")));
        }
    }
    answer
}

/// The sentences of a text that hold the most of what the question asks (`weight`), in reading
/// order; the opening sentences when none does.
fn best_sentences(text: &str, weight: impl Fn(&str) -> f32) -> String {
    // Some imported texts keep a heading marker ("####") between two paragraphs.
    let text = text.replace("####", "\n");
    let sentences = sentences(&text);
    let mut scored: Vec<(u32, usize)> = sentences
        .iter()
        .enumerate()
        // In thousandths, to sort.
        .map(|(position, sentence)| ((weight(sentence) * 1000.0).round() as u32, position))
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

/// Abbreviations a full stop follows without ending the sentence ("St. John", "cf. Mt. 5:3"),
/// lower-cased; a single letter ("S. Jerome", "J. Smith") is one too.
const ABBREVIATIONS: &[&str] = &[
    "st", "sts", "ss", "ch", "chap", "v", "vv", "ver", "cf", "mt", "mk", "lk", "jn", "matt", "gen",
    "ex", "exod", "lev", "num", "deut", "ps", "prov", "eccles", "isa", "jer", "ezech", "dan",
    "rom", "cor", "gal", "eph", "phil", "col", "thess", "tim", "heb", "apoc", "no", "nos", "q",
    "p", "pp", "i.e", "e.g", "viz", "etc", "dr", "mr", "mrs", "rev", "fr", "vol", "art", "sess",
    "can", "lib", "hom", "serm", "ep",
];

/// Splits a text into sentences: after `.`, `?` or `!` followed by white space, and at line
/// breaks. A full stop after an abbreviation does not end a sentence, and the points of a
/// numbered list ("(1) …; (2) …") stay with the sentence that opens the list.
fn sentences(text: &str) -> Vec<&str> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((position, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let ends_here = c == '\n'
            || (matches!(c, '?' | '!') && next_is_space)
            || (c == '.' && next_is_space && !after_abbreviation(&text[..position]));
        if ends_here {
            ends.push(position + c.len_utf8());
        }
    }
    let mut result: Vec<&str> = Vec::new();
    let mut start = 0;
    for end in ends.into_iter().chain(std::iter::once(text.len())) {
        let sentence = text[start..end].trim();
        start = end;
        if sentence.is_empty() {
            continue;
        }
        match result.last_mut() {
            Some(previous) if continues_a_list(sentence) => {
                let from = previous.as_ptr() as usize - text.as_ptr() as usize;
                *previous = text[from..end].trim();
            }
            _ => result.push(sentence),
        }
    }
    result
}

/// Whether the text before a full stop ends with an abbreviation.
fn after_abbreviation(before: &str) -> bool {
    let word: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let word = word.to_lowercase();
    word.chars().count() == 1 && word.chars().all(char::is_alphabetic)
        || ABBREVIATIONS.contains(&word.as_str())
}

/// Whether a sentence is a later point of a numbered list: it opens with "(2)", "(3)"…
fn continues_a_list(sentence: &str) -> bool {
    let Some(rest) = sentence.strip_prefix('(') else {
        return false;
    };
    let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
    number.parse::<u32>().is_ok_and(|n| n >= 2) && rest[number.len()..].starts_with(')')
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
    use super::*;

    /// The weight of a sentence as the number of the words given that it holds.
    fn holding(wanted: &'static [&'static str]) -> impl Fn(&str) -> f32 {
        move |sentence: &str| {
            let lower = sentence.to_lowercase();
            wanted.iter().filter(|w| lower.contains(*w)).count() as f32
        }
    }

    #[test]
    fn sentences_split_on_end_marks() {
        assert_eq!(
            sentences("First one. Second? Third! 3.5 stays; fourth\nfifth"),
            [
                "First one.",
                "Second?",
                "Third!",
                "3.5 stays; fourth",
                "fifth"
            ]
        );
    }

    #[test]
    fn abbreviations_do_not_end_a_sentence() {
        assert_eq!(
            sentences(
                "St. Matthew, St. Mark, St. Luke and St. John are called Evangelists. They wrote."
            ),
            [
                "St. Matthew, St. Mark, St. Luke and St. John are called Evangelists.",
                "They wrote."
            ]
        );
        assert_eq!(
            sentences("He took care, as S. Jerome says (ch. 4, v. 2; cf. Mt. 5:3). Then more."),
            [
                "He took care, as S. Jerome says (ch. 4, v. 2; cf. Mt. 5:3).",
                "Then more."
            ]
        );
        assert_eq!(
            sentences("Ss. Peter and Paul died."),
            ["Ss. Peter and Paul died."]
        );
    }

    #[test]
    fn a_numbered_list_stays_together() {
        assert_eq!(
            sentences("We prove it: (1) By one thing. (2) By another. (3) By a third. After."),
            [
                "We prove it: (1) By one thing. (2) By another. (3) By a third.",
                "After."
            ]
        );
    }

    #[test]
    fn the_most_relevant_sentences_are_quoted_in_order() {
        let text = "The lamp burns. Prayer to the saints asks their help. Rain fell. The saints pray for us in glory.";
        let quote = best_sentences(text, holding(&["pray", "saint"]));
        assert_eq!(
            quote,
            "… Prayer to the saints asks their help. … The saints pray for us in glory."
        );
    }

    #[test]
    fn without_a_shared_word_the_opening_is_quoted() {
        let quote = best_sentences("Alpha beta. Gamma delta.", holding(&["zeta"]));
        assert_eq!(quote, "Alpha beta.");
    }

    #[test]
    fn shorten_cuts_at_a_word() {
        assert_eq!(shorten("one two three four", 10), "one two…");
        assert_eq!(shorten("short", 10), "short");
    }
}
