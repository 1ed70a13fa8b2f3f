//! Section vectors of a generation, stored beside its index, and their nearest-neighbour search.
//!
//! ```text
//! gen-000007/
//!   vectors.f32    one row of little-endian f32 per section, in index (ordinal) order
//!   vectors.json   the model fingerprint, the row length, and per row: document id, locus,
//!                  and a hash of the embedded text
//! ```
//!
//! Rows follow the sections in the order the index numbers them (documents by id, sections in
//! reading order), so row `n` is the section of ordinal `n`. A write reuses the previous
//! generation's vector of a section whose text and model are unchanged, so re-importing a few
//! documents does not embed the whole corpus again.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::embed::{SentenceEmbedder, fnv1a};
use crate::store::{CatalogEntry, corrupt, io_error};
use crate::{CorpusError, Document};

const VECTORS: &str = "vectors.f32";
const VECTOR_MAP: &str = "vectors.json";
const FORMAT_VERSION: u32 = 1;
/// Sections held back before embedding, so that the embedder can batch texts of similar
/// length together (the more are pending, the less padding); bounds the memory held.
const PENDING: usize = 4096;

/// Which section a row belongs to, and what text it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct VectorRow {
    doc: String,
    locus: String,
    hash: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct VectorMap {
    format: u32,
    model: String,
    dimensions: usize,
    rows: Vec<VectorRow>,
}

/// What is embedded for a section: its heading, when it has one, says what the text is about.
pub fn embedded_text(heading: Option<&str>, text: &str) -> String {
    match heading {
        Some(heading) if !heading.trim().is_empty() => format!("{}. {}", heading.trim(), text),
        _ => text.to_string(),
    }
}

fn read_map(generation: &Path) -> Result<VectorMap, CorpusError> {
    let path = generation.join(VECTOR_MAP);
    let bytes = fs::read(&path).map_err(io_error(&path))?;
    let map: VectorMap =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(&path, e.to_string()))?;
    if map.format != FORMAT_VERSION {
        return Err(corrupt(
            &path,
            format!("vector format {} is not {FORMAT_VERSION}", map.format),
        ));
    }
    Ok(map)
}

