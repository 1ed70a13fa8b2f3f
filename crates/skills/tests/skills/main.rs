//! The skills over real data: both calendar skills answer for every date from 1970 to 2200 (a
//! completed task with the date asked for and at least one Mass or celebration, never a failure
//! or a panic), and `catholic_qa` and `document_search` answer from a small starter corpus of
//! real texts, in BM25 and (with the `embeddings` feature) hybrid mode. `catholic_qa` answers
//! over a corpus written for its tests (`catholic_qa`), and writes and streams its answers with
//! a real OpenAI-compatible server on loopback (`llm_backend`, `catholic_qa`, `streaming`; over
//! one shared HTTP/2 connection in `http2`), and answers questions about the calendar from the
//! calendar skills (`calendar_qa`).

mod calendar_qa;
mod catholic_qa;
mod http2;
mod llm_backend;
mod streaming;
mod trust;

use chrono::{Datelike, NaiveDate, Utc};
use serde_json::{Map, Value};
use skills::readings::LiturgicalReadings;
use skills::saints::SaintsOfTheDay;
use skills::{LiturgySettings, Skill, SkillRequest};

fn request(date: NaiveDate) -> SkillRequest {
    let mut data = Map::new();
    data.insert("date".into(), Value::String(date.to_string()));
    SkillRequest {
        text: String::new(),
        data,
        history: Vec::new(),
        now: Utc::now(),
        accept_language: None,
    }
}

#[tokio::test]
async fn calendar_skills_answer_every_day_from_1970_to_2200() {
    let data_dir = tempfile::tempdir().unwrap();
    let settings = LiturgySettings::default();
    let readings = LiturgicalReadings::new(&settings, data_dir.path()).unwrap();
    let saints = SaintsOfTheDay::new(&settings, data_dir.path()).unwrap();
    let mut date = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let last = NaiveDate::from_ymd_opt(2200, 12, 31).unwrap();
    let mut days = 0;
    while date <= last {
        let out = readings
            .run(request(date))
            .await
            .unwrap_or_else(|e| panic!("readings for {date}: {e}"));
        assert_eq!(out.data["date"], date.to_string());
        let masses = out.data["masses"].as_array().expect("masses");
        assert!(!masses.is_empty(), "{date}: no Mass");
        let is_holy_saturday = out.data["celebration"]["id"] == "holy_saturday";
        if !is_holy_saturday {
            let has_gospel = masses.iter().any(|m| {
                m["readings"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r["kind"] == "gospel"))
            });
            assert!(has_gospel, "{date}: no gospel in {:?}", out.data);
        }
        let out = saints
            .run(request(date))
            .await
            .unwrap_or_else(|e| panic!("saints for {date}: {e}"));
        assert!(
            !out.data["celebrations"].as_array().unwrap().is_empty(),
            "{date}: no celebration"
        );
        days += 1;
        date = date.succ_opt().unwrap();
    }
    assert_eq!(days, 84_371);
    assert_eq!(date.year(), 2201);
}

/// A small starter corpus from real texts: Baltimore Catechism No. 1 whole, three answers of
/// No. 3, and Douay-Rheims verses that compete for the same words (other Josephs, "saints" in
/// general, "grace upon grace", another shepherd).
mod starter {
    use std::path::Path;

    use corpus::{Document, Section};

    fn verse(locus: &str, text: &str) -> Section {
        Section {
            locus: locus.into(),
            heading: None,
            text: text.into(),
        }
    }

    fn book(usfm: &str, name: &str, verses: Vec<Section>) -> Document {
        Document {
            id: format!("bible:dr/{usfm}"),
            title: format!("{name} (Douay-Rheims)"),
            author: None,
            date: Some("1752".into()),
            doc_type: "scripture".into(),
            language: "en".into(),
            reference: Some("Challoner revision".into()),
            source_url: None,
            sections: verses,
        }
    }

