//! Answers a Catholic can trust, on questions asked the everyday way: a passage is quoted only
//! when it bears on what is asked, a person named helps and never excludes, identical answers
//! are quoted once, sentences are cut where they end, and a question nothing answers is
//! declined. The corpus is made here from the starter catechisms (Baltimore Nos. 1 and 2 whole,
//! answers of No. 3 and of the Roman Catechism) and Douay-Rheims verses and Haydock notes that
//! share the questions' words without answering them.

use std::sync::Arc;

use corpus::{Corpus, CorpusWriter, Document, Section};
use serde_json::Value;
use skills::qa::{CatholicQa, LlmSettings};
use skills::{Skill, SkillOutput, SkillRequest};

use crate::llm_backend::{Backend, Reply};

fn section(locus: &str, text: &str) -> Section {
    Section {
        locus: locus.into(),
        heading: None,
        text: text.into(),
    }
}

fn book(id: &str, title: &str, doc_type: &str, sections: Vec<Section>) -> Document {
    Document {
        id: id.into(),
        title: title.into(),
        author: None,
        date: Some("1752".into()),
        doc_type: doc_type.into(),
        language: "en".into(),
        reference: None,
        source_url: None,
        sections,
    }
}

/// Verses and notes that share a word with the questions below without answering them, and
/// the verses that do answer "What did Jesus say about divorce?".
fn scripture() -> Vec<Document> {
    let bible = |usfm: &str, name: &str, verses: Vec<Section>| {
        book(
            &format!("bible:dr/{usfm}"),
            &format!("{name} (Douay-Rheims)"),
            "scripture",
            verses,
        )
    };
    let notes = |usfm: &str, name: &str, sections: Vec<Section>| {
        book(
            &format!("com:haydock/{usfm}"),
            &format!("Haydock Commentary on {name}"),
            "commentary",
            sections,
        )
    };
    vec![
        notes(
            "PRO",
            "Proverbs",
            vec![section(
                "20:18",
                "Designs. Or prudence, else the best designs may prove abortive.",
            )],
        ),
        bible(
            "NUM",
            "Numbers",
            vec![section(
                "12:12",
                "Let her not be as one dead, and as an abortive that is cast forth from the mother’s womb. Lo, half of her flesh is already devoured with the leprosy.",
            )],
        ),
        notes(
            "2SA",
            "2 Samuel",
            vec![section(
                "13:4",
                "Lean. Being the king's son, to whom every indulgence must be allowed.",
            )],
        ),
        bible(
            "ZEC",
            "Zechariah",
            vec![section(
                "3:6",
                "And the angel of the Lord protested to Jesus, saying:",
            )],
        ),
        bible(
            "LUK",
            "Luke",
            vec![
                section(
                    "17:13",
                    "And lifted up their voice, saying: Jesus, master, have mercy on us.",
                ),
                section(
                    "18:38",
                    "And he cried out, saying: Jesus, son of David, have mercy on me.",
                ),
            ],
        ),
        bible(
            "MAT",
            "Matthew",
            vec![
                section(
                    "5:32",
                    "But I say to you, that whosoever shall put away his wife, excepting for the cause of fornication, maketh her to commit adultery: and he that shall marry her that is put away, committeth adultery.",
                ),
                section(
                    "19:9",
                    "And I say to you, that whosoever shall put away his wife, except it be for fornication, and shall marry another, committeth adultery: and he that shall marry her that is put away, committeth adultery.",
                ),
            ],
        ),
        bible(
            "MRK",
            "Mark",
            vec![
                section(
                    "1:8",
                    "I have baptized you with water; but he shall baptize you with the Holy Ghost.",
                ),
                section(
                    "10:11",
                    "And he saith to them: Whosoever shall put away his wife and marry another, committeth adultery against her.",
                ),
            ],
        ),
        bible(
            "1CO",
            "1 Corinthians",
            vec![section(
                "1:16",
                "And I baptized also the household of Stephanus; besides, I know not whether I baptized any other.",
            )],
        ),
        bible(
            "ACT",
            "Acts of the Apostles",
            vec![section(
                "12:12",
                "And considering, he came to the house of Mary the mother of John, who was surnamed Mark, where many were gathered together and praying.",
            )],
        ),
        notes(
            "3JN",
            "3 John",
            vec![section(
                "1:7",
                "Taking nothing of the Gentiles. These ministers and preachers of the gospel, whom S. John recommends, took care, as S. Paul did, not to take any thing of the Gentiles, to whom they preached, lest they should be thought to preach to get money by it. But he puts Gaius in mind, that by assisting such men, he would become a fellow labourer in the gospel, and have a share in their reward. Wi.",
            )],
        ),
    ]
}