fn read_rows(generation: &Path, map: &VectorMap) -> Result<Vec<f32>, CorpusError> {
    let path = generation.join(VECTORS);
    let bytes = fs::read(&path).map_err(io_error(&path))?;
    let expected = map.rows.len() * map.dimensions * 4;
    if bytes.len() != expected || map.dimensions == 0 {
        return Err(corrupt(
            &path,
            format!("{} bytes where the map needs {expected}", bytes.len()),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// A section waiting for its vector: either reused from the previous generation or to compute.
struct Pending {
    row: VectorRow,
    text: String,
    vector: Option<Vec<f32>>,
}

/// Writes the vectors of a generation as its sections are added.
pub(crate) struct VectorWriter {
    embedder: Arc<SentenceEmbedder>,
    dir: PathBuf,
    file: BufWriter<File>,
    rows: Vec<VectorRow>,
    pending: Vec<Pending>,
    reusable: HashMap<(String, String), (u64, usize)>,
    previous_vectors: Vec<f32>,
    embedded: usize,
}

impl VectorWriter {
    /// Starts the vector files of the generation in `dir`; `previous`, when given, is a
    /// generation whose vectors may be reused (ignored if unreadable or from another model).
    pub fn create(
        dir: &Path,
        embedder: Arc<SentenceEmbedder>,
        previous: Option<&Path>,
    ) -> Result<VectorWriter, CorpusError> {
        let mut reusable = HashMap::new();
        let mut previous_vectors = Vec::new();
        if let Some(previous) = previous
            && previous.join(VECTOR_MAP).is_file()
        {
            match read_map(previous).and_then(|map| Ok((read_rows(previous, &map)?, map))) {
                Ok((vectors, map))
                    if map.model == embedder.fingerprint()
                        && map.dimensions == embedder.dimensions() =>
                {
                    reusable = map
                        .rows
                        .into_iter()
                        .enumerate()
                        .map(|(n, row)| ((row.doc, row.locus), (row.hash, n)))
                        .collect();
                    previous_vectors = vectors;
                }
                Ok(_) => tracing::info!("the embedding model changed: every section is embedded"),
                Err(error) => {
                    tracing::warn!(%error, "previous vectors unreadable: every section is embedded");
                }
            }
        }
        let path = dir.join(VECTORS);
        let file = File::create(&path).map_err(io_error(&path))?;
        Ok(VectorWriter {
            embedder,
            dir: dir.to_path_buf(),
            file: BufWriter::new(file),
            rows: Vec::new(),
            pending: Vec::new(),
            reusable,
            previous_vectors,
            embedded: 0,
        })
    }

    /// Queues the sections of a document, in the order the index numbers them.
    pub fn add(&mut self, document: &Document) -> Result<(), CorpusError> {
        let dimensions = self.embedder.dimensions();
        for section in &document.sections {
            let text = embedded_text(section.heading.as_deref(), &section.text);
            let hash = fnv1a(text.as_bytes());
            let key = (document.id.clone(), section.locus.clone());
            let vector = match self.reusable.get(&key) {
                Some(&(previous_hash, n)) if previous_hash == hash => self
                    .previous_vectors
                    .get(n * dimensions..(n + 1) * dimensions)
                    .map(<[f32]>::to_vec),
                _ => None,
            };
            let (doc, locus) = key;
            self.pending.push(Pending {
                row: VectorRow { doc, locus, hash },
                text,
                vector,
            });
        }
        if self.pending.len() >= PENDING {
            self.flush()?;
        }
        Ok(())
    }

    /// Embeds what is pending (the embedder batches texts of similar length) and writes the
    /// rows in order.
    fn flush(&mut self) -> Result<(), CorpusError> {
        let to_embed: Vec<usize> = (0..self.pending.len())
            .filter(|&n| self.pending[n].vector.is_none())
            .collect();
        let texts: Vec<&str> = to_embed
            .iter()
            .map(|&n| self.pending[n].text.as_str())
            .collect();
        let vectors = self.embedder.embed(&texts)?;
        for (&n, vector) in to_embed.iter().zip(vectors) {
            self.pending[n].vector = Some(vector);
        }
        self.embedded += to_embed.len();
        let path = self.dir.join(VECTORS);
        for pending in self.pending.drain(..) {
            let vector = pending.vector.unwrap_or_default();
            if vector.len() != self.embedder.dimensions() {
                return Err(CorpusError::Embedding(format!(
                    "a vector of {} values where the model makes {}",
                    vector.len(),
                    self.embedder.dimensions()
                )));
            }
            for value in vector {
                self.file
                    .write_all(&value.to_le_bytes())
                    .map_err(io_error(&path))?;
            }
            self.rows.push(pending.row);
        }
        Ok(())
    }

    /// Writes what is pending and the map, durably; returns how many sections were embedded
    /// (the others were reused).
    pub fn finish(mut self) -> Result<usize, CorpusError> {
        self.flush()?;
        let path = self.dir.join(VECTORS);
        let file = self
            .file
            .into_inner()
            .map_err(|e| io_error(&path)(e.into_error()))?;
        file.sync_all().map_err(io_error(&path))?;
        let map_path = self.dir.join(VECTOR_MAP);
        let map = VectorMap {
            format: FORMAT_VERSION,
            model: self.embedder.fingerprint().to_string(),
            dimensions: self.embedder.dimensions(),
            rows: self.rows,
        };
        let bytes = serde_json::to_vec(&map).map_err(|e| corrupt(&map_path, e.to_string()))?;
        let mut out = File::create(&map_path).map_err(io_error(&map_path))?;
        out.write_all(&bytes)
            .and_then(|()| out.sync_all())
            .map_err(io_error(&map_path))?;
        Ok(self.embedded)
    }
}

/// The vectors of a published generation, in memory for brute-force search (a 35,000-verse
/// Bible takes about 54 MB and a search a few milliseconds, fine below ~100,000 sections).
pub(crate) struct VectorIndex {
    dimensions: usize,
    values: Vec<f32>,
    rows: Vec<VectorRow>,
}

impl VectorIndex {
    /// Loads a generation's vectors, or `None` when it has none; checks that they were made by
    /// `model` and that the rows follow the catalog's sections one for one.
    pub fn open(
        generation: &Path,
        model: &str,
        catalog: &[CatalogEntry],
    ) -> Result<Option<VectorIndex>, CorpusError> {
        if !generation.join(VECTOR_MAP).is_file() {
            return Ok(None);
        }
        let map = read_map(generation)?;
        let path = generation.join(VECTOR_MAP);
        if map.model != model {
            return Err(corrupt(
                &path,
                format!(
                    "the vectors were made by `{}`, not the installed `{model}`; run `corpus reindex`",
                    map.model
                ),
            ));
        }
        let mut rows = map.rows.iter();
        for entry in catalog {
            for _ in 0..entry.sections {
                if rows.next().is_none_or(|row| row.doc != entry.id) {
                    return Err(corrupt(
                        &path,
                        format!("the rows do not follow the sections of `{}`", entry.id),
                    ));
                }
            }
        }
        if rows.next().is_some() {
            return Err(corrupt(&path, "more rows than sections"));
        }
        let values = read_rows(generation, &map)?;
        Ok(Some(VectorIndex {
            dimensions: map.dimensions,
            values,
            rows: map.rows,
        }))
    }

    /// Document id and locus of a row (= ordinal).
    pub fn section(&self, row: usize) -> Option<(&str, &str)> {
        self.rows
            .get(row)
            .map(|r| (r.doc.as_str(), r.locus.as_str()))
    }

    /// The `k` rows most similar to a unit `query` vector (cosine = dot product), best first,
    /// equal similarities in row order; `allowed` restricts the rows when filters apply.
    pub fn nearest(&self, query: &[f32], k: usize, allowed: Option<&[bool]>) -> Vec<(usize, f32)> {
        if query.len() != self.dimensions || k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f32)> = self
            .values
            .chunks_exact(self.dimensions)
            .enumerate()
            .filter(|(row, _)| allowed.is_none_or(|a| a.get(*row).copied().unwrap_or(false)))
            .map(|(row, vector)| (row, vector.iter().zip(query).map(|(a, b)| a * b).sum()))
            .collect();
        let by_similarity =
            |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, by_similarity);
            scored.truncate(k);
        }
        scored.sort_by(by_similarity);
        scored
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
}

/// Reciprocal-rank fusion: each list gives an item `1 / (k + rank)` (rank from 1), and the
/// sums order the union. It needs no score calibration between BM25 and cosine similarity.
/// Equal sums keep the smaller id first: ids are ordinals, so ties follow document id and
/// reading order, as BM25 ties do.
pub(crate) fn reciprocal_rank_fusion(lists: &[&[usize]], k: f32) -> Vec<(usize, f32)> {
    let mut sums: HashMap<usize, f32> = HashMap::new();
    for list in lists {
        for (position, &id) in list.iter().enumerate() {
            *sums.entry(id).or_default() += 1.0 / (k + position as f32 + 1.0);
        }
    }
    let mut fused: Vec<(usize, f32)> = sums.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement_and_breaks_ties_by_id() {
        let fused = reciprocal_rank_fusion(&[&[7, 3, 9], &[3, 5]], 60.0);
        let ids: Vec<usize> = fused.iter().map(|(id, _)| *id).collect();
        // 3 is in both lists; then the better single ranks: 7 (first), 5 (second), 9 (third).
        assert_eq!(ids, [3, 7, 5, 9]);
        let three = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((fused[0].1 - three).abs() < 1e-7);
        assert!((fused[1].1 - 1.0 / 61.0).abs() < 1e-7);

        // Same rank in two lists: equal sums, smaller id first, whatever the list order.
        let tie = reciprocal_rank_fusion(&[&[8], &[2]], 60.0);
        assert_eq!(tie.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [2, 8]);
        let tie = reciprocal_rank_fusion(&[&[2], &[8]], 60.0);
        assert_eq!(tie.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [2, 8]);
        assert!(reciprocal_rank_fusion(&[&[], &[]], 60.0).is_empty());
    }

    #[test]
    fn nearest_orders_by_cosine_and_respects_filters() {
        let index = VectorIndex {
            dimensions: 2,
            values: vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8, 0.8, 0.6, 1.0, 0.0],
            rows: (0..5)
                .map(|n| VectorRow {
                    doc: format!("d{n}"),
                    locus: "1".into(),
                    hash: 0,
                })
                .collect(),
        };
        let rows = |hits: Vec<(usize, f32)>| hits.into_iter().map(|(r, _)| r).collect::<Vec<_>>();
        assert_eq!(rows(index.nearest(&[1.0, 0.0], 3, None)), [0, 4, 3]);
        assert_eq!(rows(index.nearest(&[0.0, 1.0], 10, None)), [1, 2, 3, 0, 4]);
        let allowed = [false, true, false, true, true];
        assert_eq!(rows(index.nearest(&[1.0, 0.0], 2, Some(&allowed))), [4, 3]);
        assert!(index.nearest(&[1.0, 0.0, 0.0], 3, None).is_empty());
        assert_eq!(index.section(2), Some(("d2", "1")));
        assert_eq!(index.len(), 5);
    }

    #[test]
    fn headings_are_embedded_with_their_text() {
        assert_eq!(
            embedded_text(Some("Of grace "), "Grace is a gift."),
            "Of grace. Grace is a gift."
        );
        assert_eq!(embedded_text(Some("  "), "Text."), "Text.");
        assert_eq!(embedded_text(None, "Text."), "Text.");
    }
}
