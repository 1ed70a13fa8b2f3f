//! `catholic_qa` on a question plainly about the calendar ("What are the readings for next
//! Sunday?", "Which saint is celebrated on 4 October?", "When is Ash Wednesday in 2027?"): the
//! answer comes from the calendar engine and the Lectionary (through the two calendar skills,
//! so it says what they say), each cited as a source, instead of from catechism passages that
//! share a word with the question. With a model, those facts are its passages.
//!
//! A question is taken for a calendar one when its words ask for a day's readings, for a date
//! ("when is", "what day"), or for the saint or feast of a day ("Which saint", "Whose feast",
//! "What is celebrated"), is not about teaching, meaning or prayer, and the calendar's own date
//! reader finds a date in it. Anything else goes to the corpus as before.

use std::sync::Arc;

use corpus::Hit;
use serde_json::Map;

use super::extractive::EXTRACTIVE_OPENING;
use super::{Answer, CatholicQa, Mode, Passage};
use crate::events::ChunkSender;
use crate::{Skill, SkillError, SkillOutput, SkillRequest};

/// The calendar skills whose answers `catholic_qa` gives as facts: the day and its
/// celebrations (`saints_of_the_day`) and its Mass readings (`liturgical_readings`).
pub struct CalendarFacts {
    day: Arc<dyn Skill>,
    readings: Arc<dyn Skill>,
}

/// What a calendar question asks for first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// The Mass readings of a day.
    Readings,
    /// A day: its date, its celebrations, its saints.
    Day,
}

/// Words that ask for a day's readings.
const READINGS_WORDS: [&str; 3] = ["readings", "lectionary", "lessons"];
/// A word naming one reading, asking for a day's when followed by one of [`FOR_A_DAY`].
const ONE_READING: [&str; 4] = ["reading", "gospel", "psalm", "epistle"];
const FOR_A_DAY: [&str; 3] = ["for", "on", "today"];
/// Words that, right after which, what, whose or who, ask what a day celebrates ("Which
/// saint", "Whose feast", "What colour").
const KEPT_NOUNS: [&str; 9] = [
    "saint",
    "saints",
    "feast",
    "feasts",
    "memorial",
    "solemnity",
    "celebration",
    "color",
    "colour",
];
/// Words that, anywhere in a question asked with which, what, whose or who, ask what a day
/// celebrates ("What is celebrated on 8 December?").
const KEPT_VERBS: [&str; 3] = ["celebrated", "commemorated", "kept"];
/// Words that make a question about teaching, meaning or devotion, not about the calendar.
const TEACHING_WORDS: [&str; 14] = [
    "teach",
    "teaches",
    "taught",
    "teaching",
    "mean",
    "means",
    "meaning",
    "why",
    "believe",
    "significance",
    "about",
    "pray",
    "prayer",
    "history",
];

impl CalendarFacts {
    /// The facts of the day skill (`saints_of_the_day`) and the readings skill
    /// (`liturgical_readings`).
    pub fn new(day: Arc<dyn Skill>, readings: Arc<dyn Skill>) -> Self {
        CalendarFacts { day, readings }
    }

    /// The facts answering a calendar question, as hits in citing order; `None` when the
    /// question is not about the calendar or names no date the calendar reads.
    async fn hits(
        &self,
        question: &str,
        request: &SkillRequest,
    ) -> Result<Option<Vec<Hit>>, SkillError> {
        let Some(asked) = calendar_question(question) else {
            return Ok(None);
        };
        let ask = SkillRequest {
            text: question.to_string(),
            data: Map::new(),
            history: Vec::new(),
            now: request.now,
            accept_language: request.accept_language.clone(),
        };
        let day = match self.day.run(ask.clone()).await {
            Ok(day) => day,
            // No date in it, or one the calendar does not cover: a question for the corpus.
            Err(SkillError::Failed(_) | SkillError::InvalidInput(_)) => return Ok(None),
            Err(fault) => return Err(fault),
        };
        let readings = self.readings.run(ask).await?;
        let day = fact(self.day.info().id, "Liturgical calendar", day);
        let readings = fact(self.readings.info().id, "Lectionary for Mass", readings);
        Ok(Some(match asked {
            Asked::Readings => vec![readings, day],
            Asked::Day => vec![day, readings],
        }))
    }
}

