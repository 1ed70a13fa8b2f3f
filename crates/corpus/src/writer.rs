//! Changing the corpus: imports, upserts, removals and rebuilds, each one complete new generation.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::import::{self, ImportReport};
use crate::store::{self, GenerationWriter};
use crate::{CorpusError, Document, corpus_dir};

/// What a change did, for the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WriteSummary {
    /// Documents that were not there before.
    pub added: usize,
    /// Documents replaced by a record with the same id.
    pub replaced: usize,
    /// Documents removed.
    pub removed: usize,
    /// Documents in the corpus afterwards.
    pub documents: usize,
    /// Sections in the corpus afterwards.
    pub sections: usize,
}

/// Told how far a write has got, so that a command line can show progress on work that takes
/// minutes (a reindex with embeddings computes one vector per section).
pub trait Progress {
    /// Before the first document: how many sections the new generation will hold.
    fn start(&mut self, sections: usize);
    /// After each document written: sections written so far.
    fn advance(&mut self, sections: usize);
    /// Every document is written (`sections` in all); the index (and the vectors still
    /// pending) are being made durable, which can take a while of its own.
    fn finishing(&mut self, sections: usize);
}

/// The single writer of a corpus directory. It holds an exclusive lock for its lifetime, so two
/// imports cannot interleave; readers ([`crate::Corpus`]) are never blocked.
pub struct CorpusWriter {
    dir: PathBuf,
    _lock: File,
    progress: Option<Box<dyn Progress>>,
    #[cfg(feature = "embeddings")]
    embeddings: WriteEmbeddings,
}

/// The embedding model of a writer, loaded on the first write that needs it.
#[cfg(feature = "embeddings")]
struct WriteEmbeddings {
    model_dir: PathBuf,
    loaded: Option<Option<std::sync::Arc<crate::SentenceEmbedder>>>,
}

#[cfg(feature = "embeddings")]
impl WriteEmbeddings {
    /// The model, or `None` (with a warning if it is installed but unusable): vectors are an
    /// optional signal, so a missing model never stops a write.
    fn embedder(&mut self) -> Option<std::sync::Arc<crate::SentenceEmbedder>> {
        let model_dir = &self.model_dir;
        self.loaded
            .get_or_insert_with(|| {
                if !crate::embedding_model::MODEL_FILES
                    .iter()
                    .all(|name| model_dir.join(name).is_file())
                {
                    tracing::debug!(model = %model_dir.display(), "no embedding model: no vectors");
                    return None;
                }
                match crate::SentenceEmbedder::load(model_dir) {
                    Ok(embedder) => Some(std::sync::Arc::new(embedder)),
                    Err(error) => {
                        tracing::warn!(%error, "the embedding model is unusable: no vectors");
                        None
                    }
                }
            })
            .clone()
    }
}

impl CorpusWriter {
    /// Takes the write lock of `<data_dir>/corpus/`, creating the directory if needed.
    pub fn open(data_dir: &Path) -> Result<CorpusWriter, CorpusError> {
        let dir = corpus_dir(data_dir);
        fs::create_dir_all(&dir).map_err(|source| CorpusError::Io {
            path: dir.clone(),
            source,
        })?;
        let lock_path = dir.join(store::LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| CorpusError::Io {
                path: lock_path.clone(),
                source,
            })?;
        let locked =
            fs4::fs_std::FileExt::try_lock_exclusive(&lock).map_err(|source| CorpusError::Io {
                path: lock_path.clone(),
                source,
            })?;
        if !locked {
            return Err(CorpusError::Locked(dir));
        }
        Ok(CorpusWriter {
            dir,
            _lock: lock,
            progress: None,
            #[cfg(feature = "embeddings")]
            embeddings: WriteEmbeddings {
                model_dir: crate::model_dir(data_dir),
                loaded: None,
            },
        })
    }

    /// Reports the progress of every later write to `progress`.
    pub fn with_progress(mut self, progress: Box<dyn Progress>) -> CorpusWriter {
        self.progress = Some(progress);
        self
    }

