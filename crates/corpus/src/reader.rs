//! The reader: a corpus generation opened read-only, searched in BM25 or hybrid mode, its
//! documents and sections read by id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::{IndexReader, ReloadPolicy, Term};

use crate::analysis::{analyse, analyser_key, index_analyser};

#[cfg(feature = "embeddings")]
use crate::fusion::{self, Semantic};
use crate::index::{self, Fields};
use crate::search::{self, SearchRequest, SearchResults};
use crate::store::{self, CatalogEntry, DocumentFile};
use crate::suggestions;
use crate::{CorpusError, CorpusStats, Document, SearchMode, Section};
#[cfg(feature = "embeddings")]
use crate::{SentenceEmbedder, model_dir, model_installed, vectors};

/// A read-only view of the corpus as it was when opened; cheap to share behind an `Arc`.
pub struct Corpus {
    loaded: Option<Loaded>,
    mode: SearchMode,
    /// Set once a fallback from hybrid to BM25 has been logged, so logs are not flooded.
    fallback_logged: AtomicBool,
    #[cfg(feature = "embeddings")]
    semantic: Option<Semantic>,
}

/// The opened generation: the index reader, the catalog and the documents file.
pub(crate) struct Loaded {
    pub(crate) reader: IndexReader,
    pub(crate) fields: Fields,
    pub(crate) catalog: Vec<CatalogEntry>,
    pub(crate) positions: HashMap<String, usize>,
    pub(crate) documents: DocumentFile,
}

impl Loaded {
    pub(crate) fn entry(&self, id: &str) -> Option<&CatalogEntry> {
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

    /// How much a word says about what a passage is about, as BM25 weighs it in the English
    /// texts: `ln(1 + (N − n + ½) / (n + ½))`, with `n` the sections holding the word (by its
    /// stem) and `N` all sections. "sin" or "allowed", found everywhere, weigh little; "divorce"
    /// much; a word no section holds ("euthanasia") weighs most. `None` for a word the analyser
    /// drops (a stop word) and on an empty corpus.
    pub fn rarity(&self, word: &str) -> Option<f32> {
        let loaded = self.loaded.as_ref()?;
        let tokens = analyse(&mut index_analyser(analyser_key("en")), word);
        let (_, token) = tokens.first()?;
        let field = loaded.fields.for_language("en").text;
        let searcher = loaded.reader.searcher();
        let sections = searcher.num_docs() as f32;
        let holding = searcher
            .doc_freq(&Term::from_field_text(field, token))
            .unwrap_or(0) as f32;
        Some((1.0 + (sections - holding + 0.5) / (holding + 0.5)).ln())
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
                return fusion::hybrid_search(loaded, semantic, request);
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
        match &self.loaded {
            Some(loaded) => suggestions::closest(&loaded.catalog, id_or_title, n),
            None => Vec::new(),
        }
    }
}
