//! Whether one passage bears on what a question asks: the judgement that decides what an answer
//! may quote, and so what a model is given.
//!
//! A question's *key terms* are its topic words (see [`retrieval`](super::retrieval)), each
//! weighted by how rare it is in the corpus ([`corpus::Corpus::rarity`]): "divorce" or
//! "euthanasia" say what the question is about, "sin" or "allowed" hardly. A modern wording is
//! one term held by any of the texts' wordings for it ("euthanasia" by "wilful murder" or "Thou
//! shalt not kill" in a catechism's answer; see `corpus::query_words`). A passage's *bearing* is
//! the share
//! of the question's weight that its heading and text hold; it is quoted only when the bearing
//! reaches [`MIN_BEARING`], a threshold chosen on the tuning half of the judged everyday
//! questions (`bench/relevance/everyday.json`, see BENCHMARKS.md), not by hand. A passage that
//! only shares a common word with the question ("to whom every indulgence must be allowed")
//! falls below it.
//!
//! Persons help and never exclude:
//! - a person named as the one speaking ("What did Jesus say about divorce?") is not a key term:
//!   the verses that answer ("whosoever shall put away his wife…") need not name him;
//! - a person named as the topic ("Why do Catholics pray to Mary?") is one, held by the name or
//!   the texts' words for the person ("the Blessed Virgin"); in a verse or a note the name counts
//!   only when the verse was found about that person (see `persons`), since it may be a
//!   namesake ("the house of Mary the mother of John").
//!
//! A *why* question asks for a reason: the reason words ("because", "why", "in order that")
//! are one more term, weighed as the mean of the others, so that the text of a prayer naming
//! the same words does not pass for the reason it is said. "Is it a sin", "allowed", "wrong"
//! are one term too, held by the words a catechism forbids or allows in ("forbids", "sin",
//! "commandment").
//!
//! Besides the bearing, the judgement tells which passages *answer* the question, so that
//! passages merely sharing its words are not quoted beside them: a catechism asking the very
//! question, or one whose question holds every key term; for what Christ said, the Gospels.
//!
//! A verse the question quotes in a modern wording (`corpus::douay_wordings`) bears on it
//! whole.

use std::collections::BTreeSet;

use corpus::{Corpus, Hit};

use super::retrieval::{STEM_CHARS, asks_the_question, is_topic_word, stem, words};

/// Least bearing a passage needs to be quoted: chosen on the tuning half of the judged everyday
/// questions by `bench-relevance --tune` (the value with the most right first citations and
/// honest declines, less the irrelevant quotations; see BENCHMARKS.md).
pub const MIN_BEARING: f32 = 0.8;

/// Names of persons a question may ask about without a saint's title.
const PERSONS: &[&str] = &[
    "jesus", "christ", "mary", "joseph", "peter", "paul", "john", "moses", "abraham", "david",
];
/// The texts' other names for a person ("Christ", "our Lord" for Jesus).
const PERSON_WORDINGS: &[(&str, &[&str])] = &[
    ("jesus", &["jesus", "christ", "our lord", "saviour"]),
    ("christ", &["christ", "jesus", "our lord", "saviour"]),
];
/// Words after a person's name that make the person the one speaking.
const SPEAKING: &[&str] = &[
    "say", "says", "said", "teach", "teaches", "taught", "preach", "preached", "speak", "spoke",
    "tell", "told",
];
/// Words asking whether an act is allowed ("Is abortion a sin?", "Is euthanasia allowed?"):
/// one term, held by the words a catechism answers such a question in.
const PERMISSION_WORDS: &[&str] = &[
    "sin",
    "sinful",
    "allowed",
    "permitted",
    "lawful",
    "unlawful",
    "wrong",
    "forbidden",
    "moral",
    "immoral",
    "ok",
    "okay",
];
/// The words a catechism says what is allowed and forbidden in.
const PERMISSION_WORDINGS: &[&str] = &[
    "sin",
    "sins",
    "sinful",
    "forbid",
    "forbids",
    "forbidden",
    "allowed",
    "lawful",
    "unlawful",
    "permitted",
    "commandment",
    "mortal",
];
/// Words naming Scripture in a question ("Where does the Bible speak of…?").
const SCRIPTURE_WORDS: &[&str] = &["bible", "scripture", "scriptures"];
/// Words a reason is given in.
const REASON_WORDINGS: &[&str] = &["why", "because", "reason", "in order that"];

