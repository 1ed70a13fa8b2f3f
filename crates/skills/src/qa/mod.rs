//! `catholic_qa`: answers with numbered citations, from passages retrieved in the corpus.
//!
//! The pipeline: the question (data `question` wins over the text), widened with the previous
//! question when it is a follow-up ("and who receives it?"); a corpus search; the relevant hits
//! (see [`retrieval`] for what counts) numbered `[1]..[k]`; then an answer, either
//! - written by an OpenAI-compatible model that sees only those passages (`mode: "llm"`), whose
//!   markers are checked: a marker of a passage it was not given is removed and logged, the
//!   rest renumbered `1..m` in order of first use; or
//! - assembled from the passages' most relevant sentences (`mode: "extractive"`), when no
//!   model is configured, saying so in its first sentence.
//!
//! Every entry of `citations` is a passage that was retrieved and shown to whoever wrote the
//! answer. A question the corpus cannot answer gets an answer saying so and no citations; the
//! model is not asked at all then, so `model` is only present when a model wrote the answer.

mod extractive;
mod llm;
mod persons;
mod prompt;
mod retrieval;
mod sse;

use std::sync::Arc;

use async_trait::async_trait;
use corpus::{Corpus, CorpusError, Hit, SearchMode, SearchRequest};
use serde_json::{Map, Value, json};

pub use llm::LlmSettings;

use self::extractive::{EXTRACTIVE_PASSAGES, extractive_answer, shorten};
use self::llm::{BackendFailure, LlmClient};
use self::prompt::{Cited, Citer, Prompt, SOURCES_HEADING, TooLong};
use crate::events::ChunkSender;
use crate::{
    Skill, SkillError, SkillEvent, SkillInfo, SkillOutput, SkillRequest, catalog, limits,
    on_blocking_pool,
};

/// Citations an answer may carry when the caller does not say.
pub const DEFAULT_MAX_CITATIONS: usize = 5;
/// Most citations a caller may ask for: more passages than this drown a model's context.
pub const MAX_CITATIONS: usize = 10;
/// Hits looked at before the relevance filter keeps the best few.
const RETRIEVAL_DEPTH: usize = 20;
/// Longest passage text given to the model or cited, in characters: one long section must not
/// crowd out the others.
const MAX_PASSAGE_CHARS: usize = 2000;

/// The name of the skill's artifact.
const ARTIFACT_NAME: &str = "answer";

const EXAMPLE: &str = "Ask a question in the text, e.g. `What does the Church teach about the Real Presence?`, or send a data part such as {\"question\": \"Why do Catholics pray to saints?\", \"maxCitations\": 3}.";
const EMPTY_CORPUS: &str = "The document corpus of this server is empty, so there is nothing to answer from. Ask the operator to import documents.";
const NO_ANSWER: &str = "No passage of this server's corpus answers this question, so it cannot be answered with citations. Try the words you expect the answer to use, or search with document_search.";

/// Questions about Catholic teaching, answered from the corpus with citations; the default
/// skill, and the one charged to the expensive bucket.
pub struct CatholicQa {
    corpus: Arc<Corpus>,
    backend: Option<Backend>,
}

struct Backend {
    client: LlmClient,
    max_context_tokens: usize,
}

/// How the answer of one call was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Llm,
    Extractive,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Llm => "llm",
            Mode::Extractive => "extractive",
        }
    }
}

impl CatholicQa {
    /// The skill over a corpus shared with the other skills. With `llm.base_url` unset it
    /// answers extractively; set, the settings are checked here so that a typo stops the start
    /// rather than failing every question. The error text is for the operator and never
    /// contains the api key or URL credentials.
    pub fn new(corpus: Arc<Corpus>, llm: &LlmSettings) -> Result<Self, SkillError> {
        let backend = match llm.configured_base_url() {
            None => None,
            Some(base_url) => {
                const MIN_CONTEXT_TOKENS: usize = 500;
                if llm.max_context_tokens < MIN_CONTEXT_TOKENS {
                    return Err(SkillError::Failed(format!(
                        "[llm] max_context_tokens must be at least {MIN_CONTEXT_TOKENS}, not {}",
                        llm.max_context_tokens
                    )));
                }
                let endpoint = llm::check_settings(llm, base_url).map_err(SkillError::Failed)?;
                Some(Backend {
                    client: LlmClient::new(llm, endpoint).map_err(SkillError::Failed)?,
                    max_context_tokens: llm.max_context_tokens,
                })
            }
        };
        Ok(CatholicQa { corpus, backend })
    }

