//! `catholic_qa` through its public face: extractive answers from a corpus of short texts
//! written for these tests, the checks on its input and settings, and answers written by a
//! model on a loopback server (`llm_backend`) that is slow, down, overloaded or malformed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use corpus::{Corpus, CorpusWriter, Document, Section};
use reqwest::StatusCode;
use serde_json::{Value, json};
use skills::qa::{CatholicQa, EXTRACTIVE_PASSAGES, LlmSettings};
use skills::{Skill, SkillError, SkillOutput, SkillRequest, Speaker, Turn};

use crate::llm_backend::{Backend, Reply, SERVED_MODEL};

const API_KEY: &str = "sk-test-key-0123";

fn section(locus: &str, heading: Option<&str>, text: &str) -> Section {
    Section {
        locus: locus.into(),
        heading: heading.map(str::to_string),
        text: text.into(),
    }
}

/// A corpus of short texts written for these tests.
fn fixture_corpus() -> (tempfile::TempDir, Arc<Corpus>) {
    let data = tempfile::tempdir().unwrap();
    let documents = [
        Document {
            id: "cat:test-sacraments".into(),
            title: "A Short Catechism of the Sacraments".into(),
            author: None,
            date: None,
            doc_type: "catechism".into(),
            language: "en".into(),
            reference: None,
            source_url: None,
            sections: vec![
                section(
                    "1",
                    Some("The Eucharist"),
                    "The Eucharist is the sacrament of the Body and Blood of Christ. Under the appearances of bread and wine, Christ is truly present. This is called the Real Presence.",
                ),
                section(
                    "2",
                    Some("Baptism"),
                    "Baptism is the first sacrament. It washes away original sin and makes us children of God. Water is poured while the words are spoken.",
                ),
                section(
                    "3",
                    Some("Confession"),
                    "In confession the penitent tells his sins to a priest. The priest grants absolution in the name of Christ.",
                ),
            ],
        },
        Document {
            id: "cat:test-prayer".into(),
            title: "On Prayer and the Saints".into(),
            author: None,
            date: None,
            doc_type: "catechism".into(),
            language: "en".into(),
            reference: None,
            source_url: None,
            sections: vec![
                section(
                    "1",
                    None,
                    "Prayer is the raising of the mind and heart to God. We may pray in words or in silence.",
                ),
                section(
                    "2",
                    Some("The Saints"),
                    "Catholics ask the saints to pray for them, as friends ask one another for prayers. The saints do not replace Christ; they intercede with him.",
                ),
                section(
                    "3",
                    None,
                    "Purgatory is a state of purification after death. The faithful pray for the souls in purgatory.",
                ),
            ],
        },
        Document {
            id: "mag:exemplary-pope/de-pane-vivo-1900".into(),
            title: "De Pane Vivo".into(),
            author: Some("Exemplary Pope I".into()),
            date: Some("1900".into()),
            doc_type: "encyclical".into(),
            language: "en".into(),
            reference: Some("Acta 1 (1900) 1-9".into()),
            source_url: Some("https://example.invalid/de-pane-vivo".into()),
            sections: vec![
                section(
                    "1",
                    None,
                    "The bread of life is Christ himself, present in the Eucharist. The faithful receive him with reverence and thanksgiving.",
                ),
                section(
                    "2",
                    None,
                    "Charity toward the poor flows from the Eucharist, for those who share one bread become one body.",
                ),
            ],
        },
    ];
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(documents)
        .unwrap();
    let corpus = Arc::new(Corpus::open(data.path()).unwrap());
    (data, corpus)
}

fn ask(text: &str) -> SkillRequest {
    SkillRequest::from_text(text, chrono::Utc::now())
}

fn ask_data(data: Value) -> SkillRequest {
    let mut request = ask("");
    request.data = data.as_object().unwrap().clone();
    request
}