    /// Adds or replaces documents (same id replaces) in one generation and one index commit.
    /// Every document is validated first: one invalid document refuses the whole batch, and
    /// nothing is written.
    pub fn upsert(
        &mut self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<WriteSummary, CorpusError> {
        let mut upserts = BTreeMap::new();
        for document in documents {
            document.validate()?;
            upserts.insert(document.id.clone(), document);
        }
        self.apply(upserts, &BTreeSet::new(), Reuse::UnchangedSections)
    }

    /// Imports JSON Lines and Markdown files and folders (see [`crate::import`]). Bad records
    /// are reported by file and line and skipped; the good ones are written in one generation.
    pub fn import(&mut self, paths: &[PathBuf]) -> Result<ImportReport, CorpusError> {
        let (documents, files, issues) = import::read_sources(paths);
        if documents.is_empty() {
            return Ok(import::nothing_written(files, issues));
        }
        let valid_records = documents.len();
        let upserts = documents
            .into_iter()
            .map(|located| (located.document.id.clone(), located.document))
            .collect();
        let summary = self.apply(upserts, &BTreeSet::new(), Reuse::UnchangedSections)?;
        Ok(ImportReport {
            files,
            valid_records,
            summary: Some(summary),
            issues,
        })
    }

    /// Removes a document; `false` when there was none with that id (nothing is written then).
    pub fn remove(&mut self, id: &str) -> Result<bool, CorpusError> {
        let Some(generation) = store::current_generation(&self.dir)? else {
            return Ok(false);
        };
        if !store::load_catalog(&generation)?
            .iter()
            .any(|entry| entry.id == id)
        {
            return Ok(false);
        }
        let removals = BTreeSet::from([id.to_string()]);
        let summary = self.apply(BTreeMap::new(), &removals, Reuse::UnchangedSections)?;
        Ok(summary.removed > 0)
    }

    /// Rebuilds the index (and rewrites the store) from the stored documents: after an upgrade
    /// that changed the analysers, or when an index is suspected damaged. With the `embeddings`
    /// feature and an installed model it also computes every section vector afresh.
    pub fn reindex(&mut self) -> Result<WriteSummary, CorpusError> {
        self.apply(BTreeMap::new(), &BTreeSet::new(), Reuse::Nothing)
    }

    fn apply(
        &mut self,
        upserts: BTreeMap<String, Document>,
        removals: &BTreeSet<String>,
        reuse: Reuse,
    ) -> Result<WriteSummary, CorpusError> {
        let previous = store::current_generation(&self.dir)?;
        let mut next = GenerationWriter::create(&self.dir, previous.as_deref())?;
        #[cfg(feature = "embeddings")]
        if let Some(embedder) = self.embeddings.embedder() {
            let reusable = match reuse {
                Reuse::UnchangedSections => previous.as_deref(),
                Reuse::Nothing => None,
            };
            match crate::vectors::VectorWriter::create(next.dir(), embedder, reusable) {
                Ok(vectors) => next.attach_vectors(vectors),
                Err(error) => {
                    next.abandon();
                    return Err(error);
                }
            }
        }
        #[cfg(not(feature = "embeddings"))]
        let _ = reuse;
        if let Some(progress) = self.progress.as_mut() {
            progress.start(sections_after(previous.as_deref(), &upserts, removals)?);
        }
        match merge_into(
            &mut next,
            previous.as_deref(),
            upserts,
            removals,
            &mut self.progress,
        ) {
            Ok(mut summary) => {
                summary.sections = next.sections();
                if let Some(progress) = self.progress.as_mut() {
                    progress.finishing(summary.sections);
                }
                next.publish(previous.as_deref())?;
                Ok(summary)
            }
            Err(error) => {
                next.abandon();
                Err(error)
            }
        }
    }
}

/// Whether a write may keep the previous generation's vectors of sections whose text is unchanged.
#[derive(Debug, Clone, Copy)]
enum Reuse {
    UnchangedSections,
    Nothing,
}

/// How many sections the generation made from `previous` and the changes will hold.
fn sections_after(
    previous: Option<&Path>,
    upserts: &BTreeMap<String, Document>,
    removals: &BTreeSet<String>,
) -> Result<usize, CorpusError> {
    let kept: usize = match previous {
        Some(generation) => store::load_catalog(generation)?
            .iter()
            .filter(|entry| !removals.contains(&entry.id) && !upserts.contains_key(&entry.id))
            .map(|entry| entry.sections)
            .sum(),
        None => 0,
    };
    Ok(kept + upserts.values().map(|d| d.sections.len()).sum::<usize>())
}

/// Writes the previous generation's documents, replaced, removed or joined by the changes, in id
/// order.
fn merge_into(
    next: &mut GenerationWriter,
    previous: Option<&Path>,
    upserts: BTreeMap<String, Document>,
    removals: &BTreeSet<String>,
    progress: &mut Option<Box<dyn Progress>>,
) -> Result<WriteSummary, CorpusError> {
    let mut old: Box<dyn Iterator<Item = Result<Document, CorpusError>>> = match previous {
        Some(generation) => Box::new(store::documents_in(generation)?),
        None => Box::new(std::iter::empty()),
    };
    let mut new = upserts.into_values();
    let mut summary = WriteSummary::default();
    let keep_old = |document: Document,
                    next: &mut GenerationWriter,
                    summary: &mut WriteSummary|
     -> Result<(), CorpusError> {
        if removals.contains(&document.id) {
            summary.removed += 1;
            return Ok(());
        }
        summary.documents += 1;
        next.add(&document)
    };
    let mut old_head = old.next().transpose()?;
    let mut new_head = new.next();
    loop {
        if let Some(progress) = progress.as_mut() {
            progress.advance(next.sections());
        }
        match (old_head.take(), new_head.take()) {
            (None, None) => break,
            (Some(previous), None) => {
                keep_old(previous, next, &mut summary)?;
                old_head = old.next().transpose()?;
            }
            (None, Some(document)) => {
                summary.added += 1;
                summary.documents += 1;
                next.add(&document)?;
                new_head = new.next();
            }
            (Some(previous), Some(document)) => match previous.id.cmp(&document.id) {
                Ordering::Less => {
                    keep_old(previous, next, &mut summary)?;
                    old_head = old.next().transpose()?;
                    new_head = Some(document);
                }
                Ordering::Equal => {
                    summary.replaced += 1;
                    summary.documents += 1;
                    next.add(&document)?;
                    old_head = old.next().transpose()?;
                    new_head = new.next();
                }
                Ordering::Greater => {
                    summary.added += 1;
                    summary.documents += 1;
                    next.add(&document)?;
                    old_head = Some(previous);
                    new_head = new.next();
                }
            },
        }
    }
    Ok(summary)
}
