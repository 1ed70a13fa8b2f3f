//! What an extractive answer quotes beside its first passage: of each kind of source, one
//! place.
//!
//! Every passage left after the judgement bears on the question, but most bear on it alike
//! (the judgement's bearing is 1 for nearly all of them), and an answer quoting the passages
//! in citing order strays: the neighbouring question of a catechism ("What is the eighth
//! Commandment?" after "What is forbidden by the eighth Commandment?"), a verse of another
//! book sharing the words, Haydock's note on a verse the answer does not quote. The first
//! passage of each kind sets the place that kind is quoted from:
//! - the catechisms: one answer (or one section of the Roman Catechism), the first cited; the
//!   same answer in the other catechisms is named with it (see `Passage::distinct`);
//! - Scripture, verses and Haydock's notes on them: the verses and notes of the same chapter
//!   within [`NEAR_VERSES`] of the first cited, the passage it is read in;
//! - any other kind of document (an encyclical, a council's decree): the sections of one
//!   document, the first cited's, which follow one argument (where a catechism's next answer
//!   is another subject).
//!
//! A question asking where Scripture says something ("Where does the Bible speak of praying
//! for the dead?") is answered by Scripture: after the first passage, only verses and notes.
//!
//! Some passages are part of the answer wherever they stand, and stay: the verses the
//! question's person was found in (about "Saint Joseph", after the catechism answer saying
//! who he was), and for what Christ said, the same saying in another Gospel.

use corpus::Hit;

use super::Passage;
use super::judgement::Judgement;

/// How many verses from the first one a verse or note may be and still be read in the same
/// passage: a Gospel's saying and its setting ("Whosoever shall put away his wife…", Matthew
/// 5:31–32; 19:3–9).
pub(crate) const NEAR_VERSES: u32 = 5;

/// The passages of `passages` (in citing order) that an extractive answer quotes: the first;
/// then, of each kind (only Scripture's when the question asks for it), those of the place
/// the kind's first passage sets; and those found about the question's person (`about`, by
/// id) or asked for (see [`Judgement::a_verse_asked_for`]).
pub(crate) fn same_place(
    passages: Vec<Passage>,
    judgement: &Judgement,
    about: &[String],
) -> Vec<Passage> {
    let mut places: Vec<Place> = Vec::new();
    passages
        .into_iter()
        .filter(|passage| {
            let hit = &passage.hit;
            let place = Place::of(hit);
            let set = places.iter().find(|set| set.kind() == place.kind());
            let quoted = places.is_empty()
                || about.contains(&hit.id)
                || judgement.a_verse_asked_for(hit)
                || (place.kind() == "bible" || !judgement.asks_for_scripture())
                    && set.is_none_or(|set| set.holds(&place));
            if quoted && set.is_none() {
                places.push(place);
            }
            quoted
        })
        .collect()
}

/// Where a passage stands, as far as quoting beside it goes.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    /// A verse of Scripture (`bible:dr/MAT#16:19`) or a note on one (`com:haydock/MAT#16:19`):
    /// its book, chapter and verse.
    Bible {
        book: String,
        chapter: u32,
        verse: u32,
    },
    /// A catechism's answer, by its id: a place of its own.
    Answer { id: String },
    /// A section of any other kind of document, by its kind and document.
    Document { kind: String, doc_id: String },
}

impl Place {
    fn of(hit: &Hit) -> Place {
        Place::in_the_bible(hit).unwrap_or_else(|| match hit.doc_type.as_str() {
            "catechism" => Place::Answer { id: hit.id.clone() },
            kind => Place::Document {
                kind: kind.to_string(),
                doc_id: hit.doc_id.clone(),
            },
        })
    }

    /// The place of a verse or a note on one; `None` for any other passage, or a locus that
    /// is no chapter and verse.
    fn in_the_bible(hit: &Hit) -> Option<Place> {
        if !["scripture", "commentary"].contains(&hit.doc_type.as_str()) {
            return None;
        }
        let book = hit.doc_id.rsplit('/').next()?;
        let (chapter, verse) = hit.locus.split_once(':')?;
        Some(Place::Bible {
            book: book.to_string(),
            chapter: chapter.trim().parse().ok()?,
            verse: verse.trim().parse().ok()?,
        })
    }

    /// The kind of source whose first passage sets where it is quoted from.
    fn kind(&self) -> &str {
        match self {
            Place::Bible { .. } => "bible",
            Place::Answer { .. } => "catechism",
            Place::Document { kind, .. } => kind,
        }
    }

