//! Asks `catholic_qa` (extractive) and `document_search` a few questions over a data directory
//! and prints both answers, to see what a reader would be shown:
//!
//! ```text
//! ask DATA_DIR "Is abortion a sin?" ["Who can baptize?" …]
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use corpus::{Corpus, SearchRequest};
use skills::qa::{CatholicQa, LlmSettings};
use skills::{Skill, SkillRequest};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(data_dir) = args.next() else {
        eprintln!("usage: ask DATA_DIR QUESTION…");
        return std::process::ExitCode::FAILURE;
    };
    let corpus = match Corpus::open(&PathBuf::from(data_dir)) {
        Ok(corpus) => Arc::new(corpus),
        Err(error) => {
            eprintln!("ask: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let qa = CatholicQa::new(Arc::clone(&corpus), &LlmSettings::default())
        .expect("the extractive skill needs no settings");
    for question in args {
        println!("=== {question}");
        if let Ok(found) = corpus.search(&SearchRequest {
            limit: 5,
            ..SearchRequest::new(question.clone())
        }) {
            for hit in found.hits {
                println!("  search: {} {:.2} {:?}", hit.id, hit.score, hit.heading);
            }
        }
        match qa
            .run(SkillRequest::from_text(
                question.clone(),
                chrono::Utc::now(),
            ))
            .await
        {
            Ok(answer) => println!("{}\n", answer.text),
            Err(error) => println!("failed: {error}\n"),
        }
    }
    std::process::ExitCode::SUCCESS
}
