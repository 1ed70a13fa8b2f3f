//! From a question (and the conversation before it) to the passages an answer may cite.
//!
//! BM25 scores are only comparable within one search, so "the corpus cannot answer this" is not
//! decided by a score alone. In BM25 mode a hit must score at least [`MIN_SCORE`] (drops hits
//! that matched one very common word); hybrid scores are fused ranks, not relevance, so no floor
//! applies to them. Whether a hit bears on the question is then judged passage by passage on
//! the question's *topic words* (see `judgement`): words that are neither function words nor
//! generic words of the domain ("church", "teach", "catholic"…), compared by their first
//! [`STEM_CHARS`] letters so that `saints` finds `saint` and `pray` finds `prayer`.
//!
//! A question made only of generic words ("What does the Church teach?") has no topic words and
//! keeps every hit above the score floor. A saint's title ("Saint Joseph") is not a topic word:
//! the name is. Modern wordings count in the older texts' words (see `corpus::in_older_words`).
//!
//! When a catechism asks the question the user asked (same topic words), its answer is cited
//! first (see `persons::citing_order`).

use std::collections::BTreeSet;

use corpus::Hit;

use crate::{Speaker, Turn};

/// Lowest BM25 score a passage may have to be cited; chosen on small corpora, where one rare
/// shared word scores well above it and one common word alone scores below.
pub(crate) const MIN_SCORE: f32 = 0.3;
/// Letters of a word compared when matching topic words.
pub(crate) const STEM_CHARS: usize = 5;
/// A question with at most this many content words may lean on the previous question.
const SHORT_QUESTION_WORDS: usize = 2;
/// How many earlier user questions a chain of follow-ups may reach back.
const FOLLOW_UP_DEPTH: usize = 3;

/// Function words: they carry no topic and are left out of topic matching.
const FUNCTION_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "between", "both", "but", "by", "can",
    "could", "did", "do", "does", "doing", "done", "during", "each", "else", "even", "ever",
    "every", "for", "from", "further", "get", "gets", "getting", "got", "give", "gives", "gave",
    "given", "giving", "go", "goes", "going", "had", "has", "have", "having", "he", "her", "here",
    "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "know", "let",
    "like", "may", "me", "more", "most", "much", "must", "my", "no", "nor", "not", "now", "of",
    "on", "one", "only", "or", "other", "others", "our", "out", "over", "own", "please", "same",
    "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "us", "very", "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who",
    "whom", "whose", "why", "will", "with", "would", "you", "your",
];

/// Words every question of this domain may use: they do not say what the question is about.
const GENERIC_WORDS: &[&str] = &[
    "believe",
    "believes",
    "bible",
    "catholic",
    "catholics",
    "church",
    "church's",
    "churches",
    "explain",
    "happen",
    "happens",
    "happened",
    "mean",
    "means",
    "meaning",
    "say",
    "says",
    "said",
    "scripture",
    "scriptures",
    "speak",
    "speaks",
    "talk",
    "talks",
    "teach",
    "teaches",
    "teaching",
    "tell",
    "think",
    "view",
    "opinion",
];

/// Words that point back at something said before.
const ANAPHORS: &[&str] = &[
    "it", "its", "this", "that", "these", "those", "they", "them", "their", "he", "him", "his",
    "she", "her", "hers", "such",
];

/// Lower-cased, accent-folded words of a text (letters, digits and inner apostrophes).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut result = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || (c == '\'' || c == '’') && !current.is_empty() {
            for lower in c.to_lowercase() {
                current.push(fold(lower));
            }
        } else if !current.is_empty() {
            result.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        result.push(current);
    }
    result
        .into_iter()
        .map(|word| word.trim_end_matches(['\'', '’']).replace('’', "'"))
        .filter(|word| !word.is_empty())
        .collect()
}

/// Folds the accented Latin letters of European texts to their base letter.
fn fold(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => 'a',
        'ç' | 'č' | 'ć' => 'c',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => 'e',
        'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' => 'o',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' => 'u',
        'ý' | 'ÿ' => 'y',
        'ś' | 'š' => 's',
        'ź' | 'ż' | 'ž' => 'z',
        'ł' => 'l',
        other => other,
    }
}

fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Whether a word says what a question is about: neither a function word nor a generic one.
pub(crate) fn is_topic_word(word: &str) -> bool {
    !is_function_word(word) && !GENERIC_WORDS.contains(&word)
}

/// Words of a text that say something: function words removed.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|word| !is_function_word(word))
        .collect()
}

/// The first letters of a word, after a light English suffix strip (`praying` → `pray`), by
/// which topic words are compared.
pub(crate) fn stem(word: &str) -> String {
    let mut base = word;
    if base.chars().count() > STEM_CHARS {
        for suffix in ["ing", "ies", "ed", "es", "s"] {
            if let Some(stripped) = base.strip_suffix(suffix) {
                base = stripped;
                break;
            }
        }
    }
    base.chars().take(STEM_CHARS).collect()
}

/// The stems of the words that say what a question is about, read in the words of the
/// corpus's older texts ("Holy Spirit" as "Holy Ghost", "stealing" with "seventh commandment").
pub(crate) fn topic_stems(query: &str) -> BTreeSet<String> {
    content_words(&corpus::in_older_words(&corpus::saint_names(query).text))
        .into_iter()
        .filter(|word| !GENERIC_WORDS.contains(&word.as_str()))
        .map(|word| stem(&word))
        .collect()
}

