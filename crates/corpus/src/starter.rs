//! The catechisms every install starts with: Baltimore Nos. 1–3 and the Roman Catechism of the
//! Council of Trent, so that a question a catechism asks is answered with the catechism's answer.
//!
//! The files under `data/catechisms/` are built by `scripts/build-catechisms` from a pinned
//! snapshot of public-domain texts; `data/catechisms/NOTICE.md` gives their provenance and the
//! licence notices of the machine-readable copies. They are compiled in, so installing them
//! needs no network and gives the same text everywhere.

use crate::{CorpusError, Document};

/// The catechism files, by document id, in the corpus's JSON Lines format.
const CATECHISMS: [(&str, &str); 4] = [
    (
        "cat:baltimore-1",
        include_str!("../data/catechisms/baltimore-1.jsonl"),
    ),
    (
        "cat:baltimore-2",
        include_str!("../data/catechisms/baltimore-2.jsonl"),
    ),
    (
        "cat:baltimore-3",
        include_str!("../data/catechisms/baltimore-3.jsonl"),
    ),
    ("cat:trent", include_str!("../data/catechisms/trent.jsonl")),
];

/// The starter catechisms as corpus documents, each checked against the document rules.
pub fn catechisms() -> Result<Vec<Document>, CorpusError> {
    CATECHISMS
        .iter()
        .map(|(id, line)| {
            let document: Document =
                serde_json::from_str(line).map_err(|e| CorpusError::InvalidDocument {
                    id: (*id).to_string(),
                    reason: format!("the compiled-in catechism is not a document: {e}"),
                })?;
            document.validate()?;
            Ok(document)
        })
        .collect()
}
