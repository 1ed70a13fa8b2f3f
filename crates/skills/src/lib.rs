//! Skills: the work behind `message/send`.
//!
//! A skill takes the text and data a user sent (plus the earlier turns of the conversation) and
//! returns either an artifact or a reason it could not do the work. Skills know nothing of
//! JSON-RPC envelopes, HTTP, tokens or storage: the server turns their outcome into a task.
//! While it works, a skill may also send the artifact's text in pieces ([`SkillEvent`], see
//! [`Skill::run_streaming`]), which the server turns into a stream's events.

pub mod calendar;
pub mod documents;
mod events;
pub mod limits;
mod phrases;
pub mod qa;
pub mod readings;
mod registry;
pub mod saints;
mod settings;
pub mod shown_url;

pub use events::SkillEvent;
pub use registry::SkillRegistry;
pub use settings::{LiturgySettings, SkillSettings, TRACE_TARGET, TraceContext};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// Which rate-limit bucket a call of the skill is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bucket {
    /// Cheap skills (search, fetch, calendar).
    Default,
    /// Skills that run an LLM pipeline (`catholic_qa`).
    Expensive,
    /// Reads of stored tasks (`tasks/get`, `tasks/cancel`), charged by the server: no skill
    /// draws from it.
    Read,
}

impl Bucket {
    /// The bucket's name as used in config keys, metrics and rate-limit headers.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Default => "default",
            Bucket::Expensive => "expensive",
            Bucket::Read => "read",
        }
    }
}

/// What the agent card says about a skill, and which bucket it draws from.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillInfo {
    /// The `metadata.skillId` value.
    pub id: &'static str,
    /// Human name.
    pub name: &'static str,
    /// What it does, for people and for orchestrating agents.
    pub description: &'static str,
    /// Search tags.
    pub tags: &'static [&'static str],
    /// Example requests (text a user could send).
    pub examples: &'static [&'static str],
    /// The rate-limit bucket.
    pub bucket: Bucket,
}

/// Who said an earlier turn of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The user.
    User,
    /// This agent.
    Agent,
}

/// One earlier message of the same conversation, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Who said it.
    pub speaker: Speaker,
    /// Its text parts, joined.
    pub text: String,
}

/// One call of a skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRequest {
    /// The text parts of the message, joined; empty when there were none.
    pub text: String,
    /// The data parts of the message, merged (later parts win); fields here win over the text.
    pub data: Map<String, Value>,
    /// Earlier turns of the conversation (same `contextId`, or the continued task), oldest first.
    pub history: Vec<Turn>,
    /// The moment of the request, so that "today" is one instant for the whole call.
    pub now: DateTime<Utc>,
    /// The HTTP request's `Accept-Language`, for skills that answer in several languages.
    pub accept_language: Option<String>,
}

impl SkillRequest {
    /// A request with only text, at `now`; handy for tests and the CLI.
    pub fn from_text(text: impl Into<String>, now: DateTime<Utc>) -> Self {
        SkillRequest {
            text: text.into(),
            data: Map::new(),
            history: Vec::new(),
            now,
            accept_language: None,
        }
    }

    /// A string field of the data part, trimmed, if present and non-empty.
    pub fn data_str(&self, key: &str) -> Option<&str> {
        self.data
            .get(key)?
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// A finished piece of work: becomes the task's one artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillOutput {
    /// The artifact name, e.g. `search_results`.
    pub artifact_name: &'static str,
    /// A human-readable rendering, sent as the first (text) part and as the agent's reply.
    pub text: String,
    /// The structured result, sent as the second (data) part.
    pub data: Map<String, Value>,
}

/// Why a skill produced no artifact.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkillError {
    /// The skill could not do the work (bad input, unknown id, no data, backend down): the task
    /// is `failed` and this text is the agent's message, so it must help the user.
    #[error("{0}")]
    Failed(String),
    /// The input is over one of the skill's limits (see [`limits`]): refused as invalid params
    /// (`-32602`) naming the limit, and no task is stored.
    #[error("{0}")]
    InvalidInput(String),
    /// A fault of the server itself: answered as an internal error and logged, never shown.
    #[error("internal skill fault: {0}")]
    Internal(String),
}

/// A skill of this agent.
#[async_trait]
pub trait Skill: Send + Sync {
    /// The card entry and bucket.
    fn info(&self) -> &SkillInfo;

    /// Does the work.
    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError>;

    /// Does the work as [`run`](Skill::run) does, and sends the artifact's text to `events`
    /// while it is written, so that a streamed answer appears as it is written. Returns the same
    /// output `run` would (the stored task holds it); the pieces sent, joined, are its `text`.
    ///
    /// The default runs `run` and sends the whole text as one last piece: a skill that has
    /// nothing to say before it is done streams unchanged. Ordering, backpressure and a reader
    /// that leaves are described on [`SkillEvent`]: the skill never waits for room except for
    /// the last piece, and a closed channel stops the sending, not the work. On failure no last
    /// piece is sent. Dropping the returned future stops the work, backend requests included.
    async fn run_streaming(
        &self,
        request: SkillRequest,
        events: tokio::sync::mpsc::Sender<SkillEvent>,
    ) -> Result<SkillOutput, SkillError> {
        let output = self.run(request).await?;
        events::send_whole(events, &output).await;
        Ok(output)
    }
}