    fn mode(&self) -> Mode {
        if self.backend.is_some() {
            Mode::Llm
        } else {
            Mode::Extractive
        }
    }

    async fn retrieve(
        &self,
        question: &str,
        request: &SkillRequest,
        max_citations: usize,
    ) -> Result<Vec<Passage>, SkillError> {
        let query = retrieval::retrieval_query(question, &request.history);
        let stems = retrieval::topic_stems(&query);
        let stems_for_search = stems.clone();
        let search = SearchRequest {
            limit: RETRIEVAL_DEPTH,
            ..SearchRequest::new(query)
        };
        // The catechisms are searched on their own too: a catechism asking the very question
        // must not be crowded out of the first hits by short verses sharing one word.
        let in_catechisms = SearchRequest {
            limit: corpus::MAX_LIMIT,
            filters: corpus::SearchFilters {
                doc_type: Some("catechism".into()),
                ..corpus::SearchFilters::default()
            },
            ..search.clone()
        };
        let names = corpus::saint_names(question).names;
        let names_for_search = names.clone();
        let results = on_blocking_pool(&self.corpus, move |corpus| {
            let mut results = corpus.search(&search)?;
            let catechisms = corpus.search(&in_catechisms)?.hits;
            let asked = catechisms
                .iter()
                .filter(|hit| retrieval::asks_the_question(hit, &stems_for_search))
                .filter(|hit| results.hits.iter().all(|h| h.id != hit.id))
                .cloned()
                .collect::<Vec<_>>();
            results.hits.extend(asked);
            let defining = catechisms
                .iter()
                .find(|hit| persons::names_as_subject(hit, &names_for_search))
                .cloned();
            let about = match defining {
                Some(defining) => {
                    if results.hits.iter().all(|h| h.id != defining.id) {
                        results.hits.push(defining.clone());
                    }
                    let in_scripture = SearchRequest {
                        limit: persons::SCRIPTURE_VERSES,
                        filters: corpus::SearchFilters {
                            doc_type: Some("scripture".into()),
                            ..corpus::SearchFilters::default()
                        },
                        ..SearchRequest::new(persons::scripture_query(&names_for_search, &defining))
                    };
                    let verses = corpus.search(&in_scripture)?.hits;
                    let ids = verses.iter().map(|hit| hit.id.clone()).collect();
                    for verse in verses {
                        if results.hits.iter().all(|h| h.id != verse.id) {
                            results.hits.push(verse);
                        }
                    }
                    ids
                }
                None => Vec::new(),
            };
            Ok((results, about))
        })
        .await?;
        let (results, about) = match results {
            Ok(found) => found,
            Err(CorpusError::NoSearchTerms) => {
                return Err(SkillError::Failed(format!(
                    "The question has no words to look up in the corpus. {EXAMPLE}"
                )));
            }
            Err(CorpusError::InvalidRequest(message)) => {
                return Err(SkillError::Failed(format!("{message}.")));
            }
            Err(other) => return Err(SkillError::Internal(other.to_string())),
        };
        let floor = (self.corpus.search_mode() == SearchMode::Bm25).then_some(retrieval::MIN_SCORE);
        let relevant = results
            .hits
            .into_iter()
            .filter(|hit| retrieval::is_relevant(hit, &stems, floor))
            .collect();
        Ok(persons::citing_order(relevant, &stems, &names, &about)
            .into_iter()
            .take(max_citations)
            .map(Passage::new)
            .collect())
    }

