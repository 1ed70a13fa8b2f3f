//! `catholic_qa` asked about the calendar: the readings of a day, the saint of a date, the date
//! of an occasion are answered from the calendar engine and the Lectionary, cited as sources,
//! instead of from catechism passages; a question about teaching is not taken for one.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use corpus::Corpus;
use skills::qa::{CalendarFacts, CatholicQa, LlmSettings};
use skills::readings::LiturgicalReadings;
use skills::saints::SaintsOfTheDay;
use skills::{LiturgySettings, Skill, SkillOutput, SkillRequest};

use crate::llm_backend::{Backend, Reply};

/// The skill over an empty corpus, knowing the calendar, with these model settings.
fn knowing_the_calendar(data: &tempfile::TempDir, llm: &LlmSettings) -> CatholicQa {
    let corpus = Arc::new(Corpus::open(data.path()).unwrap());
    let settings = LiturgySettings::default();
    let day = SaintsOfTheDay::new(&settings, data.path()).unwrap();
    let readings = LiturgicalReadings::new(&settings, data.path()).unwrap();
    CatholicQa::new(corpus, llm)
        .unwrap()
        .with_calendar(CalendarFacts::new(Arc::new(day), Arc::new(readings)))
}

/// A question asked on Thursday 3 December 2026, at noon UTC.
fn asked(text: &str) -> SkillRequest {
    SkillRequest::from_text(text, Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap())
}

fn cited_ids(output: &SkillOutput) -> Vec<String> {
    output.data["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["document_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_readings_of_next_sunday_come_from_the_lectionary_cited() {
    let data = tempfile::tempdir().unwrap();
    let qa = knowing_the_calendar(&data, &LlmSettings::default());
    let output = qa
        .run(asked("What are the readings for next Sunday?"))
        .await
        .unwrap();
    assert_eq!(output.artifact_name, "answer");
    assert_eq!(output.data["mode"], "extractive");
    let answer = output.data["answer"].as_str().unwrap();
    assert!(
        answer.contains("Mk 1:1-8"),
        "the Gospel of Advent II, year B: {answer}"
    );
    assert!(answer.contains("[1]"), "{answer}");
    assert_eq!(
        cited_ids(&output),
        [
            "liturgical_readings:2026-12-06",
            "saints_of_the_day:2026-12-06"
        ]
    );
    let citation = &output.data["citations"][0];
    assert!(
        citation["cited_text"]
            .as_str()
            .unwrap()
            .contains("Mk 1:1-8"),
        "{citation}"
    );
    assert!(output.text.contains("Sources"), "{}", output.text);
}

#[tokio::test]
async fn the_saint_of_a_date_and_the_date_of_an_occasion_come_from_the_calendar() {
    let data = tempfile::tempdir().unwrap();
    let qa = knowing_the_calendar(&data, &LlmSettings::default());
    let saint = qa
        .run(asked("Which saint is celebrated on 4 October?"))
        .await
        .unwrap();
    let answer = saint.data["answer"].as_str().unwrap();
    assert!(answer.contains("Francis"), "{answer}");
    assert_eq!(cited_ids(&saint)[0], "saints_of_the_day:2027-10-04");

    let ash = qa
        .run(asked("When is Ash Wednesday in 2027?"))
        .await
        .unwrap();
    let answer = ash.data["answer"].as_str().unwrap();
    assert!(answer.contains("10 February 2027"), "{answer}");
    assert_eq!(cited_ids(&ash)[0], "saints_of_the_day:2027-02-10");
}

#[tokio::test]
async fn a_question_about_teaching_is_not_taken_for_a_calendar_one() {
    let data = tempfile::tempdir().unwrap();
    let qa = knowing_the_calendar(&data, &LlmSettings::default());
    for question in [
        "Why do we celebrate Easter?",
        "What does the Church teach about the feast of the Assumption?",
        "When is baptism necessary?",
    ] {
        let output = qa.run(asked(question)).await.unwrap();
        assert!(
            cited_ids(&output).is_empty(),
            "{question}: {:?}",
            output.data
        );
        assert!(
            output.text.contains("corpus of this server is empty"),
            "{question} goes to the corpus: {}",
            output.text
        );
    }
}

#[tokio::test]
async fn a_model_is_given_the_calendar_facts_as_its_passages() {
    let backend = Backend::scripted(vec![Reply::Completion(
        "The Gospel next Sunday is Mk 1:1-8 [1].".into(),
    )])
    .await;
    let data = tempfile::tempdir().unwrap();
    let llm = LlmSettings {
        base_url: Some(backend.base_url()),
        model: "configured-model".into(),
        timeout_secs: 2,
        ..LlmSettings::default()
    };
    let qa = knowing_the_calendar(&data, &llm);
    let output = qa
        .run(asked("What are the readings for next Sunday?"))
        .await
        .unwrap();
    assert_eq!(output.data["mode"], "llm");
    assert_eq!(
        output.data["answer"],
        "The Gospel next Sunday is Mk 1:1-8 [1]."
    );
    assert_eq!(cited_ids(&output), ["liturgical_readings:2026-12-06"]);
    let calls = backend.exchanges();
    assert_eq!(calls.len(), 1);
    let prompt: String = calls[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        prompt.contains("Mk 1:1-8"),
        "the readings are a passage: {prompt}"
    );
    assert!(
        prompt.contains("Second Sunday of Advent"),
        "the day is a passage: {prompt}"
    );
}
