//! The tantivy index: one indexed unit per section, with per-language text fields.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexWriter, TantivyDocument};

use crate::analysis::{
    ANALYSED_LANGUAGES, GENERIC_KEY, PLAIN_TOKENIZER, analyser_key, index_analyser, plain_analyser,
    tokenizer_name,
};
use crate::{CorpusError, Document};

/// Memory budget of the index writer: large enough that a whole Bible is one or two segments.
const WRITER_MEMORY_BYTES: usize = 100_000_000;

/// The text fields of one analyser language.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LanguageFields {
    pub title: Field,
    pub heading: Field,
    pub text: Field,
}

/// Every field of the schema, resolved once.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    pub doc_id: Field,
    pub locus: Field,
    /// Position of the section in (document id, reading order): the tie-break for equal scores.
    pub ordinal: Field,
    pub doc_type: Field,
    pub language: Field,
    pub author: Field,
    pub year: Field,
    pub stored_heading: Field,
    pub stored_text: Field,
    pub by_language: HashMap<&'static str, LanguageFields>,
    pub generic: LanguageFields,
}

impl Fields {
    /// The text fields for a document language (unknown languages share the generic fields).
    pub fn for_language(&self, language: &str) -> LanguageFields {
        self.by_language
            .get(analyser_key(language))
            .copied()
            .unwrap_or(self.generic)
    }

    /// Every analyser key with its fields, the generic one included.
    pub fn all_languages(&self) -> impl Iterator<Item = (&'static str, LanguageFields)> + '_ {
        self.by_language
            .iter()
            .map(|(key, fields)| (*key, *fields))
            .chain(std::iter::once((GENERIC_KEY, self.generic)))
    }
}

fn text_options(tokenizer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    )
}

/// The schema, and the field handles that go with it.
pub(crate) fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let doc_id = builder.add_text_field("doc_id", STRING | STORED);
    let locus = builder.add_text_field("locus", STRING | STORED);
    let ordinal = builder.add_u64_field("ordinal", FAST);
    let doc_type = builder.add_text_field("type", STRING);
    let language = builder.add_text_field("language", STRING);
    let author = builder.add_text_field("author", text_options(PLAIN_TOKENIZER));
    let year = builder.add_i64_field("year", INDEXED | FAST);
    let stored_heading = builder.add_text_field("heading", STORED);
    let stored_text = builder.add_text_field("text", STORED);
    let mut language_fields = |key: &str| {
        let options = text_options(&tokenizer_name(key));
        LanguageFields {
            title: builder.add_text_field(&format!("title_{key}"), options.clone()),
            heading: builder.add_text_field(&format!("heading_{key}"), options.clone()),
            text: builder.add_text_field(&format!("text_{key}"), options),
        }
    };
    let by_language: HashMap<&'static str, LanguageFields> = ANALYSED_LANGUAGES
        .iter()
        .map(|key| (*key, language_fields(key)))
        .collect();
    let generic = language_fields(GENERIC_KEY);
    let fields = Fields {
        doc_id,
        locus,
        ordinal,
        doc_type,
        language,
        author,
        year,
        stored_heading,
        stored_text,
        by_language,
        generic,
    };
    (builder.build(), fields)
}

fn register_analysers(index: &Index) {
    let manager = index.tokenizers();
    for key in ANALYSED_LANGUAGES.into_iter().chain([GENERIC_KEY]) {
        manager.register(&tokenizer_name(key), index_analyser(key));
    }
    manager.register(PLAIN_TOKENIZER, plain_analyser());
}

/// Opens an existing index and checks that its schema is the one this version writes.
pub(crate) fn open(dir: &Path) -> Result<(Index, Fields), CorpusError> {
    let corrupt = |reason: String| CorpusError::Corrupt {
        path: dir.to_path_buf(),
        reason,
    };
    let directory = MmapDirectory::open(dir).map_err(|e| corrupt(e.to_string()))?;
    let index = Index::open(ReadOnlyDirectory(directory)).map_err(|e| corrupt(e.to_string()))?;
    let (expected, fields) = schema();
    if index.schema() != expected {
        return Err(corrupt(
            "the index was written by another version; run `corpus reindex`".into(),
        ));
    }
    register_analysers(&index);
    Ok((index, fields))
}

/// A published generation never changes, so a reader needs neither tantivy's locks nor write
/// access: the corpus can be served from a read-only volume.
#[derive(Debug, Clone)]
struct ReadOnlyDirectory(MmapDirectory);

fn read_only_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a published corpus generation is read-only",
    )
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only_error()),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::wrap_io_error(
            read_only_error(),
            path.to_path_buf(),
        ))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only_error())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(callback)
    }
}

/// Writes a fresh index in an empty directory, one section at a time, with a single commit.
pub(crate) struct IndexBuilder {
    writer: IndexWriter,
    fields: Fields,
    next_ordinal: u64,
}

impl IndexBuilder {
    /// Starts an index in `dir`, which must exist and be empty.
    pub fn create(dir: &Path) -> Result<Self, CorpusError> {
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        register_analysers(&index);
        let writer = index.writer(WRITER_MEMORY_BYTES)?;
        Ok(IndexBuilder {
            writer,
            fields,
            next_ordinal: 0,
        })
    }

    /// Adds every section of a document; documents must come in id order for stable tie-breaks.
    pub fn add(&mut self, document: &Document) -> Result<(), CorpusError> {
        let f = &self.fields;
        let text_fields = f.for_language(&document.language);
        let doc_type = normalise_keyword(&document.doc_type);
        let year = document.year();
        for (position, section) in document.sections.iter().enumerate() {
            let mut unit = TantivyDocument::new();
            unit.add_text(f.doc_id, &document.id);
            unit.add_text(f.locus, &section.locus);
            unit.add_u64(f.ordinal, self.next_ordinal);
            unit.add_text(f.doc_type, &doc_type);
            unit.add_text(f.language, &document.language);
            if let Some(author) = &document.author {
                unit.add_text(f.author, author);
            }
            if let Some(year) = year {
                unit.add_i64(f.year, i64::from(year));
            }
            if position == 0 {
                // Only the opening section carries the title: a search by title finds the
                // document once, instead of every section matching through it.
                unit.add_text(text_fields.title, &document.title);
            }
            if let Some(heading) = &section.heading {
                unit.add_text(text_fields.heading, heading);
                unit.add_text(f.stored_heading, heading);
            }
            unit.add_text(text_fields.text, &section.text);
            unit.add_text(f.stored_text, &section.text);
            self.writer.add_document(unit)?;
            self.next_ordinal += 1;
        }
        Ok(())
    }

    /// Commits and waits for merges, so that the directory is complete when this returns.
    pub fn finish(mut self) -> Result<(), CorpusError> {
        self.writer.commit()?;
        self.writer.wait_merging_threads()?;
        Ok(())
    }
}

/// Types and other keywords are compared in lower case with single spaces.
pub(crate) fn normalise_keyword(value: &str) -> String {
    value
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