fn failure(result: Result<SkillOutput, SkillError>) -> String {
    match result {
        Err(SkillError::Failed(message)) => message,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

fn citations(output: &SkillOutput) -> &Vec<Value> {
    output.data["citations"].as_array().unwrap()
}

/// The `[n]` markers of a text, in order.
fn markers(text: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        if let Some(close) = rest.find(']')
            && let Ok(number) = rest[..close].parse()
        {
            found.push(number);
        }
    }
    found
}

fn extractive(corpus: Arc<Corpus>) -> CatholicQa {
    CatholicQa::new(corpus, &LlmSettings::default()).unwrap()
}

#[tokio::test]
async fn extractive_answers_quote_retrieved_passages_with_citations() {
    let (_data, corpus) = fixture_corpus();
    let qa = extractive(corpus);
    let output = qa
        .run(ask(
            "What does the Church teach about the Real Presence in the Eucharist?",
        ))
        .await
        .unwrap();
    assert_eq!(output.artifact_name, "answer");
    assert_eq!(output.data["mode"], "extractive");
    assert!(output.data.get("model").is_none());
    let answer = output.data["answer"].as_str().unwrap();
    assert!(answer.starts_with("These passages from the corpus bear on your question"));
    let cited = citations(&output);
    assert!(
        (1..=EXTRACTIVE_PASSAGES).contains(&cited.len()),
        "{cited:?}"
    );
    let mut numbers = markers(answer);
    numbers.dedup();
    assert_eq!(numbers, (1..=cited.len()).collect::<Vec<_>>());
    assert_eq!(cited[0]["document_id"], "cat:test-sacraments#1");
    assert_eq!(cited[0]["cited_text_heading"], "The Eucharist");
    assert!(answer.contains("Real Presence"), "{answer}");
    for (index, citation) in cited.iter().enumerate() {
        assert_eq!(citation["document_index"], index + 1);
        let text = citation["cited_text"].as_str().unwrap();
        assert!(text.to_lowercase().contains("eucharist") || text.contains("Presence"));
    }
    let pope = cited
        .iter()
        .find(|c| c["document_id"] == "mag:exemplary-pope/de-pane-vivo-1900#1")
        .expect("the encyclical's passage on the Eucharist is cited");
    assert_eq!(pope["document_author"], "Exemplary Pope I");
    assert_eq!(pope["document_year"], "1900");
    assert_eq!(pope["document_reference"], "Acta 1 (1900) 1-9");
    assert_eq!(pope["source_url"], "https://example.invalid/de-pane-vivo");
    assert!(output.text.starts_with(answer));
    assert!(
        output
            .text
            .contains("\n\nSources:\n[1] A Short Catechism of the Sacraments")
    );
}

#[tokio::test]
async fn max_citations_bounds_the_citations() {
    let (_data, corpus) = fixture_corpus();
    let qa = extractive(corpus);
    let output = qa
        .run(ask_data(
            json!({"question": "the Eucharist", "maxCitations": 1}),
        ))
        .await
        .unwrap();
    assert_eq!(citations(&output).len(), 1);
    for bad in [json!(0), json!(11), json!("many"), json!(2.5)] {
        let message = failure(
            qa.run(ask_data(
                json!({"question": "baptism", "maxCitations": bad}),
            ))
            .await,
        );
        assert!(message.contains("maxCitations"), "{message}");
    }
}

#[tokio::test]
async fn data_question_wins_over_text() {
    let (_data, corpus) = fixture_corpus();
    let qa = extractive(corpus);
    let mut request = ask("What is purgatory?");
    request.data = json!({"question": "What does baptism wash away?"})
        .as_object()
        .unwrap()
        .clone();
    let output = qa.run(request).await.unwrap();
    assert_eq!(
        citations(&output)[0]["document_id"],
        "cat:test-sacraments#2"
    );
}

#[tokio::test]
async fn a_question_the_corpus_cannot_answer_says_so_without_citations() {
    let (_data, corpus) = fixture_corpus();
    let qa = extractive(corpus);
    let output = qa
        .run(ask("What is the airspeed velocity of an unladen swallow?"))
        .await
        .unwrap();
    assert!(citations(&output).is_empty());
    let answer = output.data["answer"].as_str().unwrap();
    assert!(
        answer.contains("Nothing in this server's corpus answers this question"),
        "{answer}"
    );
    assert!(answer.contains("document_search"), "{answer}");
    assert!(markers(answer).is_empty());
    assert!(!output.text.contains("Sources:"));

    // "Catholics" matches a passage, but nothing in it is about the question's topic.
    let output = qa
        .run(ask("What do Catholics believe about astrology?"))
        .await
        .unwrap();
    assert!(citations(&output).is_empty(), "{:?}", output.data);
}

#[tokio::test]
async fn an_empty_corpus_is_said_so() {
    let qa = extractive(Arc::new(Corpus::empty()));
    let output = qa.run(ask("What is grace?")).await.unwrap();
    assert!(citations(&output).is_empty());
    assert!(output.text.contains("corpus of this server is empty"));
    assert!(
        output
            .text
            .contains(skills::readings::INSTALL_BIBLE_COMMAND),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn an_empty_question_fails_with_an_example() {
    let qa = extractive(Arc::new(Corpus::empty()));
    let message = failure(qa.run(ask("   ")).await);
    assert!(message.contains("no question"), "{message}");
    assert!(message.contains("e.g."), "{message}");
    let message = failure(qa.run(ask_data(json!({"question": 42}))).await);
    assert!(message.contains("`question` must be a string"), "{message}");
}

#[test]
fn bad_llm_settings_stop_the_start_without_leaking_secrets() {
    let settings = LlmSettings {
        base_url: Some("ftp://user:pa55word@host/v1".into()),
        model: "m".into(),
        api_key: Some(API_KEY.into()),
        ..LlmSettings::default()
    };
    let Err(SkillError::Failed(message)) = CatholicQa::new(Arc::new(Corpus::empty()), &settings)
    else {
        panic!("bad settings were accepted");
    };
    assert!(!message.contains("pa55word") && !message.contains(API_KEY));
    assert!(message.contains("http://"), "{message}");
}

/// `catholic_qa` over the fixture corpus, answering with the model of a loopback server.
struct Answering {
    qa: CatholicQa,
    backend: Backend,
    _data: tempfile::TempDir,
}

fn llm_settings(address: SocketAddr) -> LlmSettings {
    LlmSettings {
        base_url: Some(format!("http://{address}/v1")),
        model: "configured-model".into(),
        api_key: Some(API_KEY.into()),
        timeout_secs: 1,
        retry_base_delay_ms: 20,
        ..LlmSettings::default()
    }
}

/// A server answering with `replies` in turn (the last repeated) and the skill asking it.
async fn with_backend(replies: Vec<Reply>) -> Answering {
    let backend = Backend::scripted(replies).await;
    let (data, corpus) = fixture_corpus();
    let qa = CatholicQa::new(corpus, &llm_settings(backend.address)).unwrap();
    Answering {
        qa,
        backend,
        _data: data,
    }
}

/// A chat completion whose content is `content`.
fn completion(content: &str) -> Reply {
    Reply::Completion(content.into())
}

/// A reply of any status, with this body as it is.
fn raw(status: StatusCode, retry_after_secs: Option<u64>, body: &str) -> Reply {
    Reply::Raw {
        status,
        retry_after_secs,
        body: body.into(),
    }
}

#[tokio::test]
async fn the_model_answers_with_checked_citations() {
    let answering = with_backend(vec![completion(
        "Christ is truly present under bread and wine [1]. The faithful receive him with reverence [2].",
    )])
    .await;
    let output = answering
        .qa
        .run(ask("What is the Eucharist?"))
        .await
        .unwrap();
    assert_eq!(output.data["mode"], "llm");
    assert_eq!(output.data["model"], SERVED_MODEL);
    let cited = citations(&output);
    assert_eq!(cited.len(), 2);
    assert_eq!(markers(output.data["answer"].as_str().unwrap()), [1, 2]);

    let calls = answering.backend.exchanges();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert_eq!(call.path, "/v1/chat/completions");
    assert_eq!(
        call.authorization.as_deref(),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(call.body["model"], "configured-model");
    assert_eq!(call.body["max_tokens"], 800);
    let messages = call.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(messages[1]["content"], "What is the Eucharist?");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains("Cite only the numbers listed below"));
    // Citation n is the passage shown as [n].
    for (index, citation) in cited.iter().enumerate() {
        let quoted = citation["cited_text"].as_str().unwrap();
        let block = format!(
            "[{}] {}",
            index + 1,
            citation["document_title"].as_str().unwrap()
        );
        let at = system.find(&block).expect("the cited passage was given");
        assert!(system[at..].contains(quoted));
    }
}

#[tokio::test]
async fn markers_of_passages_not_given_are_dropped() {
    let answering = with_backend(vec![completion(
        "Bread of life [1]. Invented claim [7]. One body [3].",
    )])
    .await;
    let output = answering
        .qa
        .run(ask_data(
            json!({"question": "What is the Eucharist?", "maxCitations": 3}),
        ))
        .await
        .unwrap();
    let system = answering.backend.exchanges()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("\n\n[3] ") && !system.contains("\n\n[4] "));
    let answer = output.data["answer"].as_str().unwrap();
    assert_eq!(answer, "Bread of life [1]. Invented claim. One body [2].");
    let cited = citations(&output);
    assert_eq!(cited.len(), 2);
    assert!(cited.iter().all(|c| c["document_index"] != 7));
    assert!(!output.text.contains("[7]"));
}

#[tokio::test]
async fn follow_ups_send_the_earlier_turns() {
    let answering = with_backend(vec![completion("The faithful receive him [1].")]).await;
    let mut request = ask("Who receives it?");
    request.history = vec![
        Turn {
            speaker: Speaker::User,
            text: "What is the Eucharist?".into(),
        },
        Turn {
            speaker: Speaker::Agent,
            text: "It is the sacrament of the Body and Blood of Christ [1].\n\nSources:\n[1] A Short Catechism of the Sacraments, 1".into(),
        },
    ];
    answering.qa.run(request).await.unwrap();
    let calls = answering.backend.exchanges();
    let messages = calls[0].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[1]["content"], "What is the Eucharist?");
    assert_eq!(
        messages[2]["content"],
        "It is the sacrament of the Body and Blood of Christ."
    );
    assert_eq!(messages[3]["content"], "Who receives it?");
    // The anaphoric question was searched with the earlier question's words.
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("present in the Eucharist")
    );
}

