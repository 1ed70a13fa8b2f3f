//! `catholic_qa`: answers with numbered citations, from passages retrieved in the corpus.
//!
//! The pipeline: the question (data `question` wins over the text), widened with the previous
//! question when it is a follow-up ("and who receives it?"); corpus searches; the hits that
//! bear on what is asked, judged one by one (see `judgement`), one per identical text,
//! numbered `[1]..[k]`; then an answer, either
//! - written by an OpenAI-compatible model that sees only those passages (`mode: "llm"`), whose
//!   markers are checked: a marker of a passage it was not given is removed and logged, the
//!   rest renumbered `1..m` in order of first use; or
//! - assembled from the passages' most relevant sentences (`mode: "extractive"`), when no
//!   model is configured, saying so in its first sentence; it quotes, of each kind of source,
//!   the place its first passage sets (see `focus`), where a model reads every judged passage
//!   and cites the ones it uses.
//!
//! Every entry of `citations` is a passage that was retrieved and shown to whoever wrote the
//! answer. A question the corpus cannot answer gets an answer saying so, naming what was
//! searched for, and no citations; the model is not asked at all then, so `model` is only
//! present when a model wrote the answer.

mod calendar_facts;
mod extractive;
mod focus;
mod judgement;
mod llm;
mod persons;
mod prompt;
mod retrieval;
mod sse;

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use corpus::{Corpus, CorpusError, Hit, SearchMode, SearchRequest};
use serde_json::{Map, Value, json};

pub use calendar_facts::CalendarFacts;
pub use extractive::EXTRACTIVE_PASSAGES;
pub use judgement::MIN_BEARING;
pub use llm::LlmSettings;