/// One thing a question asks about, and the ways a passage may hold it.
#[derive(Debug, Clone)]
struct KeyTerm {
    /// The question's word(s), as the declining answer names them.
    asked: String,
    /// Runs of stems: a passage holding any one of them (in a row) holds the term.
    alternatives: Vec<Vec<String>>,
    weight: f32,
    /// A person named as the topic: in a verse or note, held only when found about them.
    person: bool,
    /// A moral act in today's words, held only by a catechism's words for it.
    in_catechisms_only: bool,
    /// The texts' wordings of a modern wording, searched instead of it.
    texts_words: Option<&'static [&'static str]>,
    /// A doctrine read in the catechisms' words for what it is about: a catechism's question
    /// asks about it only in its own words ("Real Presence"), not in those.
    about_only: bool,
    /// What kind of answer is asked for (a reason, whether an act is allowed), rather than
    /// what about: a catechism may say it in its answer rather than in its question.
    frame: bool,
}

impl KeyTerm {
    /// The key term of one word (or modern wording) of a question; `None` for a word that
    /// says nothing of what is asked.
    fn read(word: &corpus::QueryWord, person: bool, corpus: &Corpus) -> Option<KeyTerm> {
        let plain = |alternatives: Vec<Vec<String>>, frame: bool| KeyTerm {
            asked: word.text.clone(),
            alternatives,
            weight: corpus.rarity(&word.text).unwrap_or(0.0),
            person,
            in_catechisms_only: false,
            texts_words: None,
            about_only: false,
            frame,
        };
        if PERMISSION_WORDS.contains(&word.text.as_str()) {
            let wordings = PERMISSION_WORDINGS.iter().map(|w| stems(w)).collect();
            return Some(plain(wordings, true));
        }
        if word.older.is_empty() {
            if !is_topic_word(&word.text) {
                return None;
            }
            let alternatives = match PERSON_WORDINGS.iter().find(|(name, _)| *name == word.text) {
                Some((_, wordings)) => wordings.iter().map(|w| stems(w)).collect(),
                None => vec![vec![stem(&word.text)]],
            };
            return Some(plain(alternatives, false));
        }
        Some(KeyTerm {
            asked: word.text.clone(),
            alternatives: word.older.iter().map(|w| stems(w)).collect(),
            weight: words(&word.text)
                .iter()
                .filter_map(|w| corpus.rarity(w))
                .fold(0.0, f32::max),
            person,
            in_catechisms_only: word.kind == corpus::WordingKind::Moral,
            texts_words: Some(word.older),
            about_only: word.kind == corpus::WordingKind::AnswerOnly,
            frame: false,
        })
    }

    /// The reason a *why* question asks for, weighed as the mean of its other terms.
    fn reason(terms: &[KeyTerm]) -> KeyTerm {
        KeyTerm {
            asked: "why".into(),
            alternatives: REASON_WORDINGS.iter().map(|w| stems(w)).collect(),
            weight: terms.iter().map(|t| t.weight).sum::<f32>() / terms.len() as f32,
            person: false,
            in_catechisms_only: false,
            texts_words: None,
            about_only: false,
            frame: true,
        }
    }
}

/// The key terms of a question and what a passage must hold to bear on it.
#[derive(Debug, Clone)]
pub(crate) struct Judgement {
    terms: Vec<KeyTerm>,
    /// The Douay-Rheims wordings of the well-known verses the question quotes.
    quoted_verses: Vec<Vec<String>>,
    /// The question asks what Christ said: verses of the Gospels come first.
    asks_christs_words: bool,
    /// The question asks where Scripture says something ("Where does the Bible speak of…").
    asks_for_scripture: bool,
    /// The kind of question asked, by its first word (see [`question_word`]).
    question_word: Option<String>,
    min_bearing: f32,
}

