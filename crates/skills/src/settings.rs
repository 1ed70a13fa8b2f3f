//! Deployment settings the skills read: where the data lives and how the calendar is kept.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use corpus::SearchMode;

use crate::qa::LlmSettings;

/// Calendar options of a deployment. The General Roman Calendar keeps all three on their
/// weekdays; many national calendars move them to Sunday.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiturgySettings {
    /// IANA time zone in which "today" is reckoned, e.g. `Europe/Rome`.
    pub time_zone: String,
    /// Keep Epiphany on the Sunday between Jan 2 and Jan 8.
    pub epiphany_on_sunday: bool,
    /// Keep the Ascension on the Seventh Sunday of Easter.
    pub ascension_on_sunday: bool,
    /// Keep Corpus Christi on the Sunday after Trinity.
    pub corpus_christi_on_sunday: bool,
}

impl Default for LiturgySettings {
    fn default() -> Self {
        LiturgySettings {
            time_zone: "UTC".into(),
            epiphany_on_sunday: false,
            ascension_on_sunday: false,
            corpus_christi_on_sunday: false,
        }
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
}