/// The card entries of the five skills, in the order the card lists them.
pub mod catalog {
    use super::{Bucket, SkillInfo};

    /// Questions about Catholic teaching, answered with citations.
    pub const CATHOLIC_QA: SkillInfo = SkillInfo {
        id: "catholic_qa",
        name: "Catholic Q&A",
        description: "Ask a question about Catholic teaching and receive an answer with numbered citations from the documents of the corpus (Scripture, catechisms, magisterial texts).",
        tags: &["catholic", "theology", "question-answering", "citations"],
        examples: &[
            "What does the Church teach about the Real Presence?",
            "Why do Catholics pray to saints?",
            "What is grace?",
        ],
        bucket: Bucket::Expensive,
    };

    /// Full-text search over the corpus.
    pub const DOCUMENT_SEARCH: SkillInfo = SkillInfo {
        id: "document_search",
        name: "Document Search",
        description: "Search the document corpus (magisterial documents, catechisms, Scripture, commentaries) and get ranked passages with ids for document_fetch.",
        tags: &["search", "documents", "magisterium"],
        examples: &["grace and free will", "The Lord is my shepherd"],
        bucket: Bucket::Default,
    };

    /// One document by id.
    pub const DOCUMENT_FETCH: SkillInfo = SkillInfo {
        id: "document_fetch",
        name: "Document Fetch",
        description: "Retrieve the full text and metadata of one document (or one section with id#locus) by the id document_search returned.",
        tags: &["documents", "fetch"],
        examples: &["cat:baltimore-1", "bible:dr/JHN#3:16"],
        bucket: Bucket::Default,
    };

    /// Mass readings for a date or occasion.
    pub const LITURGICAL_READINGS: SkillInfo = SkillInfo {
        id: "liturgical_readings",
        name: "Liturgical Readings",
        description: "Get the Mass readings and the liturgical day (celebration, rank, colour, season, cycles) for any date or occasion, in the General Roman Calendar or a national one. Understands natural language such as 'next Sunday' or 'Easter 2026' (also 'Wielkanoc 2027', 'dimanche prochain', 'nächsten Sonntag'). Data part: date (YYYY-MM-DD), query, calendar (general-roman, americas, europe, united-states, canada, england-and-wales, ireland, australia, brazil, portugal, poland, france, belgium, netherlands, germany, austria, switzerland), language (BCP 47: en, la, pt, pl, fr, nl, de, es, it; else Accept-Language), epiphany_on_sunday, ascension_on_sunday, corpus_christi_on_sunday (true/false). Ids and enum values stay English; names follow the language.",
        tags: &["liturgy", "mass", "readings", "calendar", "multilingual"],
        examples: &[
            "today",
            "next Sunday",
            "Easter 2026",
            "2026-12-08",
            "Pâques 2027",
        ],
        bucket: Bucket::Default,
    };

    /// Saints and celebrations of a date.
    pub const SAINTS_OF_THE_DAY: SkillInfo = SkillInfo {
        id: "saints_of_the_day",
        name: "Saints of the Day",
        description: "Get the saints and celebrations of a date in the General Roman Calendar or a national one, whether each is celebrated that year and why not, and the Roman Martyrology names when installed. Data part: date (YYYY-MM-DD), query, calendar (general-roman, americas, europe, united-states, canada, england-and-wales, ireland, australia, brazil, portugal, poland, france, belgium, netherlands, germany, austria, switzerland), language (BCP 47: en, la, pt, pl, fr, nl, de, es, it; else Accept-Language), and the three Sunday options.",
        tags: &["saints", "calendar", "martyrology", "multilingual"],
        examples: &["today", "November 1", "2026-12-08", "3 maja"],
        bucket: Bucket::Default,
    };

    /// All five, in card order.
    pub const ALL: [SkillInfo; 5] = [
        CATHOLIC_QA,
        DOCUMENT_SEARCH,
        DOCUMENT_FETCH,
        LITURGICAL_READINGS,
        SAINTS_OF_THE_DAY,
    ];

    /// The skill used when a message names none.
    pub const DEFAULT_SKILL_ID: &str = "catholic_qa";
}

/// Runs a CPU-heavy corpus step (a search, a "did you mean" over every id) on the blocking
/// pool, so that no query holds an async worker while other requests wait. The server's
/// request timeout still bounds the call: the answer does not wait past it.
pub(crate) async fn on_blocking_pool<T: Send + 'static>(
    corpus: &std::sync::Arc<corpus::Corpus>,
    work: impl FnOnce(&corpus::Corpus) -> T + Send + 'static,
) -> Result<T, SkillError> {
    let corpus = std::sync::Arc::clone(corpus);
    tokio::task::spawn_blocking(move || work(&corpus))
        .await
        .map_err(|e| SkillError::Internal(format!("corpus task: {e}")))
}