    pub fn documents() -> Vec<Document> {
        let mut catechisms = corpus::starter::catechisms().unwrap();
        let mut third = catechisms.remove(2);
        third
            .sections
            .retain(|s| ["59", "218", "334", "456"].contains(&s.locus.as_str()));
        let first = catechisms.remove(0);
        vec![
            first,
            third,
            book(
                "PSA",
                "Psalms",
                vec![verse(
                    "22:1",
                    "A psalm for David. The Lord ruleth me: and I shall want nothing.",
                )],
            ),
            book(
                "EZK",
                "Ezechiel",
                vec![verse(
                    "34:12",
                    "As the shepherd visiteth his flock in the day when he shall be in the midst of his sheep that were scattered, so will I visit my sheep.",
                )],
            ),
            book(
                "GEN",
                "Genesis",
                vec![
                    verse(
                        "37:2",
                        "Joseph, when he was sixteen years old, was feeding the flock with his brethren, being but a boy.",
                    ),
                    verse(
                        "37:3",
                        "Now Israel loved Joseph above all his sons, because he had him in his old age.",
                    ),
                    verse(
                        "41:41",
                        "And again Pharao said to Joseph: Behold, I have appointed thee over the whole land of Egypt.",
                    ),
                ],
            ),
            book(
                "MAT",
                "Matthew",
                vec![
                    verse(
                        "1:16",
                        "And Jacob begot Joseph the husband of Mary, of whom was born Jesus, who is called Christ.",
                    ),
                    verse(
                        "1:19",
                        "Whereupon Joseph her husband, being a just man, and not willing publicly to expose her, was minded to put her away privately.",
                    ),
                ],
            ),
            book(
                "EZR",
                "Ezra",
                vec![verse("10:42", "Sellum, Amaria, Joseph.")],
            ),
            book(
                "ROM",
                "Romans",
                vec![verse(
                    "1:7",
                    "To all that are at Rome, the beloved of God, called to be saints. Grace to you, and peace from God our Father, and from the Lord Jesus Christ.",
                )],
            ),
            book(
                "SIR",
                "Ecclesiasticus",
                vec![verse(
                    "26:19",
                    "A holy and shamefaced woman is grace upon grace.",
                )],
            ),
        ]
    }

    pub fn install(data_dir: &Path) {
        corpus::CorpusWriter::open(data_dir)
            .unwrap()
            .upsert(documents())
            .unwrap();
    }
}

/// The questions of the starter corpus and the section each answer must cite first.
const JUDGED: [(&str, &str); 3] = [
    ("What is grace?", "cat:baltimore-1#103"),
    ("What is a sacrament?", "cat:baltimore-1#136"),
    ("Who was Saint Joseph?", "cat:baltimore-3#334"),
];

async fn first_citations(corpus: std::sync::Arc<corpus::Corpus>) -> Vec<(String, Value)> {
    let qa = skills::qa::CatholicQa::new(corpus, &skills::qa::LlmSettings::default()).unwrap();
    let mut answers = Vec::new();
    for (question, _) in JUDGED {
        let out = qa
            .run(SkillRequest::from_text(question, Utc::now()))
            .await
            .unwrap();
        answers.push((out.text, Value::Object(out.data)));
    }
    answers
}

#[tokio::test]
async fn extractive_answers_cite_the_catechism_answer_first() {
    let data = tempfile::tempdir().unwrap();
    starter::install(data.path());
    let corpus = std::sync::Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let answers = first_citations(corpus).await;
    for ((question, expected), (text, data)) in JUDGED.iter().zip(&answers) {
        let citations = data["citations"].as_array().unwrap();
        assert_eq!(citations[0]["document_id"], *expected, "{question}: {text}");
        for citation in citations {
            let id = citation["document_id"].as_str().unwrap();
            assert!(
                !["bible:dr/ROM#1:7", "bible:dr/SIR#26:19"].contains(&id),
                "{question} cites {id}: {text}"
            );
        }
    }
    let (grace, _) = &answers[0];
    assert!(
        grace.contains("By grace I mean a supernatural gift of God"),
        "{grace}"
    );
}