impl Judgement {
    /// The judgement of passages for a question (with its follow-up context already added),
    /// weighing its words in `corpus`.
    pub(crate) fn new(query: &str, corpus: &Corpus, min_bearing: f32) -> Judgement {
        let named = corpus::saint_names(query);
        let saints: Vec<String> = named.names.iter().flat_map(|name| words(name)).collect();
        let read = corpus::query_words(&named.text);
        let speaking: Vec<bool> = (0..read.len())
            .map(|at| {
                read.get(at + 1)
                    .is_some_and(|next| SPEAKING.contains(&next.text.as_str()))
            })
            .collect();
        let mut terms: Vec<KeyTerm> = Vec::new();
        let mut asks_christs_words = false;
        for (at, word) in read.iter().enumerate() {
            let is_person = PERSONS.contains(&word.text.as_str()) || saints.contains(&word.text);
            if is_person && speaking[at] {
                asks_christs_words |= ["jesus", "christ"].contains(&word.text.as_str());
                continue;
            }
            let Some(term) = KeyTerm::read(word, is_person, corpus) else {
                continue;
            };
            if term.weight > 0.0
                && terms
                    .iter()
                    .all(|t| t.asked != term.asked && t.alternatives != term.alternatives)
            {
                terms.push(term);
            }
        }
        if words(query).first().is_some_and(|first| first == "why") && !terms.is_empty() {
            terms.push(KeyTerm::reason(&terms));
        }
        Judgement {
            terms,
            quoted_verses: corpus::douay_wordings(query)
                .into_iter()
                .map(stems)
                .collect(),
            asks_christs_words,
            asks_for_scripture: words(query)
                .iter()
                .any(|word| SCRIPTURE_WORDS.contains(&word.as_str())),
            question_word: question_word(query),
            min_bearing,
        }
    }

    /// The share of the question's weight a passage holds, from 0 to 1. `found_about` says
    /// whether the passage was found about the person the question names. A question with no
    /// key term (only generic words) is borne on by any passage.
    pub(crate) fn bearing(&self, hit: &Hit, found_about: bool) -> f32 {
        let held = held_stems(hit);
        let in_text = text_stems(hit);
        if self.quoted_verses.iter().any(|verse| holds(&held, verse)) {
            return 1.0;
        }
        let in_catechism = hit.doc_type == "catechism";
        // In a verse or a note a name may be a namesake's, and the verse may not name the
        // person at all ("And I say to you…"): a person counts there only in the verses found
        // about them, or when the question asks about nothing else.
        let only_persons = self.terms.iter().all(|term| term.person);
        let counted = |term: &&KeyTerm| !term.person || in_catechism || found_about || only_persons;
        let total: f32 = self.terms.iter().filter(counted).map(|t| t.weight).sum();
        if total <= 0.0 {
            return 1.0;
        }
        let matched: f32 = self
            .terms
            .iter()
            .filter(counted)
            .filter(|term| !term.person || in_catechism || found_about)
            .filter(|term| !term.in_catechisms_only || in_catechism)
            .filter(|term| {
                // A moral act is held by what the answer says, not by the heading of a long
                // section on the commandment ("Thou shalt not kill" — Remedies Against Hatred).
                let searched = if term.in_catechisms_only {
                    &in_text
                } else {
                    &held
                };
                term.alternatives.iter().any(|run| holds(searched, run))
            })
            .map(|term| term.weight)
            .sum();
        matched / total
    }

    /// The weight of the question's terms a sentence holds: how much of what is asked it says,
    /// to choose the sentences quoted from a long passage.
    pub(crate) fn weight_held(&self, sentence: &str) -> f32 {
        let held = stems(sentence);
        self.terms
            .iter()
            .filter(|term| term.alternatives.iter().any(|run| holds(&held, run)))
            .map(|term| term.weight)
            .sum()
    }

    /// How early in the catechisms' wordings of a moral act the passage speaks: the first is
    /// the most specific ("procure abortion" before "wilful murder", before "Thou shalt not
    /// kill"), and the passage saying the most specific thing is cited first. `usize::MAX`
    /// when the passage holds none (and for every question without a moral act).
    pub(crate) fn first_wording(&self, hit: &Hit) -> usize {
        if hit.doc_type != "catechism" {
            return usize::MAX;
        }
        let held = text_stems(hit);
        self.terms
            .iter()
            .filter(|term| term.in_catechisms_only)
            .filter_map(|term| term.alternatives.iter().position(|run| holds(&held, run)))
            .min()
            .unwrap_or(usize::MAX)
    }