use self::extractive::{extractive_answer, shorten};
use self::judgement::Judgement;
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
/// The answer of a server whose corpus is empty: it names the command that fills it.
fn empty_corpus() -> String {
    format!(
        "The document corpus of this server is empty, so there is nothing to answer from. The operator fills it with `{}` (the Douay-Rheims, Haydock's commentary and the catechisms) and restarts the server.",
        crate::readings::INSTALL_BIBLE_COMMAND
    )
}
/// The answer when no passage bears on the question: it says so, names what was searched for,
/// and points to `document_search`, rather than quote passages sharing a word with it.
fn no_answer(asked: &[&str]) -> String {
    let searched = if asked.is_empty() {
        String::from("the words of the question")
    } else {
        asked
            .iter()
            .map(|term| format!("“{term}”"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "Nothing in this server's corpus answers this question: it was searched for {searched} (in the catechisms, Scripture and the other documents installed), and no passage bears on what is asked, so none is quoted. To look through the corpus yourself, search it with document_search, in the words you expect an answer to use."
    )
}

/// Questions about Catholic teaching, answered from the corpus with citations; the default
/// skill, and the one charged to the expensive bucket.
pub struct CatholicQa {
    corpus: Arc<Corpus>,
    backend: Option<Backend>,
    min_bearing: f32,
    calendar: Option<CalendarFacts>,
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
        Ok(CatholicQa {
            corpus,
            backend,
            min_bearing: MIN_BEARING,
            calendar: None,
        })
    }

    fn mode(&self) -> Mode {
        if self.backend.is_some() {
            Mode::Llm
        } else {
            Mode::Extractive
        }
    }

    /// The least bearing a passage needs to be quoted (see `judgement`): the default is
    /// [`MIN_BEARING`]; the retrieval evaluation sets others to choose it.
    pub fn with_min_bearing(mut self, min_bearing: f32) -> Self {
        self.min_bearing = min_bearing;
        self
    }

    /// Answers a question plainly about the calendar from these facts instead of the corpus
    /// (see `calendar_facts`).
    pub fn with_calendar(mut self, calendar: CalendarFacts) -> Self {
        self.calendar = Some(calendar);
        self
    }

    /// Sends the current trace's `traceparent` with each model request, from `context` (the
    /// server's, when it exports traces).
    pub fn with_trace_context(mut self, context: Option<crate::TraceContext>) -> Self {
        if let Some(backend) = &mut self.backend {
            backend.client.trace_context = context;
        }
        self
    }

    async fn retrieve(
        &self,
        question: &str,
        request: &SkillRequest,
        max_citations: usize,
    ) -> Result<(Vec<Passage>, Judgement), SkillError> {
        let query = retrieval::retrieval_query(question, &request.history);
        let stems = retrieval::topic_stems(&query);
        let names = corpus::saint_names(question).names;
        let min_bearing = self.min_bearing;
        let found = on_blocking_pool(&self.corpus, {
            let (query, names) = (query.clone(), names.clone());
            move |corpus| {
                let judgement = Judgement::new(&query, corpus, min_bearing);
                let mut searches = vec![judgement.topic_query()];
                searches.extend(judgement.wording_queries());
                let found = gather(corpus, &query, &searches, &names)?;
                Ok((found, judgement))
            }
        })
        .await?;
        let ((hits, about), judgement) = match found {
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
        let mut relevant: Vec<Hit> = hits
            .into_iter()
            .filter(|hit| retrieval::above_floor(hit, floor))
            .filter(|hit| judgement.bears_on(hit, about.contains(&hit.id)))
            .collect();
        narrow_to_the_answer(&mut relevant, &stems, &judgement, |hit| {
            about.contains(&hit.id)
                || judgement.defines(hit)
                || (!names.is_empty() && persons::names_as_subject(hit, &names))
        });
        let ordered = persons::citing_order(relevant, &stems, &names, &about, &judgement);
        let mut passages = Passage::distinct(ordered);
        if self.backend.is_none() {
            passages = focus::same_place(passages, &judgement, &about);
        }
        passages.truncate(max_citations);
        Ok((passages, judgement))
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
        let mut chunks = chunks;
        if let Some(answer) = self
            .answer_from_calendar(&question, request, chunks.as_deref_mut())
            .await?
        {
            return Ok(answer);
        }
        let mode = self.mode();
        if self.corpus.is_empty() {
            return Ok(Answer::uncited(&empty_corpus(), mode));
        }
        let (passages, judgement) = self.retrieve(&question, request, max_citations).await?;
        if passages.is_empty() {
            return Ok(Answer::uncited(&no_answer(&judgement.asked()), mode));
        }
        match &self.backend {
            Some(backend) => {
                self.answer_with_model(backend, &question, request, passages, chunks)
                    .await
            }
            None => {
                let mut passages = passages;
                passages.truncate(EXTRACTIVE_PASSAGES);
                Ok(Answer {
                    text: extractive_answer(&passages, &judgement),
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
        let given = prompt.passages;
        // The passages beyond the prompt's cannot be cited: not kept while the answer is read.
        let mut passages = passages;
        passages.truncate(given);
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
            Some(chunks) => stream_answer(&backend.client, prompt, chunks).await,
        };
        let (cited, model) = written.map_err(|failure| {
            SkillError::Failed(failure.user_message(backend.client.timeout_secs()))
        })?;
        if !cited.dropped.is_empty() {
            tracing::warn!(
                dropped = ?cited.dropped,
                given,
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

/// Keeps, of the passages bearing on a question, those that answer it when some do: the verse
/// the question quotes; else a catechism asking the very question; else, for what Christ said,
/// the Gospels; else catechism answers whose question holds every key term of the user's,
/// asked with the same kind of question word, or else with any. Passages sharing the words are
/// not quoted beside the answer. The passages about a person the question names (`kept`) stay.
fn narrow_to_the_answer(
    relevant: &mut Vec<Hit>,
    stems: &BTreeSet<String>,
    judgement: &Judgement,
    kept: impl Fn(&Hit) -> bool,
) {
    let rules: [&dyn Fn(&Hit) -> bool; 5] = [
        &|hit| judgement.quotes_the_verse(hit),
        &|hit| judgement.asks(hit, stems),
        &|hit| judgement.preferred(hit),
        &|hit| judgement.asks_alike(hit),
        &|hit| judgement.answered_in_heading(hit),
    ];
    if let Some(rule) = rules.iter().find(|rule| relevant.iter().any(rule)) {
        relevant.retain(|hit| rule(hit) || kept(hit));
    }
}

/// The hits a question's passages are chosen from, in search order, and the ids of the verses
/// found about the person it names: a search for the question; searches `on_topic`, for its
/// key terms alone (a name or a frequent word must not crowd them out) and then for the
/// texts' wordings of its modern words (quoted); searches in the catechisms alone, for the
/// question and for those wordings ("What is the Holy Eucharist?" for the Real Presence); and
/// for a person the catechism answer saying who they were and the verses found
/// with its words.
fn gather(
    corpus: &Corpus,
    query: &str,
    on_topic: &[String],
    names: &[String],
) -> Result<(Vec<Hit>, Vec<String>), CorpusError> {
    let search = SearchRequest {
        limit: RETRIEVAL_DEPTH,
        ..SearchRequest::new(query)
    };
    let mut hits = corpus.search(&search)?.hits;
    let add = |hits: &mut Vec<Hit>, found: Vec<Hit>| {
        for hit in found {
            if hits.iter().all(|h| h.id != hit.id) {
                hits.push(hit);
            }
        }
    };
    for topic_query in on_topic {
        if topic_query.trim().is_empty() || topic_query == query {
            continue;
        }
        let search = SearchRequest {
            limit: RETRIEVAL_DEPTH,
            ..SearchRequest::new(topic_query.as_str())
        };
        add(&mut hits, corpus.search(&search)?.hits);
    }
    // The catechisms are searched on their own too: a catechism answering the question must
    // not be crowded out of the first hits by short verses sharing one word.
    let in_catechisms = SearchRequest {
        limit: corpus::MAX_LIMIT,
        filters: corpus::SearchFilters {
            doc_type: Some("catechism".into()),
            ..corpus::SearchFilters::default()
        },
        ..search.clone()
    };
    let mut catechisms = corpus.search(&in_catechisms)?.hits;
    for wording in on_topic.iter().skip(1) {
        let in_their_words = SearchRequest {
            limit: RETRIEVAL_DEPTH,
            ..SearchRequest::new(wording.trim_matches('"'))
        };
        let found = corpus.search(&SearchRequest {
            filters: in_catechisms.filters.clone(),
            ..in_their_words
        })?;
        add(&mut catechisms, found.hits);
    }
    add(&mut hits, catechisms.clone());
    let Some(defining) = catechisms
        .iter()
        .find(|hit| persons::names_as_subject(hit, names))
        .cloned()
    else {
        return Ok((hits, Vec::new()));
    };
    let in_scripture = SearchRequest {
        limit: persons::SCRIPTURE_VERSES,
        filters: corpus::SearchFilters {
            doc_type: Some("scripture".into()),
            ..corpus::SearchFilters::default()
        },
        ..SearchRequest::new(persons::scripture_query(names, &defining))
    };
    let verses = corpus.search(&in_scripture)?.hits;
    let about = verses.iter().map(|hit| hit.id.clone()).collect();
    add(&mut hits, vec![defining]);
    add(&mut hits, verses);
    Ok((hits, about))
}

/// Asks the model for a streamed answer and sends it on as it arrives, its markers checked as
/// [`prompt::cite`] checks a whole answer. Text kept back by a slow reader leaves as soon as
/// the reader makes room, while the answer is still being read. The prompt is freed once the
/// backend has accepted it: a stream may wait long for its answer, and the prompt (passages up
/// to the context budget) is the largest thing it would hold meanwhile.
async fn stream_answer(
    client: &LlmClient,
    prompt: Prompt,
    chunks: &mut ChunkSender,
) -> Result<(Cited, String), BackendFailure> {
    let Prompt { messages, passages } = prompt;
    let mut answer = client.stream(&messages).await?;
    drop(messages);
    let mut citer = Citer::new(passages);
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
    /// Other sections with the very same text ("Baltimore Catechism No. 2, 238"), named
    /// instead of quoted again.
    also_in: Vec<String>,
}

impl Passage {
    fn new(hit: Hit) -> Passage {
        let text = shorten(
            corpus::strip_footnote_markers(hit.text.trim()).trim(),
            MAX_PASSAGE_CHARS,
        );
        Passage {
            hit,
            text,
            also_in: Vec::new(),
        }
    }

    /// The hits as passages, one per text: a section whose text is the same as an earlier
    /// one's (the catechisms of Baltimore share most answers) is named in that passage's
    /// [`Passage::also_in`] rather than quoted twice.
    fn distinct(hits: Vec<Hit>) -> Vec<Passage> {
        let mut passages: Vec<(String, Passage)> = Vec::with_capacity(hits.len());
        for hit in hits {
            let same = retrieval::words(&hit.text).join(" ");
            match passages.iter_mut().find(|(text, _)| *text == same) {
                Some((_, earlier)) => earlier
                    .also_in
                    .push(format!("{}, {}", hit.title, hit.locus)),
                None => passages.push((same, Passage::new(hit))),
            }
        }
        passages.into_iter().map(|(_, passage)| passage).collect()
    }

    /// Whether the section is a catechism's answer to the question of its heading.
    fn is_catechism_answer(&self) -> bool {
        self.hit.doc_type == "catechism"
            && self
                .hit
                .heading
                .as_deref()
                .is_some_and(|h| h.trim_end().ends_with('?'))
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
    use super::*;

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
}
