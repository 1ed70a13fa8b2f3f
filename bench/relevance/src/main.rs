//! The retrieval evaluation over a data directory holding the starter corpus:
//!
//! ```text
//! bench-relevance DATA_DIR QUESTIONS_JSON [EVERYDAY_JSON [--tune | --tuning-half]]
//! ```
//!
//! For every judged question, in BM25 and (built with `embeddings`, model installed) hybrid
//! mode: the rank of the first judged-right section among the top five hits of a search for the
//! question, and the first citation of the extractive `catholic_qa` answer. It prints a Markdown
//! report: recall@5 (share of questions with a judged-right section in the top five), MRR (mean
//! of 1/rank of the first right section, 0 past five), the share of answers whose first citation
//! is judged right, the same per topic, and every question missed.
//!
//! With the everyday questions (see [`everyday`]), it also judges the extractive answers
//! passage by passage on their held-out half; with `--tune`, it first tries thresholds of the
//! relevance judgement on the tuning half and reports the one it would choose. With
//! `--tuning-half`, it reports the tuning half instead of the held-out one, at the skill's
//! default threshold: the rules of the judgement are worked out on it without answering the
//! held-out half.

mod everyday;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use corpus::{Corpus, CorpusError, SearchMode, SearchRequest};
use serde::Deserialize;
use skills::qa::{CatholicQa, LlmSettings};
use skills::{Skill, SkillError, SkillRequest};

/// Hits looked at per question.
const DEPTH: usize = 5;