    /// Whether the section is a catechism's answer whose question (its heading) holds every
    /// key term of the user's: "What sin is it to destroy one's own life, or commit suicide?"
    /// for "Is suicide a sin?". Such answers are the answer; a verse sharing the words is not
    /// quoted beside them.
    pub(crate) fn answered_in_heading(&self, hit: &Hit) -> bool {
        let Some(heading) = hit
            .heading
            .as_deref()
            .filter(|h| hit.doc_type == "catechism" && h.trim_end().ends_with('?'))
        else {
            return false;
        };
        let asked = stems(heading);
        let answered = held_stems(hit);
        self.terms.iter().any(|term| !term.frame)
            && self.terms.iter().all(|term| {
                let held = if term.frame { &answered } else { &asked };
                let own = [stems(&term.asked)];
                let runs = if term.about_only {
                    &own[..]
                } else {
                    &term.alternatives[..]
                };
                !term.in_catechisms_only && runs.iter().any(|run| holds(held, run))
            })
    }

    /// Whether the passage holds the Douay-Rheims words of a well-known verse the question
    /// quotes ("Let there be light"): that verse is what is asked for.
    pub(crate) fn quotes_the_verse(&self, hit: &Hit) -> bool {
        let held = held_stems(hit);
        hit.doc_type == "scripture" && self.quoted_verses.iter().any(|verse| holds(&held, verse))
    }

    /// Whether a catechism asks the very question: the same topic words (see
    /// `retrieval::asks_the_question`) asked with the same question word, so that "Who gives
    /// confirmation?" is not asked by "What is Confirmation?".
    pub(crate) fn asks(&self, hit: &Hit, stems: &BTreeSet<String>) -> bool {
        asks_the_question(hit, stems)
            && question_word(hit.heading.as_deref().unwrap_or_default()) == self.question_word
    }

    /// Whether a catechism's question opens with the user's question word when that word asks
    /// for something particular ("Who …?" for "Who gives confirmation?", "Why …?", "When …?",
    /// "Where …?", "How …?"): among the answers holding every key term, those asking the same
    /// kind of question. "What", "which" and yes-or-no questions ask too many things alike.
    pub(crate) fn asks_alike(&self, hit: &Hit) -> bool {
        const PARTICULAR: [&str; 5] = ["who", "why", "when", "where", "how"];
        self.question_word
            .as_deref()
            .is_some_and(|word| PARTICULAR.contains(&word))
            && self.answered_in_heading(hit)
            && question_word(hit.heading.as_deref().unwrap_or_default()) == self.question_word
    }

    /// Whether a passage may be quoted.
    pub(crate) fn bears_on(&self, hit: &Hit, found_about: bool) -> bool {
        self.bearing(hit, found_about) >= self.min_bearing
    }

    /// Whether the section is a catechism's definition of what a "what" question asks about:
    /// its heading asks "What is …?" of the one thing asked, or of the texts' wording for it
    /// ("What is the Holy Eucharist?" for the Real Presence). "Who gives confirmation?" is not
    /// answered by "What is Confirmation?".
    pub(crate) fn defines(&self, hit: &Hit) -> bool {
        let topics: Vec<&KeyTerm> = self.terms.iter().filter(|t| t.asked != "why").collect();
        let asks_what = self.question_word.as_deref() == Some("what");
        let ([term], true) = (
            topics.as_slice(),
            asks_what && hit.doc_type == "catechism" && !self.asks_christs_words,
        ) else {
            return false;
        };
        let Some(heading) = hit.heading.as_deref() else {
            return false;
        };
        let heading_words = words(heading);
        if !matches!(
            heading_words.as_slice(),
            [what, is, ..] if what == "what" && (is == "is" || is == "are")
        ) {
            return false;
        }
        let asked: BTreeSet<String> = heading_words
            .iter()
            .filter(|w| is_topic_word(w) && !["what", "is", "are"].contains(&w.as_str()))
            .map(|w| stem(w))
            .collect();
        let mut wordings = term.alternatives.clone();
        wordings.push(stems(&term.asked));
        wordings
            .iter()
            .any(|run| run.iter().cloned().collect::<BTreeSet<String>>() == asked)
    }

