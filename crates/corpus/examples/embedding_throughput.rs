//! How fast `corpus reindex` computes section vectors, on a fixed sample of a data directory's
//! corpus, comparing the batching the writer used before (windows of 512 sections sorted by
//! characters, 32 texts a batch, padded to the longest) with [`SentenceEmbedder::embed`]
//! (windows of 4,096, batches of similar token length under a token budget).
//!
//! ```text
//! cargo run --release -p corpus --features embeddings --example embedding_throughput -- \
//!     DATA_DIR [SAMPLE_SECTIONS] [ROUNDS]
//! ```
//!
//! Rounds alternate the two strategies; each line gives sections a second (wall clock and per
//! CPU-second of this process) with the 1-minute load average at its start, then the medians.
//! It also counts the tokens each strategy feeds the model (real and padding: independent of
//! the machine's load) and checks that both give the same vectors (cosine ≥ 0.999).

use std::path::PathBuf;
use std::time::Instant;

use corpus::{Corpus, SentenceEmbedder, embedded_text, model_dir};

const OLD_WINDOW: usize = 512;
const OLD_BATCH: usize = 32;
const NEW_WINDOW: usize = 4096;

type Vectors = Vec<Vec<f32>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let data_dir = PathBuf::from(args.next().ok_or("usage: DATA_DIR [SAMPLE] [ROUNDS]")?);
    let sample: usize = args.next().map_or(Ok(2000), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(3), |a| a.parse())?;

    let corpus = Corpus::open(&data_dir)?;
    let mut all = Vec::new();
    for id in corpus.document_ids(usize::MAX) {
        if let Some(document) = corpus.document(&id)? {
            for section in &document.sections {
                all.push(embedded_text(section.heading.as_deref(), &section.text));
            }
        }
    }
    let step = (all.len() / sample.max(1)).max(1);
    let texts: Vec<&str> = all
        .iter()
        .step_by(step)
        .take(sample)
        .map(String::as_str)
        .collect();
    println!(
        "sample: {} of {} sections (every {step}th), {} characters on average",
        texts.len(),
        all.len(),
        texts.iter().map(|t| t.len()).sum::<usize>() / texts.len().max(1)
    );

    let embedder = SentenceEmbedder::load(&model_dir(&data_dir))?;
    let tokens = token_counts(&embedder, &texts)?;
    let (old_real, old_padded) = old_token_work(&texts, &tokens);
    let (new_real, new_padded) = new_token_work(&tokens);
    println!(
        "tokens fed to the model: before {old_padded} ({:.1} % padding), after {new_padded} ({:.1} % padding)",
        100.0 * (old_padded - old_real) as f64 / old_padded as f64,
        100.0 * (new_padded - new_real) as f64 / new_padded as f64
    );

    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut reference: Option<Vectors> = None;
    let mut worst_cosine = 1.0f32;
    for round in 1..=rounds {
        for (name, figures) in [("before", &mut before), ("after", &mut after)] {
            let load = load_average();
            let (wall, cpu) = (Instant::now(), cpu_seconds());
            let vectors = if name == "before" {
                embed_before(&embedder, &texts)?
            } else {
                embed_after(&embedder, &texts)?
            };
            let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu_seconds() - cpu);
            let rate = texts.len() as f64 / wall;
            let per_cpu = texts.len() as f64 / cpu;
            println!(
                "round {round} {name:6}: {rate:6.1} sections/s, {per_cpu:6.1} per CPU-second (load {load})"
            );
            figures.push((rate, per_cpu));
            match &reference {
                None => reference = Some(vectors),
                Some(first) => {
                    for (a, b) in first.iter().zip(&vectors) {
                        worst_cosine = worst_cosine.min(a.iter().zip(b).map(|(x, y)| x * y).sum());
                    }
                }
            }
        }
    }
    let (before_rate, before_cpu) = medians(&before);
    let (after_rate, after_cpu) = medians(&after);
    println!(
        "median before: {before_rate:.1} sections/s, {before_cpu:.1} per CPU-second; after: {after_rate:.1} sections/s, {after_cpu:.1} per CPU-second ({:.2}× by wall clock, {:.2}× by CPU)",
        after_rate / before_rate,
        after_cpu / before_cpu
    );
    println!("lowest cosine between runs: {worst_cosine:.6}");
    Ok(())
}

/// The writer's former batching: windows of 512 sorted by characters, batches of 32.
fn embed_before(
    embedder: &SentenceEmbedder,
    texts: &[&str],
) -> Result<Vectors, corpus::CorpusError> {
    let mut vectors = vec![Vec::new(); texts.len()];
    for (window_number, window) in texts.chunks(OLD_WINDOW).enumerate() {
        let mut order: Vec<usize> = (0..window.len()).collect();
        order.sort_by_key(|&n| window[n].len());
        for batch in order.chunks(OLD_BATCH) {
            let batch_texts: Vec<&str> = batch.iter().map(|&n| window[n]).collect();
            for (&n, vector) in batch.iter().zip(embedder.embed_batch(&batch_texts)?) {
                vectors[window_number * OLD_WINDOW + n] = vector;
            }
        }
    }
    Ok(vectors)
}

/// The writer's batching now: windows of 4,096 handed to [`SentenceEmbedder::embed`].
fn embed_after(
    embedder: &SentenceEmbedder,
    texts: &[&str],
) -> Result<Vectors, corpus::CorpusError> {
    let mut vectors = Vec::with_capacity(texts.len());
    for window in texts.chunks(NEW_WINDOW) {
        vectors.extend(embedder.embed(window)?);
    }
    Ok(vectors)
}

fn token_counts(
    embedder: &SentenceEmbedder,
    texts: &[&str],
) -> Result<Vec<usize>, corpus::CorpusError> {
    embedder.token_lengths(texts)
}

/// (real tokens, tokens once padded) of the former batching.
fn old_token_work(texts: &[&str], tokens: &[usize]) -> (usize, usize) {
    let (mut real, mut padded) = (0, 0);
    for (window_number, window) in texts.chunks(OLD_WINDOW).enumerate() {
        let mut order: Vec<usize> = (0..window.len()).collect();
        order.sort_by_key(|&n| window[n].len());
        for batch in order.chunks(OLD_BATCH) {
            let lengths: Vec<usize> = batch
                .iter()
                .map(|&n| tokens[window_number * OLD_WINDOW + n])
                .collect();
            real += lengths.iter().sum::<usize>();
            padded += lengths.len() * lengths.iter().max().copied().unwrap_or(0);
        }
    }
    (real, padded)
}

/// (real tokens, tokens once padded) of the current batching.
fn new_token_work(tokens: &[usize]) -> (usize, usize) {
    let (mut real, mut padded) = (0, 0);
    for window in tokens.chunks(NEW_WINDOW) {
        for batch in SentenceEmbedder::batches(window) {
            let lengths: Vec<usize> = batch.iter().map(|&n| window[n]).collect();
            real += lengths.iter().sum::<usize>();
            padded += lengths.len() * lengths.iter().max().copied().unwrap_or(0);
        }
    }
    (real, padded)
}

fn medians(figures: &[(f64, f64)]) -> (f64, f64) {
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (
        median(figures.iter().map(|f| f.0).collect()),
        median(figures.iter().map(|f| f.1).collect()),
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// User and system CPU time of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |n: usize| {
        fields
            .get(n)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