/// The starter catechisms, cut down: Baltimore Nos. 1 and 2 whole, the answers of No. 3 and of
/// the Roman Catechism the questions below need, and those that compete with them.
fn catechisms() -> Vec<Document> {
    const THIRD: &[&str] = &[
        "27", "40", "41", "44", "442", "633", "870", "877", "1193", "1194", "1270", "1274", "1277",
    ];
    const TRENT: &[&str] = &["587", "716", "718", "723", "862"];
    let mut kept = Vec::new();
    for mut document in corpus::starter::catechisms().unwrap() {
        let wanted: Option<&[&str]> = match document.id.as_str() {
            "cat:baltimore-3" => Some(THIRD),
            "cat:trent" => Some(TRENT),
            _ => None,
        };
        if let Some(wanted) = wanted {
            document
                .sections
                .retain(|s| wanted.contains(&s.locus.as_str()));
        }
        kept.push(document);
    }
    kept
}

fn install() -> (tempfile::TempDir, Arc<Corpus>) {
    let data = tempfile::tempdir().unwrap();
    let mut documents = catechisms();
    documents.extend(scripture());
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(documents)
        .unwrap();
    let corpus = Arc::new(Corpus::open(data.path()).unwrap());
    (data, corpus)
}

/// The extractive answer to a question over the fixture corpus.
async fn answer(corpus: &Arc<Corpus>, question: &str) -> SkillOutput {
    let qa = CatholicQa::new(Arc::clone(corpus), &LlmSettings::default()).unwrap();
    qa.run(SkillRequest::from_text(question, chrono::Utc::now()))
        .await
        .unwrap()
}