#[tokio::test]
async fn a_429_is_retried() {
    let answering = with_backend(vec![
        raw(StatusCode::TOO_MANY_REQUESTS, Some(0), "slow down"),
        raw(StatusCode::TOO_MANY_REQUESTS, None, "slow down"),
        completion("Baptism washes away original sin [1]."),
    ])
    .await;
    let output = answering
        .qa
        .run(ask("What does baptism do?"))
        .await
        .unwrap();
    assert_eq!(answering.backend.exchanges().len(), 3);
    assert_eq!(citations(&output).len(), 1);
}

#[tokio::test]
async fn a_backend_that_keeps_failing_gives_a_failed_task_without_its_words() {
    let answering = with_backend(vec![raw(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        "secret-internal-detail: key sk-test-key-0123 rejected by upstream",
    )])
    .await;
    let message = failure(answering.qa.run(ask("What does baptism do?")).await);
    assert!(
        message.starts_with("The answering service is unavailable"),
        "{message}"
    );
    assert!(!message.contains("secret-internal-detail"), "{message}");
    assert!(!message.contains(API_KEY), "{message}");
    assert!(
        !message.contains(&answering.backend.address.to_string()),
        "{message}"
    );
    assert_eq!(
        answering.backend.exchanges().len(),
        3,
        "one attempt and two retries"
    );
}

