//! The on-disk layout of a corpus: immutable generations and an atomically swapped pointer.
//!
//! ```text
//! <data_dir>/corpus/
//!   CURRENT              name of the live generation, replaced by rename
//!   .write.lock          held by the one process that may write
//!   gen-000007/
//!     documents.jsonl    every document, one JSON object a line, sorted by id
//!     catalog.json       metadata and byte range of each line, for lookups without a scan
//!     index/             the tantivy index of the sections
//!     vectors.f32, vectors.json
//!                        section embeddings, with the `embeddings` feature and an installed
//!                        model (see `vectors.rs`)
//! ```
//!
//! A change never edits a generation: it writes the whole next one beside it and then replaces
//! `CURRENT`. A crash or an error before the rename leaves the previous generation untouched.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::index::IndexBuilder;
use crate::{CorpusError, Document};

/// Bumped whenever the layout or the index schema changes.
pub(crate) const FORMAT_VERSION: u32 = 1;
const CURRENT: &str = "CURRENT";
const DOCUMENTS: &str = "documents.jsonl";
const CATALOG: &str = "catalog.json";
pub(crate) const INDEX_DIR: &str = "index";
const GENERATION_PREFIX: &str = "gen-";
pub(crate) const LOCK_FILE: &str = ".write.lock";

/// What is known of a document without reading its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CatalogEntry {
    pub id: String,
    pub title: String,
    pub author: Option<String>,
    pub date: Option<String>,
    #[serde(rename = "type")]
    pub doc_type: String,
    pub language: String,
    pub reference: Option<String>,
    pub source_url: Option<String>,
    pub sections: usize,
    pub offset: u64,
    pub len: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Catalog {
    format: u32,
    documents: Vec<CatalogEntry>,
}

/// Maps an I/O error to the corpus error naming the file.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A file of the corpus that cannot be read back.
pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> CorpusError {
    CorpusError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The live generation's directory, or `None` when nothing was ever imported.
pub(crate) fn current_generation(corpus_dir: &Path) -> Result<Option<PathBuf>, CorpusError> {
    let pointer = corpus_dir.join(CURRENT);
    let name = match fs::read_to_string(&pointer) {
        Ok(name) => name,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&pointer)(e)),
    };
    let name = name.trim();
    if generation_number(name).is_none() {
        return Err(corrupt(
            &pointer,
            format!("`{name}` is not a generation name"),
        ));
    }
    let dir = corpus_dir.join(name);
    if !dir.is_dir() {
        return Err(corrupt(&pointer, format!("generation `{name}` is missing")));
    }
    Ok(Some(dir))
}

fn generation_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(GENERATION_PREFIX)?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Reads a generation's catalog and checks its format version.
pub(crate) fn load_catalog(generation: &Path) -> Result<Vec<CatalogEntry>, CorpusError> {
    let path = generation.join(CATALOG);
    let bytes = fs::read(&path).map_err(io_error(&path))?;
    let catalog: Catalog =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(&path, e.to_string()))?;
    if catalog.format != FORMAT_VERSION {
        return Err(corrupt(
            &path,
            format!(
                "format {} is not the supported format {FORMAT_VERSION}; run `corpus reindex`",
                catalog.format
            ),
        ));
    }
    Ok(catalog.documents)
}

/// Random access to the documents of one generation (the file stays open, so a later swap that
/// removes the generation does not disturb a reader already using it).
pub(crate) struct DocumentFile {
    path: PathBuf,
    file: Mutex<File>,
}

impl DocumentFile {
    pub fn open(generation: &Path) -> Result<Self, CorpusError> {
        let path = generation.join(DOCUMENTS);
        let file = File::open(&path).map_err(io_error(&path))?;
        Ok(DocumentFile {
            path,
            file: Mutex::new(file),
        })
    }

