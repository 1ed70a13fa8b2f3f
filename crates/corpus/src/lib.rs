//! The document corpus: documents, importers, and the search index.
