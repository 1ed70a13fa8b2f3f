//! Sentence embeddings with all-MiniLM-L6-v2 on the CPU, computed the way sentence-transformers
//! computes them for this model: BERT, mean pooling over the real tokens, L2 normalisation.

use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::CorpusError;
use crate::embedding_model::{CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};

/// The longest input the model sees, in tokens, as sentence-transformers configures it for
/// this model (`max_seq_length`); longer sections are embedded by their opening.
const MAX_TOKENS: usize = 256;
/// Most tokens in one forward pass (texts × padded width): large enough for the matrix products
/// to run at full speed, small enough that a batch's activations stay in the CPU caches' reach.
const BATCH_TOKENS: usize = 4096;
/// Most texts in one forward pass, however short they are.
const BATCH_TEXTS: usize = 128;
/// The padding token of the model's WordPiece vocabulary (`[PAD]`).
const PAD_ID: u32 = 0;

/// Turns texts into unit vectors whose dot product measures closeness of meaning; the second
/// search signal beside BM25, loaded from an installed model folder and never from a network.
pub struct SentenceEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dimensions: usize,
    fingerprint: String,
}

fn model_error(path: &Path, reason: impl ToString) -> CorpusError {
    CorpusError::Model {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn read(path: PathBuf) -> Result<Vec<u8>, CorpusError> {
    fs::read(&path).map_err(|source| CorpusError::Io { path, source })
}

impl SentenceEmbedder {
    /// Loads the model from a folder holding `model.safetensors`, `tokenizer.json` and
    /// `config.json` (see [`crate::model_dir`]).
    pub fn load(model_dir: &Path) -> Result<SentenceEmbedder, CorpusError> {
        let config_bytes = read(model_dir.join(CONFIG_FILE))?;
        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_error(&model_dir.join(CONFIG_FILE), e))?;
        let tokenizer_bytes = read(model_dir.join(TOKENIZER_FILE))?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| model_error(&model_dir.join(TOKENIZER_FILE), e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| model_error(&model_dir.join(TOKENIZER_FILE), e))?;
        // The file pads every text to 128 tokens; batches are padded here, to their longest.
        tokenizer.with_padding(None);
        let weights_path = model_dir.join(WEIGHTS_FILE);
        let weights = read(weights_path.clone())?;
        let weights_len = weights.len();
        let variables = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| model_error(&weights_path, e))?;
        let model =
            BertModel::load(variables, &config).map_err(|e| model_error(&weights_path, e))?;
        let fingerprint = format!(
            "{}:{}:{:016x}:{:016x}",
            crate::embedding_model::MODEL_NAME,
            weights_len,
            fnv1a(&config_bytes),
            fnv1a(&tokenizer_bytes)
        );
        Ok(SentenceEmbedder {
            model,
            tokenizer,
            dimensions: config.hidden_size,
            fingerprint,
        })
    }

    /// Length of every vector (384 for this model).
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Identifies the model files, so that vectors made by another model are never mixed in.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// One unit vector per text, in order. The texts are cut into batches of similar token
    /// length (shortest first), so that little work goes into padding, each batch holding at
    /// most [`BATCH_TOKENS`] tokens once padded and [`BATCH_TEXTS`] texts. A text's vector does
    /// not depend on the texts batched with it (beyond float rounding).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, CorpusError> {
        let encodings = self.tokenize(texts)?;
        let lengths: Vec<usize> = encodings.iter().map(Encoding::len).collect();
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in SentenceEmbedder::batches(&lengths) {
            let batch_encodings: Vec<&Encoding> = batch.iter().map(|&n| &encodings[n]).collect();
            for (&n, vector) in batch.iter().zip(self.forward(&batch_encodings)?) {
                vectors[n] = vector;
            }
        }
        Ok(vectors)
    }

    /// The batches [`SentenceEmbedder::embed`] makes of texts of these token lengths, as
    /// indices into `lengths`, in the order they run: to count the work a batching costs.
    pub fn batches(lengths: &[usize]) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..lengths.len()).collect();
        order.sort_by_key(|&n| lengths[n]);
        length_batches(&order, |n| lengths[n])
            .into_iter()
            .map(<[usize]>::to_vec)
            .collect()
    }

    /// How many tokens the model reads for each text (after truncation, before padding).
    pub fn token_lengths(&self, texts: &[&str]) -> Result<Vec<usize>, CorpusError> {
        Ok(self.tokenize(texts)?.iter().map(Encoding::len).collect())
    }

    /// One unit vector per text, in order, computed in one forward pass over all of them padded
    /// to the longest: how batches were made before [`SentenceEmbedder::embed`] grouped texts
    /// by length. Kept to compare batch compositions and strategies.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, CorpusError> {
        let encodings = self.tokenize(texts)?;
        let batch: Vec<&Encoding> = encodings.iter().collect();
        self.forward(&batch)
    }

    /// The token ids of each text, truncated to [`MAX_TOKENS`] and not padded.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Encoding>, CorpusError> {
        self.tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| CorpusError::Embedding(e.to_string()))
    }

    /// Runs the model over one batch, padded on the right to its longest text with the pad
    /// token (id 0, attention 0), as the tokenizer pads for sentence-transformers.
    fn forward(&self, batch: &[&Encoding]) -> Result<Vec<Vec<f32>>, CorpusError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let width = batch.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(batch.len() * width);
        let mut mask = Vec::with_capacity(batch.len() * width);
        for encoding in batch {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
            let padding = width - encoding.len();
            ids.extend(std::iter::repeat_n(PAD_ID, padding));
            mask.extend(std::iter::repeat_n(0, padding));
        }
        let shape = (batch.len(), width);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
            let token_types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &token_types, Some(&mask))?;
            mean_pool_normalise(&hidden, &mask)?.to_vec2::<f32>()
        };
        run().map_err(|e| CorpusError::Embedding(e.to_string()))
    }
}