    pub fn read(&self, entry: &CatalogEntry) -> Result<Document, CorpusError> {
        let len =
            usize::try_from(entry.len).map_err(|_| corrupt(&self.path, "record too large"))?;
        let mut bytes = vec![0; len];
        {
            let mut file = self
                .file
                .lock()
                .map_err(|_| corrupt(&self.path, "a reader panicked"))?;
            file.seek(SeekFrom::Start(entry.offset))
                .map_err(io_error(&self.path))?;
            file.read_exact(&mut bytes).map_err(io_error(&self.path))?;
        }
        let document: Document = serde_json::from_slice(&bytes)
            .map_err(|e| corrupt(&self.path, format!("record `{}`: {e}", entry.id)))?;
        if document.id != entry.id {
            return Err(corrupt(
                &self.path,
                format!("the catalog points `{}` at `{}`", entry.id, document.id),
            ));
        }
        Ok(document)
    }
}

/// Every document of a generation, in id order, read one line at a time.
pub(crate) fn documents_in(
    generation: &Path,
) -> Result<impl Iterator<Item = Result<Document, CorpusError>>, CorpusError> {
    let path = generation.join(DOCUMENTS);
    let file = File::open(&path).map_err(io_error(&path))?;
    let mut previous_id: Option<String> = None;
    Ok(BufReader::new(file)
        .lines()
        .enumerate()
        .map(move |(number, line)| {
            let line = line.map_err(io_error(&path))?;
            let document: Document = serde_json::from_str(&line)
                .map_err(|e| corrupt(&path, format!("line {}: {e}", number + 1)))?;
            if previous_id.as_ref().is_some_and(|p| *p >= document.id) {
                return Err(corrupt(
                    &path,
                    format!("line {}: documents are not in id order", number + 1),
                ));
            }
            previous_id = Some(document.id.clone());
            Ok(document)
        }))
}

/// The next generation being written; it becomes live only in [`GenerationWriter::publish`].
pub(crate) struct GenerationWriter {
    corpus_dir: PathBuf,
    name: String,
    dir: PathBuf,
    documents_path: PathBuf,
    documents: BufWriter<File>,
    offset: u64,
    catalog: Vec<CatalogEntry>,
    index: IndexBuilder,
    sections: usize,
    #[cfg(feature = "embeddings")]
    vectors: Option<crate::vectors::VectorWriter>,
}

impl GenerationWriter {
    /// Starts the generation after `previous` (or the first one).
    pub fn create(corpus_dir: &Path, previous: Option<&Path>) -> Result<Self, CorpusError> {
        let number = previous
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .and_then(generation_number)
            .map_or(1, |n| n + 1);
        let name = format!("{GENERATION_PREFIX}{number:06}");
        let dir = corpus_dir.join(&name);
        if dir.exists() {
            // Left over by an interrupted write: it was never published, so it holds nothing.
            fs::remove_dir_all(&dir).map_err(io_error(&dir))?;
        }
        let index_dir = dir.join(INDEX_DIR);
        fs::create_dir_all(&index_dir).map_err(io_error(&index_dir))?;
        let documents_path = dir.join(DOCUMENTS);
        let file = File::create(&documents_path).map_err(io_error(&documents_path))?;
        let index = IndexBuilder::create(&index_dir)?;
        Ok(GenerationWriter {
            corpus_dir: corpus_dir.to_path_buf(),
            name,
            dir,
            documents_path,
            documents: BufWriter::new(file),
            offset: 0,
            catalog: Vec::new(),
            index,
            sections: 0,
            #[cfg(feature = "embeddings")]
            vectors: None,
        })
    }

    /// The generation's directory, where the optional files (vectors) go.
    #[cfg(feature = "embeddings")]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Computes (or reuses) a vector for every section added from now on.
    #[cfg(feature = "embeddings")]
    pub fn attach_vectors(&mut self, vectors: crate::vectors::VectorWriter) {
        self.vectors = Some(vectors);
    }

