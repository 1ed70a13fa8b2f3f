//! Sentence embeddings with all-MiniLM-L6-v2 on the CPU, computed the way sentence-transformers
//! computes them for this model: BERT, mean pooling over the real tokens, L2 normalisation.

use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::CorpusError;
use crate::embedding_model::{CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};

/// The longest input the model sees, in tokens, as sentence-transformers configures it for
/// this model (`max_seq_length`); longer sections are embedded by their opening.
const MAX_TOKENS: usize = 256;

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
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
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

    /// One unit vector per text, in order. Texts are processed together, so callers batch
    /// texts of similar length to waste little work on padding.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, CorpusError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let failed = |e: &dyn std::fmt::Display| CorpusError::Embedding(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(texts.len() * width);
        let mut mask = Vec::with_capacity(texts.len() * width);
        for encoding in &encodings {
            if encoding.len() != width {
                return Err(CorpusError::Embedding(
                    "the tokenizer did not pad the batch".into(),
                ));
            }
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let shape = (texts.len(), width);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
            let token_types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &token_types, Some(&mask))?;
            mean_pool_normalise(&hidden, &mask)?.to_vec2::<f32>()
        };
        run().map_err(|e| failed(&e))
    }
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
    fn the_hash_is_stable_and_sensitive() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(b"grace"), fnv1a(b"Grace"));
    }
}
