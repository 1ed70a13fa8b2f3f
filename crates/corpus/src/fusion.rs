//! Hybrid search: reciprocal-rank fusion of the BM25 ranking and the sections nearest by
//! meaning (see the crate docs).

use std::collections::HashMap;

use crate::reader::Loaded;
use crate::search::{self, SearchRequest, SearchResults};
use crate::{CorpusError, SentenceEmbedder, vectors};

/// What hybrid search needs beside the index: the model for queries and the section vectors.
#[cfg(feature = "embeddings")]
pub(crate) struct Semantic {
    pub(crate) embedder: SentenceEmbedder,
    pub(crate) vectors: vectors::VectorIndex,
}

/// How many hits of each signal enter the fusion (at least; deeper pages ask for more).
#[cfg(feature = "embeddings")]
const FUSION_DEPTH: usize = 50;
/// The reciprocal-rank constant: 60, as in the paper that introduced the method.
#[cfg(feature = "embeddings")]
const RRF_K: f32 = 60.0;

/// Reciprocal-rank fusion of the BM25 list and the nearest sections by meaning (see the crate
/// docs). `total` counts the BM25 matches plus the sections found only by meaning.
pub(crate) fn hybrid_search(
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