    /// Whether a passage is of the kind the question asks for: a verse of the Gospels (or a
    /// note on one) when it asks what Christ said.
    pub(crate) fn preferred(&self, hit: &Hit) -> bool {
        const GOSPELS: [&str; 4] = ["MAT", "MRK", "LUK", "JHN"];
        self.asks_christs_words
            && ["scripture", "commentary"].contains(&hit.doc_type.as_str())
            && GOSPELS
                .iter()
                .any(|book| hit.doc_id.ends_with(&format!("/{book}")))
    }

    /// Whether the question asks what Scripture says ("Where does the Bible speak of…?",
    /// "What does Scripture say…?"): an answer quotes Scripture beside its first passage.
    pub(crate) fn asks_for_scripture(&self) -> bool {
        self.asks_for_scripture
    }

    /// Whether a passage is a verse of the kind asked for (a Gospel's, for what Christ said):
    /// the same saying in another Gospel ("Whosoever shall put away his wife…", Matthew 5:32,
    /// 19:9, Mark 10:11) is part of the answer, not a verse sharing its words.
    pub(crate) fn a_verse_asked_for(&self, hit: &Hit) -> bool {
        hit.doc_type == "scripture" && self.preferred(hit)
    }

    /// The key terms as the question asked them, for the answer that finds nothing.
    pub(crate) fn asked(&self) -> Vec<&str> {
        self.terms
            .iter()
            .filter(|term| term.asked != "why")
            .map(|term| term.asked.as_str())
            .collect()
    }

    /// The texts' wordings of the question's modern wordings, each quoted as a phrase: a
    /// search for each finds the passages saying it, however long ("prevent conception" in a
    /// long section of the Roman Catechism on Matrimony).
    pub(crate) fn wording_queries(&self) -> Vec<String> {
        self.terms
            .iter()
            .filter_map(|term| term.texts_words)
            .flatten()
            .map(|wording| format!("\"{wording}\""))
            .collect()
    }