    /// The answer of one call. With `chunks`, an answer the model writes is sent on piece by
    /// piece as it is written (and [`Answer::streamed`] says so).
    async fn answer(
        &self,
        request: &SkillRequest,
        chunks: Option<&mut ChunkSender>,
    ) -> Result<Answer, SkillError> {
        let question = question(request)?;
        let max_citations = max_citations(request)?;
        let mode = self.mode();
        if self.corpus.is_empty() {
            return Ok(Answer::uncited(EMPTY_CORPUS, mode));
        }
        let passages = self.retrieve(&question, request, max_citations).await?;
        if passages.is_empty() {
            return Ok(Answer::uncited(NO_ANSWER, mode));
        }
        match &self.backend {
            Some(backend) => {
                self.answer_with_model(backend, &question, request, passages, chunks)
                    .await
            }
            None => {
                let mut passages = passages;
                passages.truncate(EXTRACTIVE_PASSAGES);
                let stems = retrieval::topic_stems(&retrieval::retrieval_query(
                    &question,
                    &request.history,
                ));
                Ok(Answer {
                    text: extractive_answer(&passages, &stems),
                    passages,
                    mode: Mode::Extractive,
                    model: None,
                    streamed: false,
                })
            }
        }
    }

    async fn answer_with_model(
        &self,
        backend: &Backend,
        question: &str,
        request: &SkillRequest,
        passages: Vec<Passage>,
        chunks: Option<&mut ChunkSender>,
    ) -> Result<Answer, SkillError> {
        let prompt = prompt::build(
            question,
            &request.history,
            &passages,
            backend.max_context_tokens,
        )
        .map_err(|TooLong { max_question_chars }| {
            SkillError::Failed(format!(
                "The question is too long for the answering service of this server: keep it under {max_question_chars} characters."
            ))
        })?;
        let streamed = chunks.is_some();
        let written = match chunks {
            None => backend
                .client
                .complete(&prompt.messages)
                .await
                .map(|completion| {
                    (
                        prompt::cite(&completion.content, prompt.passages),
                        completion.model,
                    )
                }),
            Some(chunks) => stream_answer(&backend.client, &prompt, chunks).await,
        };
        let (cited, model) = written.map_err(|failure| {
            SkillError::Failed(failure.user_message(backend.client.timeout_secs()))
        })?;
        if !cited.dropped.is_empty() {
            tracing::warn!(
                dropped = ?cited.dropped,
                given = prompt.passages,
                model = %model,
                "the answer cited passages it was not given; those markers were removed"
            );
        }
        let mut by_number: Vec<Option<Passage>> = passages.into_iter().map(Some).collect();
        let cited_passages = cited
            .used
            .iter()
            .filter_map(|&number| by_number.get_mut(number - 1).and_then(Option::take))
            .collect();
        Ok(Answer {
            text: cited.text,
            passages: cited_passages,
            mode: Mode::Llm,
            model: Some(model),
            streamed,
        })
    }
}

/// Asks the model for a streamed answer and sends it on as it arrives, its markers checked as
/// [`prompt::cite`] checks a whole answer. Text kept back by a slow reader leaves as soon as
/// the reader makes room, while the answer is still being read.
async fn stream_answer(
    client: &LlmClient,
    prompt: &Prompt,
    chunks: &mut ChunkSender,
) -> Result<(Cited, String), BackendFailure> {
    let mut answer = client.stream(&prompt.messages).await?;
    let mut citer = Citer::new(prompt.passages);
    let mut text = String::new();
    loop {
        tokio::select! {
            piece = answer.next_piece() => {
                let Some(piece) = piece? else { break };
                let checked = citer.push(&piece);
                chunks.push(&checked);
                text.push_str(&checked);
            }
            () = chunks.flushed() => {}
        }
    }
    let rest = citer.finish();
    chunks.push(&rest.text);
    text.push_str(&rest.text);
    Ok((Cited { text, ..rest }, answer.model()))
}