#[tokio::test]
async fn a_question_about_a_saint_cites_who_he_was_then_scripture_about_him() {
    let data = tempfile::tempdir().unwrap();
    starter::install(data.path());
    let corpus = std::sync::Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let qa = skills::qa::CatholicQa::new(corpus, &skills::qa::LlmSettings::default()).unwrap();
    let out = qa
        .run(SkillRequest::from_text("Who was Saint Joseph?", Utc::now()))
        .await
        .unwrap();
    let cited: Vec<&str> = out.data["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["document_id"].as_str().unwrap())
        .collect();
    assert_eq!(cited[0], "cat:baltimore-3#334", "{}", out.text);
    assert!(
        cited[1..3].contains(&"bible:dr/MAT#1:16") && cited[1..3].contains(&"bible:dr/MAT#1:19"),
        "the verses on the husband of Mary come next: {cited:?}"
    );
    assert!(
        cited.iter().all(|id| !id.starts_with("bible:dr/GEN")),
        "Joseph son of Jacob is a namesake: {cited:?}"
    );
}

#[tokio::test]
async fn modern_wordings_find_the_catechisms_answer() {
    let data = tempfile::tempdir().unwrap();
    starter::install(data.path());
    let corpus = std::sync::Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let qa = skills::qa::CatholicQa::new(corpus, &skills::qa::LlmSettings::default()).unwrap();
    for (question, expected) in [
        ("Who is the Holy Spirit?", &["cat:baltimore-1#94"][..]),
        ("What are the Ten Commandments?", &["cat:baltimore-1#313"]),
        (
            "Is stealing a sin?",
            &["cat:baltimore-1#373", "cat:baltimore-1#375"],
        ),
        ("Is lying forbidden?", &["cat:baltimore-1#380"]),
    ] {
        let out = qa
            .run(SkillRequest::from_text(question, Utc::now()))
            .await
            .unwrap();
        let first = out.data["citations"][0]["document_id"]
            .as_str()
            .unwrap_or("(none)");
        assert!(
            expected.contains(&first),
            "{question}: first citation {first}: {}",
            out.text
        );
    }
}

#[tokio::test]
async fn a_famous_verse_in_its_modern_wording_finds_the_douay_rheims_verse() {
    let data = tempfile::tempdir().unwrap();
    starter::install(data.path());
    let corpus = std::sync::Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let search = skills::documents::DocumentSearch::new(corpus);
    let out = search
        .run(SkillRequest::from_text(
            "The Lord is my shepherd",
            Utc::now(),
        ))
        .await
        .unwrap();
    assert_eq!(
        out.data["results"][0]["id"], "bible:dr/PSA#22:1",
        "{}",
        out.text
    );
}

/// Hybrid search on the real model (`scripts/test-embeddings` sets `A2A_TEST_MODEL_DIR`).
#[cfg(feature = "embeddings")]
#[tokio::test]
async fn hybrid_catholic_qa_answers_with_citations() {
    let model = std::path::PathBuf::from(
        std::env::var_os("A2A_TEST_MODEL_DIR")
            .expect("A2A_TEST_MODEL_DIR names the model folder (scripts/test-embeddings)"),
    );
    let data = tempfile::tempdir().unwrap();
    let target = corpus::model_dir(data.path());
    std::fs::create_dir_all(&target).unwrap();
    for name in corpus::MODEL_FILES {
        std::os::unix::fs::symlink(
            std::fs::canonicalize(model.join(name)).unwrap(),
            target.join(name),
        )
        .unwrap();
    }
    starter::install(data.path());
    let corpus = std::sync::Arc::new(
        corpus::Corpus::open_with_mode(data.path(), corpus::SearchMode::Hybrid).unwrap(),
    );
    assert_eq!(corpus.search_mode(), corpus::SearchMode::Hybrid);
    let answers = first_citations(corpus).await;
    for ((question, expected), (text, data)) in JUDGED.iter().zip(&answers) {
        let citations = data["citations"].as_array().unwrap();
        assert!(!citations.is_empty(), "{question}: no citation: {text}");
        assert_eq!(citations[0]["document_id"], *expected, "{question}: {text}");
    }
}