    /// Whether another passage of the same kind is read in this place.
    fn holds(&self, other: &Place) -> bool {
        match (self, other) {
            (
                Place::Bible {
                    book,
                    chapter,
                    verse,
                },
                Place::Bible {
                    book: other_book,
                    chapter: other_chapter,
                    verse: other_verse,
                },
            ) => {
                book == other_book
                    && chapter == other_chapter
                    && verse.abs_diff(*other_verse) <= NEAR_VERSES
            }
            _ => self == other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The judgement of a question on an empty corpus: what kind of passage it asks for.
    fn judgement(question: &str) -> Judgement {
        Judgement::new(
            question,
            &corpus::Corpus::empty(),
            super::super::MIN_BEARING,
        )
    }

    fn passage(id: &str, doc_type: &str) -> Passage {
        let (doc_id, locus) = id.split_once('#').unwrap();
        Passage::new(Hit {
            id: id.into(),
            doc_id: doc_id.into(),
            locus: locus.into(),
            title: "Fixture".into(),
            author: None,
            year: None,
            doc_type: doc_type.into(),
            reference: None,
            heading: None,
            snippet: String::new(),
            text: format!("The text of {id}."),
            score: 1.0,
            source_url: None,
        })
    }

    fn ids(passages: &[Passage]) -> Vec<&str> {
        passages.iter().map(|p| p.hit.id.as_str()).collect()
    }

    #[test]
    fn one_catechism_answer_is_quoted_and_one_document_of_another_kind() {
        let quoted = same_place(
            vec![
                passage("cat:baltimore-1#380", "catechism"),
                passage("cat:baltimore-3#1311", "catechism"),
                passage("mag:pope/letter#4", "encyclical"),
                passage("cat:baltimore-1#378", "catechism"),
                passage("bible:dr/MAT#5:37", "scripture"),
                passage("mag:pope/letter#9", "encyclical"),
                passage("mag:council/decree#2", "encyclical"),
            ],
            &judgement("Is it a sin to gossip about others?"),
            &[],
        );
        assert_eq!(
            ids(&quoted),
            [
                "cat:baltimore-1#380",
                "mag:pope/letter#4",
                "bible:dr/MAT#5:37",
                "mag:pope/letter#9"
            ]
        );
    }

    #[test]
    fn a_verse_cited_first_is_quoted_with_its_neighbours_and_their_notes() {
        let quoted = same_place(
            vec![
                passage("bible:dr/MAT#16:19", "scripture"),
                passage("com:haydock/ISA#22:22", "commentary"),
                passage("bible:dr/MAT#16:18", "scripture"),
                passage("bible:dr/MAT#17:19", "scripture"),
                passage("bible:dr/MAT#16:28", "scripture"),
                passage("com:haydock/MAT#16:19", "commentary"),
                passage("bible:dr/JOB#16:19", "scripture"),
            ],
            &judgement("Where did Jesus give Peter the keys?"),
            &[],
        );
        assert_eq!(
            ids(&quoted),
            [
                "bible:dr/MAT#16:19",
                "bible:dr/MAT#16:18",
                "com:haydock/MAT#16:19"
            ]
        );
    }

    #[test]
    fn the_verses_found_about_a_person_stay() {
        let quoted = same_place(
            vec![
                passage("cat:baltimore-3#334", "catechism"),
                passage("bible:dr/MAT#1:16", "scripture"),
                passage("cat:baltimore-3#218", "catechism"),
                passage("bible:dr/LUK#2:4", "scripture"),
                passage("bible:dr/LUK#3:23", "scripture"),
            ],
            &judgement("Who was Saint Joseph?"),
            &["bible:dr/MAT#1:16".into(), "bible:dr/LUK#2:4".into()],
        );
        assert_eq!(
            ids(&quoted),
            [
                "cat:baltimore-3#334",
                "bible:dr/MAT#1:16",
                "bible:dr/LUK#2:4"
            ]
        );
    }

    #[test]
    fn what_christ_said_is_quoted_from_every_gospel_and_notes_only_beside_their_verse() {
        let quoted = same_place(
            vec![
                passage("bible:dr/MAT#5:31", "scripture"),
                passage("com:haydock/MAT#19:3", "commentary"),
                passage("bible:dr/MRK#10:12", "scripture"),
                passage("bible:dr/JER#3:1", "scripture"),
                passage("com:haydock/MAT#5:32", "commentary"),
            ],
            &judgement("What did Jesus say about divorce?"),
            &[],
        );
        assert_eq!(
            ids(&quoted),
            [
                "bible:dr/MAT#5:31",
                "bible:dr/MRK#10:12",
                "com:haydock/MAT#5:32"
            ]
        );
    }

    #[test]
    fn a_question_asking_for_scripture_is_answered_by_scripture() {
        let quoted = same_place(
            vec![
                passage("bible:dr/2MA#12:45", "scripture"),
                passage("cat:baltimore-2#222", "catechism"),
                passage("bible:dr/2MA#12:44", "scripture"),
                passage("mag:pope/letter#4", "encyclical"),
            ],
            &judgement("Where does the Bible speak of praying for the dead?"),
            &[],
        );
        assert_eq!(ids(&quoted), ["bible:dr/2MA#12:45", "bible:dr/2MA#12:44"]);
    }
}