    /// The words of the key terms, as a search for them alone: the question without its
    /// speaker or its common words, which a name or a frequent word must not crowd out, and
    /// with a modern wording in the texts' words ("prevent conception" for "contraception",
    /// a word no text holds).
    pub(crate) fn topic_query(&self) -> String {
        self.terms
            .iter()
            .filter(|term| term.asked != "why")
            .map(|term| match &term.texts_words {
                Some(wordings) => wordings.join(" "),
                None => term.asked.clone(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The kind of question a text asks, by its first word: "which" asks as "what" does, and the
/// questions answered yes or no ("Is…", "Does…", "Can…") are one kind.
fn question_word(text: &str) -> Option<String> {
    const YES_OR_NO: &[&str] = &[
        "is", "are", "was", "were", "do", "does", "did", "can", "could", "may", "must", "should",
        "has", "have", "will", "would",
    ];
    let first = words(text).into_iter().next()?;
    Some(match first.as_str() {
        "which" => "what".to_string(),
        word if YES_OR_NO.contains(&word) => "yes or no".to_string(),
        _ => first,
    })
}

/// The stems of a passage's heading and text, in order.
fn held_stems(hit: &Hit) -> Vec<String> {
    let heading = hit.heading.as_deref().unwrap_or_default();
    words(heading)
        .iter()
        .chain(words(&hit.text).iter())
        .map(|w| stem(w))
        .collect()
}

/// The stems of a passage's text alone, in order.
fn text_stems(hit: &Hit) -> Vec<String> {
    words(&hit.text).iter().map(|w| stem(w)).collect()
}

/// The stems of a wording's words, in order.
fn stems(wording: &str) -> Vec<String> {
    words(wording).iter().map(|w| stem(w)).collect()
}

/// Whether the stems of a passage hold a run of stems in a row.
fn holds(held: &[String], run: &[String]) -> bool {
    !run.is_empty()
        && held.windows(run.len()).any(|window| {
            window
                .iter()
                .zip(run)
                .all(|(word, wanted)| same_stem(word, wanted))
        })
}

/// Whether a passage's stem is the wanted one: a full-length stem is a word start ("prese"
/// holds "presence" and "present"); a short one allows one more letter, so that "sin" holds
/// "sins" but not "since", and "pray" holds "prays" and "prayer".
fn same_stem(held: &str, wanted: &str) -> bool {
    let (held_chars, wanted_chars) = (held.chars().count(), wanted.chars().count());
    held.starts_with(wanted) && (wanted_chars >= STEM_CHARS || held_chars <= wanted_chars + 1)
}

#[cfg(test)]
mod tests {
    use corpus::{CorpusWriter, Document, Section};

    use super::*;

    /// A corpus where "sin" and "allowed" are common and the fifth Commandment's answer, a
    /// note with "abortive" and another with "allowed" compete.
    fn corpus() -> (tempfile::TempDir, Corpus) {
        let data = tempfile::tempdir().unwrap();
        let mut sections: Vec<Section> = (1..=40)
            .map(|n| Section {
                locus: n.to_string(),
                heading: None,
                text: format!("Every sin is allowed no excuse, says note {n}."),
            })
            .collect();
        sections.push(Section {
            locus: "368".into(),
            heading: Some("What is forbidden by the fifth Commandment?".into()),
            text: "The fifth Commandment forbids all wilful murder, fighting, anger, hatred, revenge, and bad example.".into(),
        });
        sections.push(Section {
            locus: "900".into(),
            heading: None,
            text: "Or prudence, else the best designs may prove abortive.".into(),
        });
        CorpusWriter::open(data.path())
            .unwrap()
            .upsert([Document {
                id: "cat:fixture".into(),
                title: "Fixture".into(),
                author: None,
                date: None,
                doc_type: "catechism".into(),
                language: "en".into(),
                reference: None,
                source_url: None,
                sections,
            }])
            .unwrap();
        let corpus = Corpus::open(data.path()).unwrap();
        (data, corpus)
    }

    fn hit(corpus: &Corpus, locus: &str) -> Hit {
        let section = corpus.section("cat:fixture", locus).unwrap().unwrap();
        Hit {
            id: format!("cat:fixture#{locus}"),
            doc_id: "cat:fixture".into(),
            locus: locus.into(),
            title: "Fixture".into(),
            author: None,
            year: None,
            doc_type: "catechism".into(),
            reference: None,
            heading: section.heading,
            snippet: String::new(),
            text: section.text,
            score: 1.0,
            source_url: None,
        }
    }

    #[test]
    fn a_passage_sharing_a_common_word_does_not_bear_on_the_question() {
        let (_data, corpus) = corpus();
        let judgement = Judgement::new("Is abortion a sin?", &corpus, MIN_BEARING);
        let commandment = hit(&corpus, "368");
        let abortive = hit(&corpus, "900");
        let common = hit(&corpus, "7");
        assert!(judgement.bears_on(&commandment, false));
        assert!(!judgement.bears_on(&abortive, false), "another sense");
        assert!(!judgement.bears_on(&common, false), "only the common word");
        assert!(judgement.bearing(&commandment, false) > judgement.bearing(&common, false));
        assert_eq!(judgement.asked(), ["abortion", "sin"]);
    }

    #[test]
    fn a_speaker_is_no_key_term_but_a_topic_person_is() {
        let (_data, corpus) = corpus();
        let speaking = Judgement::new("What did Jesus say about divorce?", &corpus, MIN_BEARING);
        assert_eq!(speaking.asked(), ["divorce"]);
        assert!(speaking.asks_christs_words);
        let topic = Judgement::new("Why do Catholics pray to Mary?", &corpus, MIN_BEARING);
        assert_eq!(topic.asked(), ["pray", "mary"]);
    }

    #[test]
    fn a_question_naming_the_bible_asks_for_scripture() {
        let (_data, corpus) = corpus();
        let asked =
            |question: &str| Judgement::new(question, &corpus, MIN_BEARING).asks_for_scripture();
        assert!(asked("Where does the Bible speak of praying for the dead?"));
        assert!(asked("What does Scripture say about fasting?"));
        assert!(!asked("Why do Catholics pray for the dead?"));
    }

    #[test]
    fn a_run_is_held_in_a_row_by_word_starts() {
        let held = stems("whosoever shall put away his wife committeth adultery");
        assert!(holds(&held, &stems("put away his wife")));
        assert!(!holds(&held, &stems("put away her husband")));
        assert!(holds(
            &stems("The Fifth Commandment forbids"),
            &stems("fifth commandment")
        ));
        assert!(holds(&stems("their sins"), &stems("sin")));
        assert!(!holds(&stems("ever since"), &stems("sin")));
        assert!(holds(&stems("a prayer"), &stems("pray")));
    }
}