#[tokio::test]
async fn a_malformed_reply_gives_a_failed_task() {
    let answering = with_backend(vec![raw(
        StatusCode::OK,
        None,
        "{\"choices\": [{\"message\": secret-internal-detail",
    )])
    .await;
    let message = failure(answering.qa.run(ask("What does baptism do?")).await);
    assert!(message.contains("could not be read"), "{message}");
    assert!(!message.contains("secret-internal-detail"));
    assert_eq!(
        answering.backend.exchanges().len(),
        1,
        "a malformed reply is not retried"
    );
}

#[tokio::test]
async fn a_slow_backend_times_out() {
    let answering = with_backend(vec![Reply::Late {
        after: Duration::from_secs(3),
        content: "Too late [1].".into(),
    }])
    .await;
    let started = std::time::Instant::now();
    let message = failure(answering.qa.run(ask("What does baptism do?")).await);
    assert!(
        message.contains("did not answer within 1 second"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_millis(2500));
}

#[tokio::test]
async fn a_backend_that_is_down_gives_a_failed_task() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let (_data, corpus) = fixture_corpus();
    let settings = LlmSettings {
        retry_base_delay_ms: 5,
        ..llm_settings(closed)
    };
    let qa = CatholicQa::new(corpus, &settings).unwrap();
    let message = failure(qa.run(ask("What does baptism do?")).await);
    assert!(message.contains("could not be reached"), "{message}");
}

#[tokio::test]
async fn the_model_is_not_asked_when_nothing_is_relevant() {
    let answering = with_backend(vec![completion("Made up [1].")]).await;
    let output = answering
        .qa
        .run(ask("What is the airspeed velocity of an unladen swallow?"))
        .await
        .unwrap();
    assert!(citations(&output).is_empty());
    assert_eq!(output.data["mode"], "llm");
    assert!(output.data.get("model").is_none());
    assert!(answering.backend.exchanges().is_empty());
}
