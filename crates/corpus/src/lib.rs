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
//! # Imports
//! [`CorpusWriter::import`] reads JSON Lines files (one [`Document`] a line) and Markdown files;
//! see [`import`] for the Markdown format and how section loci are derived.

mod analysis;
pub mod import;
mod index;
mod model;
mod search;
mod store;
mod writer;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tantivy::{IndexReader, ReloadPolicy};

pub use import::{ImportIssue, ImportReport};
pub use model::{Document, Section, validate_id};
pub use search::{
    DEFAULT_LIMIT, HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, Hit, MAX_LIMIT, MAX_OFFSET, SearchFilters,
    SearchRequest, SearchResults,
};
pub use writer::{CorpusWriter, WriteSummary};

use crate::analysis::{analyse, plain_analyser};
use crate::index::Fields;
use crate::store::{CatalogEntry, DocumentFile};

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

/// A read-only view of the corpus as it was when opened; cheap to share behind an `Arc`.
pub struct Corpus {
    loaded: Option<Loaded>,
}

struct Loaded {
    reader: IndexReader,
    fields: Fields,
    catalog: Vec<CatalogEntry>,
    positions: HashMap<String, usize>,
    documents: DocumentFile,
}

impl Loaded {
    fn entry(&self, id: &str) -> Option<&CatalogEntry> {
        self.positions
            .get(id)
            .map(|&position| &self.catalog[position])
    }
}

/// Where the corpus of a data directory lives.
pub fn corpus_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("corpus")
}

impl Corpus {
    /// Opens the corpus of a data directory. A directory with no corpus yet is an empty corpus;
    /// a damaged one is an error. Several processes may open the same directory.
    pub fn open(data_dir: &Path) -> Result<Corpus, CorpusError> {
        let dir = corpus_dir(data_dir);
        let Some(generation) = store::current_generation(&dir)? else {
            return Ok(Corpus::empty());
        };
        let catalog = store::load_catalog(&generation)?;
        let (index, fields) = index::open(&generation.join(store::INDEX_DIR))?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let documents = DocumentFile::open(&generation)?;
        let positions = catalog
            .iter()
            .enumerate()
            .map(|(position, entry)| (entry.id.clone(), position))
            .collect();
        Ok(Corpus {
            loaded: Some(Loaded {
                reader,
                fields,
                catalog,
                positions,
                documents,
            }),
        })
    }

    /// A corpus with no documents: what a server without corpus data serves.
    pub fn empty() -> Corpus {
        Corpus { loaded: None }
    }

    /// True when there is nothing to search.
    pub fn is_empty(&self) -> bool {
        self.loaded.as_ref().is_none_or(|l| l.catalog.is_empty())
    }

    /// What the corpus holds.
    pub fn stats(&self) -> CorpusStats {
        let mut stats = CorpusStats::default();
        let Some(loaded) = &self.loaded else {
            return stats;
        };
        for entry in &loaded.catalog {
            stats.documents += 1;
            stats.sections += entry.sections;
            *stats.by_type.entry(entry.doc_type.clone()).or_default() += 1;
            *stats.by_language.entry(entry.language.clone()).or_default() += 1;
        }
        stats
    }

    /// Searches the sections; see the crate docs for the query syntax.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, CorpusError> {
        search::check_paging(request)?;
        let Some(loaded) = &self.loaded else {
            // Still refuse a query with nothing to search, as a non-empty corpus would.
            let (_, fields) = index::schema();
            search::build_query(&fields, request)?;
            return Ok(SearchResults {
                total: 0,
                hits: Vec::new(),
            });
        };
        let query = search::build_query(&loaded.fields, request)?;
        search::run(
            &loaded.reader.searcher(),
            &loaded.fields,
            query.as_ref(),
            request,
            &|id| loaded.entry(id),
        )
    }

    /// The whole document with this id.
    pub fn document(&self, id: &str) -> Result<Option<Document>, CorpusError> {
        let Some(loaded) = &self.loaded else {
            return Ok(None);
        };
        match loaded.entry(id) {
            Some(entry) => loaded.documents.read(entry).map(Some),
            None => Ok(None),
        }
    }

    /// One section of a document.
    pub fn section(&self, id: &str, locus: &str) -> Result<Option<Section>, CorpusError> {
        Ok(self
            .document(id)?
            .and_then(|document| document.section(locus).cloned()))
    }

    /// The ids and titles closest to what the user typed, best first, for "did you mean".
    pub fn suggest(&self, id_or_title: &str, n: usize) -> Vec<(String, String)> {
        let Some(loaded) = &self.loaded else {
            return Vec::new();
        };
        let wanted = Trigrams::of(id_or_title);
        let mut scored: Vec<(f64, &CatalogEntry)> = loaded
            .catalog
            .iter()
            .map(|entry| {
                let score = wanted
                    .similarity(&Trigrams::of(&entry.id))
                    .max(wanted.similarity(&Trigrams::of(&entry.title)));
                (score, entry)
            })
            .filter(|(score, _)| *score >= SUGGESTION_THRESHOLD)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        scored
            .into_iter()
            .take(n)
            .map(|(_, entry)| (entry.id.clone(), entry.title.clone()))
            .collect()
    }
}

/// Below this similarity a suggestion would only confuse.
const SUGGESTION_THRESHOLD: f64 = 0.15;

/// Character trigrams of a folded, lower-cased text: robust to typos and word order.
struct Trigrams(std::collections::BTreeSet<String>);

impl Trigrams {
    fn of(text: &str) -> Trigrams {
        let words: Vec<String> = analyse(&mut plain_analyser(), text)
            .into_iter()
            .map(|(_, word)| word)
            .collect();
        let padded: Vec<char> = format!("  {}  ", words.join(" ")).chars().collect();
        Trigrams(
            padded
                .windows(3)
                .map(|w| w.iter().collect::<String>())
                .filter(|g| !g.trim().is_empty())
                .collect(),
        )
    }

    /// Dice coefficient of the two sets.
    fn similarity(&self, other: &Trigrams) -> f64 {
        let total = self.0.len() + other.0.len();
        if total == 0 {
            return 0.0;
        }
        let shared = self.0.intersection(&other.0).count();
        2.0 * shared as f64 / total as f64
    }
}