/// Cuts items already sorted by length into batches that hold at most [`BATCH_TEXTS`] items
/// and at most [`BATCH_TOKENS`] tokens once padded to their longest (a single item longer than
/// that is a batch of its own).
fn length_batches(sorted: &[usize], length: impl Fn(usize) -> usize) -> Vec<&[usize]> {
    let mut batches = Vec::new();
    let mut start = 0;
    for end in 1..=sorted.len() {
        let count = end - start;
        let widest = length(sorted[end - 1]).max(1);
        let fits = count <= BATCH_TEXTS && count * widest <= BATCH_TOKENS;
        if !fits && count > 1 {
            batches.push(&sorted[start..end - 1]);
            start = end - 1;
        }
    }
    if start < sorted.len() {
        batches.push(&sorted[start..]);
    }
    batches
}

/// The mean of the token vectors that are not padding, scaled to unit length: what the
/// sentence-transformers `Pooling(mean)` and `Normalize` modules do after this model.
/// `hidden` is (batch, tokens, dimensions) and `mask` (batch, tokens) holds 1 for real tokens.
pub(crate) fn mean_pool_normalise(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean
        .sqr()?
        .sum_keepdim(1)?
        .sqrt()?
        .clamp(1e-12f32, f32::MAX)?;
    mean.broadcast_div(&norms)
}

/// FNV-1a: a stable 64-bit hash with no dependency, to recognise unchanged inputs.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_averages_only_real_tokens_and_normalises() {
        // Two texts of three token slots; the second has one padding slot whose vector is huge
        // and must not count.
        let hidden = Tensor::new(
            &[
                [[1f32, 0., 0.], [3., 0., 0.], [2., 0., 0.]],
                [[0., 3., 4.], [0., 3., 4.], [100., 100., 100.]],
            ],
            &Device::Cpu,
        )
        .unwrap();
        let mask = Tensor::new(&[[1u32, 1, 1], [1, 1, 0]], &Device::Cpu).unwrap();
        let pooled = mean_pool_normalise(&hidden, &mask)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
        assert!(close(&pooled[0], &[1., 0., 0.]), "{:?}", pooled[0]);
        assert!(close(&pooled[1], &[0., 0.6, 0.8]), "{:?}", pooled[1]);
    }

    #[test]
    fn pooling_a_zero_vector_gives_zeros_not_nan() {
        let hidden = Tensor::zeros((1, 2, 4), DType::F32, &Device::Cpu).unwrap();
        let mask = Tensor::new(&[[1u32, 0]], &Device::Cpu).unwrap();
        let pooled = mean_pool_normalise(&hidden, &mask)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(pooled, vec![vec![0.0; 4]]);
    }

    #[test]
    fn batches_group_similar_lengths_under_the_token_budget() {
        // 300 short texts (10 tokens), 40 long ones (256), in mixed order.
        let lengths: Vec<usize> = (0..340)
            .map(|n| if n % 17 < 2 { 256 } else { 10 })
            .collect();
        let batches = SentenceEmbedder::batches(&lengths);
        let widths: Vec<(usize, usize)> = batches
            .iter()
            .map(|b| (b.len(), b.iter().map(|&n| lengths[n]).max().unwrap()))
            .collect();
        for &(count, width) in &widths {
            assert!(
                count <= BATCH_TEXTS && count * width <= BATCH_TOKENS,
                "{widths:?}"
            );
        }
        // Short texts first, never padded to a long one's width; 256 × 16 = 4,096 tokens.
        assert_eq!(widths[..3], [(128, 10), (128, 10), (44, 10)]);
        assert_eq!(widths[3..], [(16, 256), (16, 256), (8, 256)]);
        let mut all: Vec<usize> = batches.concat();
        all.sort_unstable();
        assert_eq!(all, (0..lengths.len()).collect::<Vec<_>>());
        // A text longer than the budget still gets a batch of its own; nothing gives nothing.
        let sorted = [0, 1];
        assert_eq!(
            length_batches(&sorted, |_| BATCH_TOKENS + 1),
            [&[0][..], &[1][..]]
        );
        assert!(SentenceEmbedder::batches(&[]).is_empty());
    }

    #[test]
    fn the_hash_is_stable_and_sensitive() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(b"grace"), fnv1a(b"Grace"));
    }
}