/// Whether a question needs the previous one to be understood: it points back ("what about
/// its effects?") or is too short to stand alone ("and baptism?").
fn leans_on_context(question: &str) -> bool {
    let all = words(question);
    all.iter().any(|word| ANAPHORS.contains(&word.as_str()))
        || content_words(question).len() <= SHORT_QUESTION_WORDS
}

/// The text searched for a question: the question itself, plus, when it leans on the context,
/// the content words of the earlier user questions it follows (newest first, up to
/// [`FOLLOW_UP_DEPTH`], stopping at the first that stands alone).
pub(crate) fn retrieval_query(question: &str, history: &[Turn]) -> String {
    let mut query = question.to_string();
    if !leans_on_context(question) {
        return query;
    }
    let earlier = history
        .iter()
        .rev()
        .filter(|turn| turn.speaker == Speaker::User && !turn.text.trim().is_empty())
        .take(FOLLOW_UP_DEPTH);
    let mut seen: BTreeSet<String> = content_words(question).into_iter().collect();
    for turn in earlier {
        for word in content_words(&turn.text) {
            if !ANAPHORS.contains(&word.as_str()) && seen.insert(word.clone()) {
                query.push(' ');
                query.push_str(&word);
            }
        }
        if !leans_on_context(&turn.text) {
            break;
        }
    }
    query
}

/// Whether a hit's score may be trusted at all: in BM25 mode, at least `floor` (drops hits
/// that matched one very common word); `None` when scores are fused ranks, which say nothing of
/// relevance. Whether it bears on the question is the judgement's to say (see `judgement`).
pub(crate) fn above_floor(hit: &Hit, floor: Option<f32>) -> bool {
    floor.is_none_or(|floor| hit.score >= floor)
}

/// Whether a section's heading asks the question: a catechism question with the same topic
/// words as the user's.
pub(crate) fn asks_the_question(hit: &Hit, stems: &BTreeSet<String>) -> bool {
    let Some(heading) = hit
        .heading
        .as_deref()
        .filter(|h| h.trim_end().ends_with('?'))
    else {
        return false;
    };
    !stems.is_empty() && topic_stems(heading) == *stems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Turn {
        Turn {
            speaker: Speaker::User,
            text: text.into(),
        }
    }

    fn agent(text: &str) -> Turn {
        Turn {
            speaker: Speaker::Agent,
            text: text.into(),
        }
    }

    #[test]
    fn words_are_folded_and_split() {
        assert_eq!(
            words("Qu'est-ce que l'Église? Saints’ feast"),
            ["qu'est", "ce", "que", "l'eglise", "saints", "feast"]
        );
    }

    #[test]
    fn topic_stems_skip_function_and_generic_words() {
        let stems = topic_stems("What does the Church teach about the Sacred Heart?");
        assert_eq!(
            stems,
            BTreeSet::from(["sacr".to_string(), "heart".to_string()])
        );
        assert!(topic_stems("What does the Church teach?").is_empty());
    }

    #[test]
    fn a_standalone_question_is_searched_as_it_is() {
        let history = [user("What is baptism?"), agent("Baptism is… [1]")];
        assert_eq!(
            retrieval_query("Why do Catholics pray to saints?", &history),
            "Why do Catholics pray to saints?"
        );
    }

    #[test]
    fn a_follow_up_borrows_the_previous_question() {
        let history = [
            user("What is purgatory?"),
            agent("Purgatory is a purification [1]."),
            user("How long does it last?"),
            agent("The passages do not say."),
        ];
        let query = retrieval_query("And who prays for them?", &history);
        assert!(query.starts_with("And who prays for them?"), "{query}");
        assert!(query.contains("last"), "{query}");
        assert!(query.contains("purgatory"), "{query}");
        assert!(
            !query.contains("purification"),
            "agent turns are not searched: {query}"
        );
    }

    fn hit(score: f32, heading: Option<&str>, text: &str) -> Hit {
        Hit {
            id: "cat:x#1".into(),
            doc_id: "cat:x".into(),
            locus: "1".into(),
            title: "Fixture".into(),
            author: None,
            year: None,
            doc_type: "catechism".into(),
            reference: None,
            heading: heading.map(str::to_string),
            snippet: String::new(),
            text: text.into(),
            score,
            source_url: None,
        }
    }

    #[test]
    fn bm25_scores_meet_the_floor_and_fused_ranks_none() {
        assert!(above_floor(&hit(2.0, None, "Grace."), Some(MIN_SCORE)));
        assert!(!above_floor(&hit(0.1, None, "Grace."), Some(MIN_SCORE)));
        assert!(above_floor(&hit(1.0 / 61.0, None, "Grace."), None));
    }

    #[test]
    fn a_saints_title_is_not_a_topic_but_the_name_is() {
        let stems = topic_stems("Who was Saint Joseph?");
        assert_eq!(stems, BTreeSet::from(["josep".to_string()]));
        assert!(topic_stems("Who are the saints?").contains("saint"));
    }

    #[test]
    fn modern_wordings_are_read_in_the_old_texts_words() {
        let spirit = topic_stems("Who is the Holy Spirit?");
        assert_eq!(spirit, topic_stems("Who is the Holy Ghost?"));
        let stealing = topic_stems("Is stealing a sin?");
        assert!(stealing.contains("seven") && stealing.contains("comma"));
        assert!(asks_the_question(
            &hit(
                3.0,
                Some("What is the Sacrament of Matrimony?"),
                "Matrimony is…"
            ),
            &topic_stems("What is the sacrament of marriage?")
        ));
    }
}