/// A calendar skill's answer as a cited source: its id names the skill and the date, which that
/// skill answers for again with `{"date": ...}`.
fn fact(skill_id: &str, title: &str, output: SkillOutput) -> Hit {
    let date = output.data["date"].as_str().unwrap_or_default().to_string();
    Hit {
        id: format!("{skill_id}:{date}"),
        doc_id: skill_id.to_string(),
        locus: date,
        title: title.to_string(),
        author: None,
        year: None,
        doc_type: "calendar".into(),
        reference: None,
        heading: None,
        snippet: String::new(),
        text: output.text,
        score: 1.0,
        source_url: None,
    }
}

/// What a question asks of the calendar, when its words plainly ask for one (the date is
/// checked after, by the calendar).
fn calendar_question(question: &str) -> Option<Asked> {
    let lowered = question.to_lowercase();
    let words: Vec<&str> = lowered
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |set: &[&str]| words.iter().any(|w| set.contains(w));
    let one_reading = words
        .windows(2)
        .any(|pair| ONE_READING.contains(&pair[0]) && FOR_A_DAY.contains(&pair[1]));
    if has(&TEACHING_WORDS) {
        return None;
    }
    if has(&READINGS_WORDS) || one_reading {
        return Some(Asked::Readings);
    }
    let (first, second) = (words.first().copied()?, words.get(1).copied());
    let asks_when = matches!(
        (first, second),
        ("when", Some("is" | "was" | "will" | "does" | "do" | "are"))
            | ("what" | "which", Some("date" | "day"))
            | ("on", Some("what" | "which"))
    );
    let asks_what_is_kept = matches!(first, "which" | "what" | "whose" | "who")
        && (second.is_some_and(|w| KEPT_NOUNS.contains(&w)) || has(&KEPT_VERBS));
    (asks_when || asks_what_is_kept).then_some(Asked::Day)
}

impl CatholicQa {
    /// The answer from the calendar to a calendar question (`None` for any other, or without
    /// calendar facts): written by the model from them as its passages, or quoted whole.
    pub(super) async fn answer_from_calendar(
        &self,
        question: &str,
        request: &SkillRequest,
        chunks: Option<&mut ChunkSender>,
    ) -> Result<Option<Answer>, SkillError> {
        let Some(facts) = &self.calendar else {
            return Ok(None);
        };
        let Some(hits) = facts.hits(question, request).await? else {
            return Ok(None);
        };
        if let Some(backend) = &self.backend {
            let passages = hits.into_iter().map(Passage::new).collect();
            return self
                .answer_with_model(backend, question, request, passages, chunks)
                .await
                .map(Some);
        }
        let mut text = EXTRACTIVE_OPENING.replace("from the corpus", "from the calendar");
        for (index, hit) in hits.iter().enumerate() {
            text.push_str(&format!(
                "\n\n{}, {}:\n{} [{}]",
                hit.title,
                hit.locus,
                hit.text.trim_end(),
                index + 1
            ));
        }
        Ok(Some(Answer {
            text,
            passages: hits.into_iter().map(Passage::new).collect(),
            mode: Mode::Extractive,
            model: None,
            streamed: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_questions_are_told_from_questions_about_teaching() {
        for (question, asked) in [
            (
                "What are the readings for next Sunday?",
                Some(Asked::Readings),
            ),
            ("What is the gospel for Christmas?", Some(Asked::Readings)),
            ("Which saint is celebrated on 4 October?", Some(Asked::Day)),
            ("When is Ash Wednesday in 2027?", Some(Asked::Day)),
            ("What day is Pentecost next year?", Some(Asked::Day)),
            ("Whose feast is it today?", Some(Asked::Day)),
            ("Why do we celebrate Easter?", None),
            (
                "What does the Church teach about the feast of the Assumption?",
                None,
            ),
            ("Who was Saint Joseph?", None),
            ("What is the feast of the Assumption?", None),
            ("What is the Eucharist?", None),
        ] {
            assert_eq!(calendar_question(question), asked, "{question}");
        }
    }
}