/// A finished answer: its text (markers `1..=passages.len()`) and the passages cited.
struct Answer {
    text: String,
    passages: Vec<Passage>,
    mode: Mode,
    model: Option<String>,
    /// `text` was already sent piece by piece; only the list of sources is left to send.
    streamed: bool,
}

impl Answer {
    fn uncited(text: &str, mode: Mode) -> Answer {
        Answer {
            text: text.to_string(),
            passages: Vec::new(),
            mode,
            model: None,
            streamed: false,
        }
    }

    fn into_output(self) -> SkillOutput {
        let citations: Vec<Value> = self
            .passages
            .iter()
            .enumerate()
            .map(|(index, passage)| passage.citation(index + 1))
            .collect();
        let mut text = self.text.clone();
        if !self.passages.is_empty() {
            text.push_str(&format!("\n\n{SOURCES_HEADING}"));
            for (index, passage) in self.passages.iter().enumerate() {
                text.push_str(&format!("\n[{}] {}", index + 1, passage.source_line()));
            }
        }
        let mut data = Map::new();
        data.insert("answer".into(), Value::String(self.text));
        data.insert("citations".into(), Value::Array(citations));
        data.insert("mode".into(), Value::String(self.mode.as_str().into()));
        if let Some(model) = self.model {
            data.insert("model".into(), Value::String(model));
        }
        SkillOutput {
            artifact_name: ARTIFACT_NAME,
            text,
            data,
        }
    }
}

/// A retrieved section, as numbered for the answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Passage {
    hit: Hit,
    /// The section text, shortened to [`MAX_PASSAGE_CHARS`].
    text: String,
}

impl Passage {
    fn new(hit: Hit) -> Passage {
        let text = shorten(
            corpus::strip_footnote_markers(hit.text.trim()).trim(),
            MAX_PASSAGE_CHARS,
        );
        Passage { hit, text }
    }

    /// Title and locus, as an answer names its quotations; with the question, when the section
    /// is a catechism's answer to one.
    fn label(&self) -> String {
        match self
            .hit
            .heading
            .as_deref()
            .filter(|h| h.trim_end().ends_with('?'))
        {
            Some(question) => format!("{}, {} ({question})", self.hit.title, self.hit.locus),
            None => format!("{}, {}", self.hit.title, self.hit.locus),
        }
    }

    /// Everything a reader needs to find the passage: title, author, year, printed reference,
    /// locus and heading.
    fn describe(&self) -> String {
        let hit = &self.hit;
        let mut line = hit.title.clone();
        match (&hit.author, hit.year) {
            (Some(author), Some(year)) => line.push_str(&format!(", {author} ({year})")),
            (Some(author), None) => line.push_str(&format!(", {author}")),
            (None, Some(year)) => line.push_str(&format!(" ({year})")),
            (None, None) => {}
        }
        if let Some(reference) = &hit.reference {
            line.push_str(&format!(", {reference}"));
        }
        line.push_str(&format!(", {}", hit.locus));
        if let Some(heading) = &hit.heading {
            line.push_str(&format!(" ({heading})"));
        }
        line
    }

    fn source_line(&self) -> String {
        let mut line = format!("{} [id: {}]", self.describe(), self.hit.id);
        if let Some(url) = &self.hit.source_url {
            line.push_str(&format!(" {url}"));
        }
        line
    }

    /// The citation object (README.md, "Choices where the reference is silent"). `document_id` is the section id (`doc#locus`), which
    /// `document_fetch` accepts; `document_year` is a string, as in the hosted service.
    fn citation(&self, index: usize) -> Value {
        let hit = &self.hit;
        json!({
            "document_index": index,
            "document_id": hit.id,
            "document_title": hit.title,
            "document_author": hit.author,
            "document_year": hit.year.map(|year| year.to_string()),
            "document_reference": hit.reference,
            "cited_text": self.text,
            "cited_text_heading": hit.heading,
            "source_url": hit.source_url,
        })
    }
}

