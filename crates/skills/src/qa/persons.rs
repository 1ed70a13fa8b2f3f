//! Questions about a person: "Who was Saint Joseph?", "Who was St. Elizabeth?".
//!
//! A name alone is a weak query: every verse mentioning any Joseph matches it, and a catechism
//! answer that lists him among others ("Angels appeared to the Blessed Virgin and St. Joseph")
//! scores like the one that says who he was. Two rules, for every name:
//! - a catechism answer that names the person as its subject (its text opens with the name,
//!   after a saint's title: "St. Joseph, the husband of the Blessed Virgin, was…") is cited
//!   before passages that only mention them (a catechism answer repeats the subject of its
//!   question; a verse opening with a name is narrative, and may be about a namesake);
//! - what Scripture says of the person is looked for with the words of that passage: the verses
//!   holding the name and the most of those words ("husband", "virgin") are the ones about this
//!   person, not a namesake, and are cited right after it.

use std::collections::BTreeSet;

use corpus::Hit;

use super::judgement::Judgement;
use super::retrieval::{content_words, words};

/// Saint's titles that may stand before the name at the start of a passage.
const TITLES: [&str; 4] = ["st", "saint", "s", "blessed"];
/// Verses about the person added after the passage that says who they were.
pub(crate) const SCRIPTURE_VERSES: usize = 2;
/// Words of the defining passage used to find the verses: enough to say who the person is.
const DEFINING_WORDS: usize = 12;

/// Whether the section is a catechism answer whose text opens with one of the names (after a
/// saint's title).
pub(crate) fn names_as_subject(hit: &Hit, names: &[String]) -> bool {
    if hit.doc_type != "catechism" {
        return false;
    }
    let opening = words(&hit.text);
    let first = opening
        .iter()
        .find(|word| !TITLES.contains(&word.as_str()))
        .map(String::as_str);
    first.is_some_and(|first| {
        names
            .iter()
            .any(|name| words(name).first().map(String::as_str) == Some(first))
    })
}

/// The search for what Scripture says of the person a passage defines: the name, quoted so
/// that it must appear, and the passage's other content words, which rank the verses about
/// this person above those about a namesake.
pub(crate) fn scripture_query(names: &[String], defining: &Hit) -> String {
    let named: BTreeSet<String> = names.iter().flat_map(|name| words(name)).collect();
    let mut seen = BTreeSet::new();
    let described: Vec<String> = content_words(&defining.text)
        .into_iter()
        .filter(|word| !named.contains(word) && !TITLES.contains(&word.as_str()))
        .filter(|word| seen.insert(word.clone()))
        .take(DEFINING_WORDS)
        .collect();
    let quoted: Vec<String> = names.iter().map(|name| format!("\"{name}\"")).collect();
    format!("{} {}", quoted.join(" "), described.join(" "))
}

/// Hits in citing order: a catechism asking the very question first, then a catechism answer
/// defining what the question asks about ("What is the Holy Eucharist?"), then (for a question
/// naming persons) the passages naming a person as their subject, then the verses found about
/// them (`about`, by id), then the rest: the kind of passage the question asks for first (see
/// [`Judgement::preferred`]), then by the most specific wording of a moral act held (see
/// [`Judgement::first_wording`]), then a text before a commentary on it (the verse before
/// Haydock's note). Each group otherwise keeps its search order: every passage left bears on
/// the question, and the search ranks them better than their share of its words; but among the
/// rest, a catechism's answer is told by its question, which says what the answer is about:
/// those answers trade places among themselves by how much of the user's question their own
/// holds (see [`questions_asking_most_first`]).
pub(crate) fn citing_order(
    hits: Vec<Hit>,
    stems: &BTreeSet<String>,
    names: &[String],
    about: &[String],
    judgement: &Judgement,
) -> Vec<Hit> {
    let mut keyed: Vec<((u8, bool, usize, bool), Hit)> = hits
        .into_iter()
        .map(|hit| {
            let group = if judgement.asks(&hit, stems) {
                0
            } else if judgement.defines(&hit) {
                1
            } else if !names.is_empty() && names_as_subject(&hit, names) {
                2
            } else if about.contains(&hit.id) {
                3
            } else {
                4
            };
            let rest = if group == 4 {
                (
                    !judgement.preferred(&hit),
                    judgement.first_wording(&hit),
                    hit.doc_type == "commentary",
                )
            } else {
                (false, 0, false)
            };
            ((group, rest.0, rest.1, rest.2), hit)
        })
        .collect();
    keyed.sort_by_key(|(key, _)| *key);
    let asked_first = keyed.iter().filter(|(key, _)| key.0 < 4).count();
    let mut ordered: Vec<Hit> = keyed.into_iter().map(|(_, hit)| hit).collect();
    questions_asking_most_first(&mut ordered[asked_first..], judgement);
    ordered
}