fn cited(output: &SkillOutput) -> Vec<String> {
    output.data["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["document_id"].as_str().unwrap().to_string())
        .collect()
}

fn answer_text(output: &SkillOutput) -> &str {
    output.data["answer"].as_str().unwrap()
}

/// Asserts that an answer cites none of `wrong`, and cites first one of `right`.
fn assert_cites(output: &SkillOutput, question: &str, right: &[&str], wrong: &[&str]) {
    let ids = cited(output);
    for id in &ids {
        assert!(
            !wrong.contains(&id.as_str()),
            "{question} quotes {id}: {}",
            output.text
        );
    }
    let first = ids.first().map(String::as_str).unwrap_or("(none)");
    assert!(
        right.contains(&first),
        "{question}: first citation {first}: {}",
        output.text
    );
}

#[tokio::test]
async fn a_moral_question_reaches_the_commandment_not_a_shared_word() {
    let (_data, corpus) = install();
    let fifth = [
        "cat:trent#587",
        "cat:baltimore-1#368",
        "cat:baltimore-1#366",
        "cat:trent#723",
        "cat:trent#716",
        "cat:trent#718",
    ];
    let abortion = answer(&corpus, "Is abortion a sin?").await;
    assert_cites(
        &abortion,
        "abortion",
        &fifth,
        &["com:haydock/PRO#20:18", "bible:dr/NUM#12:12"],
    );
    assert!(
        answer_text(&abortion).contains("procure abortion"),
        "{}",
        abortion.text
    );
    let euthanasia = answer(&corpus, "Is euthanasia allowed?").await;
    assert_cites(&euthanasia, "euthanasia", &fifth, &["com:haydock/2SA#13:4"]);
    assert!(
        answer_text(&euthanasia).contains("forbids all wilful murder"),
        "{}",
        euthanasia.text
    );
}

#[tokio::test]
async fn a_person_named_as_the_speaker_widens_the_search() {
    let (_data, corpus) = install();
    let output = answer(&corpus, "What did Jesus say about divorce?").await;
    assert_cites(
        &output,
        "divorce",
        &[
            "bible:dr/MAT#5:32",
            "bible:dr/MAT#19:9",
            "bible:dr/MRK#10:11",
        ],
        &[
            "bible:dr/ZEC#3:6",
            "bible:dr/LUK#17:13",
            "bible:dr/LUK#18:38",
        ],
    );
    assert_eq!(cited(&output).len(), 3, "{}", output.text);
}

#[tokio::test]
async fn who_can_baptize_quotes_the_catechisms_answer() {
    let (_data, corpus) = install();
    let output = answer(&corpus, "Who can baptize?").await;
    assert_cites(
        &output,
        "baptize",
        &["cat:baltimore-1#155", "cat:baltimore-3#633"],
        &["bible:dr/MRK#1:8", "bible:dr/1CO#1:16"],
    );
    assert!(
        answer_text(&output).contains("in case of necessity"),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn praying_to_mary_is_not_answered_by_another_mary_or_a_prayers_text() {
    let (_data, corpus) = install();
    let output = answer(&corpus, "Why do Catholics pray to Mary?").await;
    assert_cites(
        &output,
        "Mary",
        &["cat:trent#862", "cat:baltimore-3#40", "cat:baltimore-3#41"],
        &[
            "bible:dr/ACT#12:12",
            "cat:baltimore-3#44",
            "cat:baltimore-3#27",
        ],
    );
}

#[tokio::test]
async fn identical_answers_are_quoted_once_and_named_as_also_in() {
    let (_data, corpus) = install();
    let output = answer(&corpus, "What is the Holy Eucharist?").await;
    let text = answer_text(&output);
    let sentence = "The Holy Eucharist is the Sacrament which contains the body and blood";
    assert_eq!(text.matches(sentence).count(), 1, "{text}");
    assert!(
        text.contains("also in Baltimore Catechism No. 2, 238"),
        "{text}"
    );
    let ids = cited(&output);
    assert!(!ids.contains(&"cat:baltimore-2#238".to_string()), "{ids:?}");
}

#[tokio::test]
async fn sentences_end_where_they_end_not_at_a_saints_title() {
    let (_data, corpus) = install();
    let evangelists = answer(&corpus, "Who were the Evangelists?").await;
    assert!(
        answer_text(&evangelists)
            .contains("“St. Matthew, St. Mark, St. Luke and St. John are called Evangelists"),
        "{}",
        evangelists.text
    );
    let gentiles = answer(
        &corpus,
        "Why did the preachers take nothing of the Gentiles?",
    )
    .await;
    assert!(
        answer_text(&gentiles)
            .contains("took care, as S. Paul did, not to take any thing of the Gentiles"),
        "{}",
        gentiles.text
    );
}

#[tokio::test]
async fn a_numbered_answer_is_quoted_whole() {
    let (_data, corpus) = install();
    let output = answer(&corpus, "How do we prove the Real Presence?").await;
    let text = answer_text(&output);
    assert!(
        text.contains("(1) By showing that it is possible"),
        "{text}"
    );
    assert!(
        text.contains("(3) By showing that He gave this power also to His Apostles"),
        "{text}"
    );
}

#[tokio::test]
async fn the_real_presence_reaches_what_is_the_holy_eucharist() {
    let (_data, corpus) = install();
    let output = answer(
        &corpus,
        "What does the Church teach about the Real Presence?",
    )
    .await;
    let ids = cited(&output);
    assert!(
        ["cat:baltimore-1#238", "cat:baltimore-3#870"]
            .iter()
            .any(|id| ids.contains(&id.to_string())),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn a_question_nothing_answers_is_declined_naming_what_was_searched() {
    let (_data, corpus) = install();
    for question in [
        "Is IVF allowed?",
        "What does the Church teach about climate change?",
    ] {
        let output = answer(&corpus, question).await;
        assert!(cited(&output).is_empty(), "{question}: {}", output.text);
        let text = answer_text(&output);
        assert!(
            text.contains("Nothing in this server's corpus answers"),
            "{text}"
        );
        assert!(text.contains("document_search"), "{text}");
    }
    let ivf = answer(&corpus, "Is IVF allowed?").await;
    assert!(answer_text(&ivf).contains("“ivf”"), "{}", ivf.text);
}

#[tokio::test]
async fn the_model_is_given_only_the_passages_that_bear_on_the_question() {
    let backend = Backend::scripted(vec![Reply::Completion(
        "It is gravely forbidden [1].".into(),
    )])
    .await;
    let (_data, corpus) = install();
    let settings = LlmSettings {
        base_url: Some(backend.base_url()),
        model: "configured-model".into(),
        timeout_secs: 5,
        ..LlmSettings::default()
    };
    let qa = CatholicQa::new(corpus, &settings).unwrap();
    let output = qa
        .run(SkillRequest::from_text(
            "Is abortion a sin?",
            chrono::Utc::now(),
        ))
        .await
        .unwrap();
    let exchanges = backend.exchanges();
    let prompt: String = exchanges[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(prompt.contains("wilful murder"), "{prompt}");
    assert!(
        !prompt.contains("abortive"),
        "the model was given a shared word: {prompt}"
    );
    let first: &Value = &output.data["citations"][0];
    assert!(
        first["document_id"].as_str().unwrap().starts_with("cat:"),
        "{first}"
    );
}

#[tokio::test]
async fn the_cards_examples_are_answered_from_the_catechisms_alone() {
    let data = tempfile::tempdir().unwrap();
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(corpus::starter::catechisms().unwrap())
        .unwrap();
    let corpus = Arc::new(Corpus::open(data.path()).unwrap());
    for question in skills::catalog::CATHOLIC_QA.examples {
        let output = answer(&corpus, question).await;
        assert!(!cited(&output).is_empty(), "{question}: {}", output.text);
    }
}