/// Why the evaluation could not run.
#[derive(Debug, thiserror::Error)]
enum BenchError {
    #[error(
        "usage: bench-relevance DATA_DIR QUESTIONS_JSON [EVERYDAY_JSON [--tune | --tuning-half]]"
    )]
    Usage,
    #[error("{path}: {reason}")]
    Questions { path: PathBuf, reason: String },
    #[error("corpus: {0}")]
    Corpus(#[from] CorpusError),
    #[error("catholic_qa: {0}")]
    Skill(#[from] SkillError),
    #[error("the corpus is empty: install the starter corpus first (data install-bible)")]
    EmptyCorpus,
}

/// A question and the sections a good answer must cite (any one of them counts).
#[derive(Debug, Deserialize)]
struct Judged {
    topic: String,
    question: String,
    relevant: Vec<String>,
}

/// What one mode achieved on one question.
struct Outcome {
    /// 1-based rank of the first right section in the top [`DEPTH`] hits.
    rank: Option<usize>,
    /// Whether the extractive answer's first citation is a right section.
    first_citation_right: bool,
    /// The top hit and the first citation, for the list of misses.
    top_hit: String,
    first_citation: String,
}

fn load_questions(path: &Path) -> Result<Vec<Judged>, BenchError> {
    let failed = |reason: String| BenchError::Questions {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| failed(e.to_string()))
}

/// Opens the corpus in hybrid mode; when the vectors are missing but the model is installed
/// (and this build can embed), computes them first with a reindex.
fn open_hybrid(data_dir: &Path) -> Result<Option<Corpus>, BenchError> {
    let corpus = Corpus::open_with_mode(data_dir, SearchMode::Hybrid)?;
    if corpus.search_mode() == SearchMode::Hybrid {
        return Ok(Some(corpus));
    }
    if !cfg!(feature = "embeddings") || !corpus::model_installed(data_dir) {
        return Ok(None);
    }
    eprintln!("bench-relevance: computing the section vectors (corpus reindex)…");
    drop(corpus);
    corpus::CorpusWriter::open(data_dir)?.reindex()?;
    let corpus = Corpus::open_with_mode(data_dir, SearchMode::Hybrid)?;
    Ok((corpus.search_mode() == SearchMode::Hybrid).then_some(corpus))
}

async fn evaluate(corpus: Arc<Corpus>, questions: &[Judged]) -> Result<Vec<Outcome>, BenchError> {
    let qa = CatholicQa::new(Arc::clone(&corpus), &LlmSettings::default())?;
    let mut outcomes = Vec::with_capacity(questions.len());
    for judged in questions {
        let search = SearchRequest {
            limit: DEPTH,
            ..SearchRequest::new(judged.question.clone())
        };
        let hits = corpus.search(&search)?.hits;
        let rank = hits
            .iter()
            .position(|hit| judged.relevant.contains(&hit.id))
            .map(|position| position + 1);
        let answer = qa
            .run(SkillRequest::from_text(
                judged.question.clone(),
                chrono::Utc::now(),
            ))
            .await?;
        let first_citation = answer.data["citations"][0]["document_id"]
            .as_str()
            .unwrap_or("(none)")
            .to_string();
        outcomes.push(Outcome {
            rank,
            first_citation_right: judged.relevant.contains(&first_citation),
            top_hit: hits.first().map_or("(none)".into(), |hit| hit.id.clone()),
            first_citation,
        });
    }
    Ok(outcomes)
}

/// recall@5, MRR and first-citation share of a set of outcomes.
fn figures<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> (f64, f64, f64, usize) {
    let (mut found, mut reciprocal, mut cited, mut count) = (0usize, 0.0, 0usize, 0usize);
    for outcome in outcomes {
        count += 1;
        if let Some(rank) = outcome.rank {
            found += 1;
            reciprocal += 1.0 / rank as f64;
        }
        if outcome.first_citation_right {
            cited += 1;
        }
    }
    let share = |n: f64| if count == 0 { 0.0 } else { n / count as f64 };
    (
        share(found as f64),
        share(reciprocal),
        share(cited as f64),
        count,
    )
}

fn report(questions: &[Judged], modes: &[(SearchMode, Vec<Outcome>)]) -> String {
    let mut out = format!(
        "| Mode | Questions | recall@{DEPTH} | MRR@{DEPTH} | First citation right (extractive) |\n|---|---|---|---|---|\n"
    );
    for (mode, outcomes) in modes {
        let (recall, mrr, cited, count) = figures(outcomes.iter());
        out.push_str(&format!(
            "| {mode} | {count} | {recall:.3} | {mrr:.3} | {cited:.3} |\n"
        ));
    }
    let mut topics: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, judged) in questions.iter().enumerate() {
        topics.entry(&judged.topic).or_default().push(index);
    }
    out.push_str("\n| Topic | Questions |");
    for (mode, _) in modes {
        out.push_str(&format!(" {mode} recall@{DEPTH} | {mode} first citation |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|---|".repeat(modes.len()));
    for (topic, indices) in &topics {
        out.push_str(&format!("\n| {topic} | {} |", indices.len()));
        for (_, outcomes) in modes {
            let (recall, _, cited, _) = figures(indices.iter().map(|&i| &outcomes[i]));
            out.push_str(&format!(" {recall:.2} | {cited:.2} |"));
        }
    }
    out.push('\n');
    for (mode, outcomes) in modes {
        out.push_str(&format!(
            "\nMissed in {mode} (no right section in the top {DEPTH}, or a wrong first citation):\n"
        ));
        for (judged, outcome) in questions.iter().zip(outcomes) {
            if outcome.rank.is_none() || !outcome.first_citation_right {
                out.push_str(&format!(
                    "- {:?}: rank {}, top hit {}, first citation {}\n",
                    judged.question,
                    outcome.rank.map_or("-".into(), |r| r.to_string()),
                    outcome.top_hit,
                    outcome.first_citation
                ));
            }
        }
    }
    out
}

async fn run() -> Result<String, BenchError> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let (data_dir, questions, everyday, flag) = match args.as_slice() {
        [data, questions] => (data, questions, None, None),
        [data, questions, everyday] => (data, questions, Some(everyday), None),
        [data, questions, everyday, flag] if flag == "--tune" || flag == "--tuning-half" => {
            (data, questions, Some(everyday), flag.to_str())
        }
        _ => return Err(BenchError::Usage),
    };
    let (tune, half) = match flag {
        Some("--tune") => (true, everyday::Half::HeldOut),
        Some(_) => (false, everyday::Half::Tune),
        None => (false, everyday::Half::HeldOut),
    };
    let data_dir = PathBuf::from(data_dir);
    let questions = load_questions(Path::new(questions))?;
    let bm25 = Arc::new(Corpus::open(&data_dir)?);
    if bm25.is_empty() {
        return Err(BenchError::EmptyCorpus);
    }
    let mut corpora = vec![(SearchMode::Bm25, Arc::clone(&bm25))];
    match open_hybrid(&data_dir)? {
        Some(hybrid) => corpora.push((SearchMode::Hybrid, Arc::new(hybrid))),
        None => eprintln!(
            "bench-relevance: hybrid not measured (build with --features embeddings and install the model)"
        ),
    }
    let mut modes = Vec::new();
    for (mode, corpus) in &corpora {
        modes.push((*mode, evaluate(Arc::clone(corpus), &questions).await?));
    }
    let mut out = report(&questions, &modes);
    if let Some(everyday) = everyday {
        let everyday =
            everyday::load(Path::new(everyday)).map_err(|reason| BenchError::Questions {
                path: PathBuf::from(everyday),
                reason,
            })?;
        if tune {
            out.push_str(&everyday::tune(Arc::clone(&bm25), &everyday).await?);
        }
        for (mode, corpus) in &corpora {
            out.push_str(&everyday::report(*mode, Arc::clone(corpus), &everyday, half).await?);
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(report) => {
            print!("{report}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench-relevance: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