    /// Appends a document; callers add documents in strictly increasing id order.
    pub fn add(&mut self, document: &Document) -> Result<(), CorpusError> {
        let line = serde_json::to_vec(document).map_err(|e| CorpusError::InvalidDocument {
            id: document.id.clone(),
            reason: e.to_string(),
        })?;
        self.documents
            .write_all(&line)
            .and_then(|()| self.documents.write_all(b"\n"))
            .map_err(io_error(&self.documents_path))?;
        self.catalog.push(CatalogEntry {
            id: document.id.clone(),
            title: document.title.clone(),
            author: document.author.clone(),
            date: document.date.clone(),
            doc_type: document.doc_type.clone(),
            language: document.language.clone(),
            reference: document.reference.clone(),
            source_url: document.source_url.clone(),
            sections: document.sections.len(),
            offset: self.offset,
            len: line.len() as u64,
        });
        self.offset += line.len() as u64 + 1;
        self.sections += document.sections.len();
        #[cfg(feature = "embeddings")]
        if let Some(vectors) = &mut self.vectors {
            vectors.add(document)?;
        }
        self.index.add(document)
    }

    /// Makes everything durable, then points `CURRENT` at this generation and removes the
    /// generations older than the one it replaces (that one may still be open elsewhere).
    pub fn publish(self, previous: Option<&Path>) -> Result<(), CorpusError> {
        let GenerationWriter {
            corpus_dir,
            name,
            dir,
            documents_path,
            documents,
            catalog,
            index,
            #[cfg(feature = "embeddings")]
            vectors,
            ..
        } = self;
        index.finish()?;
        #[cfg(feature = "embeddings")]
        if let Some(vectors) = vectors {
            let embedded = vectors.finish()?;
            tracing::info!(embedded, "section vectors written");
        }
        let file = documents
            .into_inner()
            .map_err(|e| io_error(&documents_path)(e.into_error()))?;
        file.sync_all().map_err(io_error(&documents_path))?;
        let catalog_path = dir.join(CATALOG);
        let catalog_bytes = serde_json::to_vec(&Catalog {
            format: FORMAT_VERSION,
            documents: catalog,
        })
        .map_err(|e| corrupt(&catalog_path, e.to_string()))?;
        write_durably(&catalog_path, &catalog_bytes)?;
        sync_dir(&dir)?;

        let pointer_tmp = corpus_dir.join(format!("{CURRENT}.tmp"));
        write_durably(&pointer_tmp, name.as_bytes())?;
        let pointer = corpus_dir.join(CURRENT);
        fs::rename(&pointer_tmp, &pointer).map_err(io_error(&pointer))?;
        sync_dir(&corpus_dir)?;

        let keep: Vec<&str> = [
            Some(name.as_str()),
            previous.and_then(|p| p.file_name()?.to_str()),
        ]
        .into_iter()
        .flatten()
        .collect();
        remove_stale_generations(&corpus_dir, &keep);
        Ok(())
    }

    /// Sections written so far.
    pub fn sections(&self) -> usize {
        self.sections
    }

    /// Removes the unpublished generation after a failure.
    pub fn abandon(self) {
        // Best effort: an unpublished generation is never read, and the next write clears it.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn write_durably(path: &Path, bytes: &[u8]) -> Result<(), CorpusError> {
    let mut file = File::create(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))
}

fn sync_dir(dir: &Path) -> Result<(), CorpusError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn remove_stale_generations(corpus_dir: &Path, keep: &[&str]) {
    let Ok(entries) = fs::read_dir(corpus_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if generation_number(name).is_some() && !keep.contains(&name) {
            // Best effort: a generation left behind only costs disk space until the next write.
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names_round_trip() {
        assert_eq!(generation_number("gen-000007"), Some(7));
        assert_eq!(generation_number("gen-"), None);
        assert_eq!(generation_number("gen-12a"), None);
        assert_eq!(generation_number("index"), None);
    }

    #[test]
    fn a_missing_pointer_means_no_corpus_and_a_dangling_one_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(current_generation(dir.path()).unwrap(), None);
        fs::write(dir.path().join(CURRENT), "gen-000003").unwrap();
        let err = current_generation(dir.path()).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        fs::write(dir.path().join(CURRENT), "../etc").unwrap();
        assert!(current_generation(dir.path()).is_err());
    }
}
