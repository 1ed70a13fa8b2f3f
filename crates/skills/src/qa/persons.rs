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
/// the question, and the search ranks them better than their share of its words.
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
    keyed.into_iter().map(|(_, hit)| hit).collect()
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