/// The question of a request: data `question` (or `query`) wins over the text.
fn question(request: &SkillRequest) -> Result<String, SkillError> {
    let mut question = request.text.trim().to_string();
    for key in ["question", "query"] {
        match request.data.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) if !text.trim().is_empty() => {
                question = text.trim().to_string();
                break;
            }
            Some(Value::String(_)) => continue,
            Some(other) => {
                return Err(SkillError::Failed(format!(
                    "`{key}` must be a string, not {other}. {EXAMPLE}"
                )));
            }
        }
    }
    if question.is_empty() {
        return Err(SkillError::Failed(format!(
            "There is no question to answer. {EXAMPLE}"
        )));
    }
    limits::check(
        "the catholic_qa question",
        &question,
        limits::MAX_QUESTION_CHARS,
    )?;
    Ok(question)
}

/// `maxCitations` from the data part: a whole number from 1 to [`MAX_CITATIONS`].
fn max_citations(request: &SkillRequest) -> Result<usize, SkillError> {
    let Some(value) = request.data.get("maxCitations").filter(|v| !v.is_null()) else {
        return Ok(DEFAULT_MAX_CITATIONS);
    };
    let number = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    };
    match number.and_then(|n| usize::try_from(n).ok()) {
        Some(n) if (1..=MAX_CITATIONS).contains(&n) => Ok(n),
        _ => Err(SkillError::Failed(format!(
            "`maxCitations` must be a whole number from 1 to {MAX_CITATIONS}, not {value}."
        ))),
    }
}

#[async_trait]
impl Skill for CatholicQa {
    fn info(&self) -> &SkillInfo {
        &catalog::CATHOLIC_QA
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        Ok(self.answer(&request, None).await?.into_output())
    }

    /// With a model, the answer is asked for streamed and sent on as it is written, markers
    /// checked on the way; the list of sources follows as the last piece. Without one (or when
    /// the corpus has nothing to cite), the whole text is one last piece.
    async fn run_streaming(
        &self,
        request: SkillRequest,
        events: tokio::sync::mpsc::Sender<SkillEvent>,
    ) -> Result<SkillOutput, SkillError> {
        let mut chunks = ChunkSender::new(events, ARTIFACT_NAME);
        let answer = self.answer(&request, Some(&mut chunks)).await?;
        let sent = if answer.streamed {
            answer.text.len()
        } else {
            0
        };
        let output = answer.into_output();
        chunks.finish(&output.text[sent..]).await;
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::net::SocketAddr;
    use std::sync::Mutex;
    use std::time::Duration;

    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use corpus::{CorpusWriter, Document, Section};

    use super::*;
    use crate::{Speaker, Turn};

    const API_KEY: &str = "sk-test-key-0123";

    /// A passage with invented text, for the prompt tests.
    pub(crate) fn passage(rank: usize, text: &str) -> Passage {
        Passage::new(Hit {
            id: format!("cat:fixture#{rank}"),
            doc_id: "cat:fixture".into(),
            locus: rank.to_string(),
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
        })
    }

    #[test]
    fn quotations_lose_the_sources_footnote_markers() {
        let quoted = passage(
            1,
            "Thy charity and faith, [1] and towards all the saints. [2]",
        );
        assert_eq!(
            quoted.text,
            "Thy charity and faith, and towards all the saints."
        );
        let citation = quoted.citation(1);
        assert_eq!(
            citation["cited_text"],
            "Thy charity and faith, and towards all the saints."
        );
    }

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
        assert!(answer.contains("cannot be answered"), "{answer}");
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
        let Err(SkillError::Failed(message)) =
            CatholicQa::new(Arc::new(Corpus::empty()), &settings)
        else {
            panic!("bad settings were accepted");
        };
        assert!(!message.contains("pa55word") && !message.contains(API_KEY));
        assert!(message.contains("http://"), "{message}");
    }