/// Reorders the catechism answers among themselves, the others keeping their places: the
/// answer whose question holds the most of what the user asks comes first ("Does not a divorce
/// granted by courts of justice break the bond of marriage?" before "Why should Catholics avoid
/// mixed marriages?" for "Can a divorced Catholic marry again?"); among equals, the citing
/// order stays.
fn questions_asking_most_first(ordered: &mut [Hit], judgement: &Judgement) {
    let places: Vec<usize> = ordered
        .iter()
        .enumerate()
        .filter(|(_, hit)| is_question_answered(hit))
        .map(|(at, _)| at)
        .collect();
    let mut answers: Vec<Hit> = places.iter().map(|&at| ordered[at].clone()).collect();
    // In thousandths, to sort; best first, the sort keeping the order of equals.
    answers.sort_by_key(|hit| {
        let heading = hit.heading.as_deref().unwrap_or_default();
        std::cmp::Reverse((judgement.weight_held(heading) * 1000.0).round() as u32)
    });
    for (at, hit) in places.into_iter().zip(answers) {
        ordered[at] = hit;
    }
}

/// Whether a hit is a catechism's answer to the question of its heading.
fn is_question_answered(hit: &Hit) -> bool {
    hit.doc_type == "catechism"
        && hit
            .heading
            .as_deref()
            .is_some_and(|h| h.trim_end().ends_with('?'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, text: &str) -> Hit {
        Hit {
            id: id.into(),
            doc_id: id.split('#').next().unwrap_or(id).into(),
            locus: "1".into(),
            title: "Fixture".into(),
            author: None,
            year: None,
            doc_type: "catechism".into(),
            reference: None,
            heading: None,
            snippet: String::new(),
            text: text.into(),
            score: 1.0,
            source_url: None,
        }
    }

    /// A judgement on an empty corpus: no word weighs anything, so every passage bears.
    fn unweighed(question: &str) -> Judgement {
        Judgement::new(
            question,
            &corpus::Corpus::empty(),
            super::super::MIN_BEARING,
        )
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    /// A corpus of one section holding none of the words asked: every word asked weighs the
    /// same.
    fn weighing_corpus() -> (tempfile::TempDir, corpus::Corpus) {
        let data = tempfile::tempdir().unwrap();
        corpus::CorpusWriter::open(data.path())
            .unwrap()
            .upsert([corpus::Document {
                id: "cat:filler".into(),
                title: "Filler".into(),
                author: None,
                date: None,
                doc_type: "catechism".into(),
                language: "en".into(),
                reference: None,
                source_url: None,
                sections: vec![corpus::Section {
                    locus: "1".into(),
                    heading: None,
                    text: "Nothing of the question here.".into(),
                }],
            }])
            .unwrap();
        let corpus = corpus::Corpus::open(data.path()).unwrap();
        (data, corpus)
    }

    #[test]
    fn the_catechism_answer_whose_question_holds_most_of_the_users_comes_first() {
        let (_data, corpus) = weighing_corpus();
        let question = "Must pilgrims visit shrines?";
        let judgement = Judgement::new(question, &corpus, super::super::MIN_BEARING);
        let mut travelling = hit("cat:b#1", "Pilgrims travel together for safety.");
        travelling.heading = Some("Why should pilgrims travel together?".into());
        let mut verse = hit(
            "bible:dr/PSA#83:6",
            "Blessed is the man: in his heart he hath disposed to ascend by steps.",
        );
        verse.doc_type = "scripture".into();
        let mut bound = hit("cat:b#2", "Pilgrims are bound to visit them with devotion.");
        bound.heading = Some("Are pilgrims bound to visit the shrines of the saints?".into());
        let stems = super::super::retrieval::topic_stems(question);
        let ordered = citing_order(vec![travelling, verse, bound], &stems, &[], &[], &judgement);
        let ids: Vec<&str> = ordered.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["cat:b#2", "bible:dr/PSA#83:6", "cat:b#1"]);
    }

    #[test]
    fn a_passage_opening_with_the_name_names_its_subject() {
        let joseph = names(&["Joseph"]);
        assert!(names_as_subject(
            &hit(
                "a",
                "St. Joseph, the husband of the Blessed Virgin, was the foster-father."
            ),
            &joseph
        ));
        assert!(names_as_subject(
            &hit("a", "Joseph was a just man."),
            &joseph
        ));
        assert!(!names_as_subject(
            &hit("a", "Angels appeared to the Blessed Virgin and St. Joseph."),
            &joseph
        ));
        assert!(!names_as_subject(
            &hit("a", "St. Peter was the first Pope."),
            &joseph
        ));
        let mut verse = hit(
            "bible:dr/GEN#37:2",
            "Joseph, when he was sixteen years old, was feeding the flock.",
        );
        verse.doc_type = "scripture".into();
        assert!(
            !names_as_subject(&verse, &joseph),
            "a verse is not a definition"
        );
    }

    #[test]
    fn scripture_is_searched_with_the_name_and_what_the_passage_says() {
        let defining = hit(
            "cat:b#334",
            "St. Joseph, the husband of the Blessed Virgin, was the foster-father or guardian of Our Lord.",
        );
        assert_eq!(
            scripture_query(&names(&["Joseph"]), &defining),
            "\"Joseph\" husband virgin foster father guardian lord"
        );
    }

    #[test]
    fn the_passage_about_the_person_and_the_verses_come_before_mentions() {
        let mut asked = hit("cat:b#1", "Grace is a gift.");
        asked.heading = Some("What is grace?".into());
        let hits = vec![
            hit(
                "cat:b#218",
                "Angels appeared to the Blessed Virgin and St. Joseph.",
            ),
            hit(
                "bible:dr/GEN#37:3",
                "Now Israel loved Joseph above all his sons.",
            ),
            hit(
                "cat:b#334",
                "St. Joseph, the husband of the Blessed Virgin, was the foster-father.",
            ),
            hit(
                "bible:dr/MAT#1:16",
                "And Jacob begot Joseph the husband of Mary.",
            ),
        ];
        let stems = super::super::retrieval::topic_stems("Who was Saint Joseph?");
        let about = ["bible:dr/MAT#1:16".to_string()];
        let judgement = unweighed("Who was Saint Joseph?");
        let ordered = citing_order(hits, &stems, &names(&["Joseph"]), &about, &judgement);
        let ids: Vec<&str> = ordered.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "cat:b#334",
                "bible:dr/MAT#1:16",
                "cat:b#218",
                "bible:dr/GEN#37:3"
            ]
        );
        // Without names, only the question asked moves.
        let plain = vec![hit("x", "Grace upon grace."), asked.clone()];
        let grace = super::super::retrieval::topic_stems("What is grace?");
        let ordered = citing_order(plain, &grace, &[], &[], &unweighed("What is grace?"));
        assert_eq!(ordered[0].id, "cat:b#1");
        assert_eq!(ordered[1].id, "x");
    }
}
