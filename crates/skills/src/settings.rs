//! Deployment settings the skills read: where the data lives and how the calendar is kept.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use corpus::SearchMode;

use crate::qa::LlmSettings;

/// The calendar of a deployment: which territory's, in which language, with which options. A
/// request may choose another calendar, language or option in its data part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiturgySettings {
    /// IANA time zone in which "today" is reckoned, e.g. `Europe/Rome`.
    pub time_zone: String,
    /// The calendar answered from when a request names none: `general-roman` or a territory's
    /// (`poland`, `united-states`… as `liturgy::calendar_ids` lists them).
    pub calendar: String,
    /// The language of answers when a request asks for none (BCP 47, e.g. `pl`, `pt-BR`).
    pub language: String,
    /// Keep Epiphany on the Sunday between Jan 2 and Jan 8; unset: the calendar's own choice.
    pub epiphany_on_sunday: Option<bool>,
    /// Keep the Ascension on the Seventh Sunday of Easter; unset: the calendar's own choice.
    pub ascension_on_sunday: Option<bool>,
    /// Keep Corpus Christi on the Sunday after Trinity; unset: the calendar's own choice.
    pub corpus_christi_on_sunday: Option<bool>,
}

impl Default for LiturgySettings {
    fn default() -> Self {
        LiturgySettings {
            time_zone: "UTC".into(),
            calendar: liturgy::GENERAL_ROMAN.into(),
            language: "en".into(),
            epiphany_on_sunday: None,
            ascension_on_sunday: None,
            corpus_christi_on_sunday: None,
        }
    }
}

impl LiturgySettings {
    /// The first key whose value the calendar cannot use, with the reason: the start-up check,
    /// so that a deployment never answers from a calendar or in a language it did not mean.
    pub fn invalid_key(&self) -> Option<(&'static str, String)> {
        if !liturgy::calendar_ids().any(|id| id == self.calendar) {
            return Some((
                "liturgy.calendar",
                format!(
                    "`{}` is not one of {}",
                    self.calendar,
                    liturgy::calendar_ids().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if liturgy::names::supported(&self.language).is_none() {
            return Some((
                "liturgy.language",
                format!(
                    "`{}` is not one of {}",
                    self.language,
                    liturgy::names::LANGUAGES.join(", ")
                ),
            ));
        }
        None
    }
}

/// The `tracing` target of the spans a deployment may export as traces (the model request):
/// the server's trace layer enables exactly this target, and its log lines never show it.
pub const TRACE_TARGET: &str = "a2a::trace";

/// How a skill learns the W3C `traceparent` to send with a request of its own (the model
/// request): a function of the current span, given by the server when it exports traces. The
/// skills stay free of any tracing framework beyond `tracing` itself.
#[derive(Clone, Copy)]
pub struct TraceContext(pub fn() -> Option<String>);

impl TraceContext {
    /// The `traceparent` of the current span, if it is part of an exported trace.
    pub fn traceparent(self) -> Option<String> {
        (self.0)()
    }
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TraceContext")
    }
}

impl PartialEq for TraceContext {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

/// Everything the skills need from the deployment's configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkillSettings {
    /// The data directory (`A2A__DATA__DIR`): Bible text, corpus index, martyrology.
    pub data_dir: PathBuf,
    /// Calendar options.
    pub liturgy: LiturgySettings,
    /// The language model behind `catholic_qa` (none: extractive answers).
    pub llm: LlmSettings,
    /// BM25 alone, or BM25 fused with sentence embeddings (needs the `embeddings` build
    /// feature and the installed model; falls back to BM25 otherwise).
    pub search_mode: SearchMode,
    /// Where the `traceparent` of an outgoing model request comes from (`None`: traces are off
    /// and no header is sent).
    pub trace_context: Option<TraceContext>,
}