    /// One scripted reply of the fake backend.
    #[derive(Clone)]
    enum Reply {
        /// A chat completion whose message content is this text.
        Answer(&'static str),
        /// A status, optional `Retry-After`, and a raw body.
        Raw(StatusCode, Option<&'static str>, &'static str),
        /// A valid answer, after a pause.
        Slow(Duration),
    }

    /// What the fake backend received: the `Authorization` header and the JSON body.
    #[derive(Debug, Clone)]
    struct Received {
        authorization: Option<String>,
        body: Value,
    }

    #[derive(Clone)]
    struct Script {
        replies: Arc<Mutex<VecDeque<Reply>>>,
        received: Arc<Mutex<Vec<Received>>>,
    }

    async fn chat(State(script): State<Script>, headers: HeaderMap, body: String) -> Response {
        script.received.lock().unwrap().push(Received {
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            body: serde_json::from_str(&body).unwrap_or(Value::Null),
        });
        let reply = {
            let mut replies = script.replies.lock().unwrap();
            if replies.len() > 1 {
                replies.pop_front().unwrap()
            } else {
                replies.front().cloned().unwrap()
            }
        };
        let completion = |content: &str| {
            json!({
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "scripted-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            })
            .to_string()
        };
        match reply {
            Reply::Answer(content) => (
                StatusCode::OK,
                [("content-type", "application/json")],
                completion(content),
            )
                .into_response(),
            Reply::Raw(status, retry_after, body) => {
                let mut response = (status, body.to_string()).into_response();
                if let Some(seconds) = retry_after {
                    response
                        .headers_mut()
                        .insert("retry-after", seconds.parse().unwrap());
                }
                response
            }
            Reply::Slow(pause) => {
                tokio::time::sleep(pause).await;
                (StatusCode::OK, completion("Too late [1].")).into_response()
            }
        }
    }

    /// A chat-completions server on loopback that answers with the script, repeating the last
    /// reply once the others are used.
    async fn fake_backend(replies: Vec<Reply>) -> (SocketAddr, Arc<Mutex<Vec<Received>>>) {
        let script = Script {
            replies: Arc::new(Mutex::new(replies.into())),
            received: Arc::new(Mutex::new(Vec::new())),
        };
        let received = Arc::clone(&script.received);
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(script);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (address, received)
    }

    fn llm_settings(address: SocketAddr) -> LlmSettings {
        LlmSettings {
            base_url: Some(format!("http://{address}/v1")),
            model: "configured-model".into(),
            api_key: Some(API_KEY.into()),
            timeout_secs: 1,
            ..LlmSettings::default()
        }
    }

    async fn with_backend(
        replies: Vec<Reply>,
    ) -> (
        CatholicQa,
        Arc<Mutex<Vec<Received>>>,
        SocketAddr,
        tempfile::TempDir,
    ) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (address, received) = fake_backend(replies).await;
        let (data, corpus) = fixture_corpus();
        let mut qa = CatholicQa::new(corpus, &llm_settings(address)).unwrap();
        if let Some(backend) = &mut qa.backend {
            backend.client.backoff_base = Duration::from_millis(20);
        }
        (qa, received, address, data)
    }

    fn received(log: &Arc<Mutex<Vec<Received>>>) -> Vec<Received> {
        log.lock().unwrap().clone()
    }

    #[tokio::test]
    async fn the_model_answers_with_checked_citations() {
        let (qa, log, _, _data) = with_backend(vec![Reply::Answer(
            "Christ is truly present under bread and wine [1]. The faithful receive him with reverence [2].",
        )])
        .await;
        let output = qa.run(ask("What is the Eucharist?")).await.unwrap();
        assert_eq!(output.data["mode"], "llm");
        assert_eq!(output.data["model"], "scripted-model");
        let cited = citations(&output);
        assert_eq!(cited.len(), 2);
        assert_eq!(markers(output.data["answer"].as_str().unwrap()), [1, 2]);

        let calls = received(&log);
        assert_eq!(calls.len(), 1);
        let call = &calls[0];
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
        let (qa, log, _, _data) = with_backend(vec![Reply::Answer(
            "Bread of life [1]. Invented claim [7]. One body [3].",
        )])
        .await;
        let output = qa
            .run(ask_data(
                json!({"question": "What is the Eucharist?", "maxCitations": 3}),
            ))
            .await
            .unwrap();
        let system = received(&log)[0].body["messages"][0]["content"]
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
        let (qa, log, _, _data) =
            with_backend(vec![Reply::Answer("The faithful receive him [1].")]).await;
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
        qa.run(request).await.unwrap();
        let calls = received(&log);
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
        let (qa, log, _, _data) = with_backend(vec![
            Reply::Raw(StatusCode::TOO_MANY_REQUESTS, Some("0"), "slow down"),
            Reply::Raw(StatusCode::TOO_MANY_REQUESTS, None, "slow down"),
            Reply::Answer("Baptism washes away original sin [1]."),
        ])
        .await;
        let output = qa.run(ask("What does baptism do?")).await.unwrap();
        assert_eq!(received(&log).len(), 3);
        assert_eq!(citations(&output).len(), 1);
    }

    #[tokio::test]
    async fn a_backend_that_keeps_failing_gives_a_failed_task_without_its_words() {
        let (qa, log, address, _data) = with_backend(vec![Reply::Raw(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            "secret-internal-detail: key sk-test-key-0123 rejected by upstream",
        )])
        .await;
        let message = failure(qa.run(ask("What does baptism do?")).await);
        assert!(
            message.starts_with("The answering service is unavailable"),
            "{message}"
        );
        assert!(!message.contains("secret-internal-detail"), "{message}");
        assert!(!message.contains(API_KEY), "{message}");
        assert!(!message.contains(&address.to_string()), "{message}");
        assert_eq!(received(&log).len(), 3, "one attempt and two retries");
    }

    #[tokio::test]
    async fn a_malformed_reply_gives_a_failed_task() {
        let (qa, log, _, _data) = with_backend(vec![Reply::Raw(
            StatusCode::OK,
            None,
            "{\"choices\": [{\"message\": secret-internal-detail",
        )])
        .await;
        let message = failure(qa.run(ask("What does baptism do?")).await);
        assert!(message.contains("could not be read"), "{message}");
        assert!(!message.contains("secret-internal-detail"));
        assert_eq!(received(&log).len(), 1, "a malformed reply is not retried");
    }

    #[tokio::test]
    async fn a_slow_backend_times_out() {
        let (qa, _log, _, _data) = with_backend(vec![Reply::Slow(Duration::from_secs(3))]).await;
        let started = std::time::Instant::now();
        let message = failure(qa.run(ask("What does baptism do?")).await);
        assert!(
            message.contains("did not answer within 1 second"),
            "{message}"
        );
        assert!(started.elapsed() < Duration::from_millis(2500));
    }

    #[tokio::test]
    async fn a_backend_that_is_down_gives_a_failed_task() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap()
        };
        let (_data, corpus) = fixture_corpus();
        let mut qa = CatholicQa::new(corpus, &llm_settings(closed)).unwrap();
        if let Some(backend) = &mut qa.backend {
            backend.client.backoff_base = Duration::from_millis(5);
        }
        let message = failure(qa.run(ask("What does baptism do?")).await);
        assert!(message.contains("could not be reached"), "{message}");
    }

    #[tokio::test]
    async fn the_model_is_not_asked_when_nothing_is_relevant() {
        let (qa, log, _, _data) = with_backend(vec![Reply::Answer("Made up [1].")]).await;
        let output = qa
            .run(ask("What is the airspeed velocity of an unladen swallow?"))
            .await
            .unwrap();
        assert!(citations(&output).is_empty());
        assert_eq!(output.data["mode"], "llm");
        assert!(output.data.get("model").is_none());
        assert!(received(&log).is_empty());
    }
}
