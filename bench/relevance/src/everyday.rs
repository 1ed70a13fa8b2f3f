//! The everyday questions (`bench/relevance/everyday.json`): asked the way a Catholic asks
//! ("Is abortion a sin?", "What did Jesus say about divorce?"), in five categories (moral,
//! sacraments, Scripture by topic, devotion, and questions the corpus cannot answer), each with
//! every section an answer may quote, or none. The set is cut in two halves: the threshold of
//! the relevance judgement is chosen on the tuning half, and the figures are reported on the
//! held-out half.
//!
//! Each extractive answer is judged passage by passage: its first citation is right when it is
//! listed for the question; every quoted passage not listed counts as an irrelevant quotation;
//! a question listed with no passage is honestly declined when the answer quotes nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use corpus::{Corpus, SearchMode};
use serde::Deserialize;
use skills::qa::{CatholicQa, LlmSettings, MIN_BEARING};
use skills::{Skill, SkillError, SkillRequest};

/// The thresholds tried on the tuning half, in hundredths.
const TRIED_BEARINGS: std::ops::RangeInclusive<u32> = 30..=95;
/// The step between two thresholds tried, in hundredths.
const BEARING_STEP: usize = 5;

/// An everyday question and the sections an answer may quote (none: nothing answers it).
#[derive(Debug, Deserialize)]
pub struct Everyday {
    category: String,
    half: Half,
    question: String,
    relevant: Vec<String>,
}

/// Which half of the set a question belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Half {
    /// The half rules and thresholds are worked out on.
    Tune,
    /// The half the figures are reported on, answered only once the rules are final.
    HeldOut,
}

impl std::fmt::Display for Half {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Half::Tune => "tuning half",
            Half::HeldOut => "held-out half",
        })
    }
}

/// How one answer fared.
#[derive(Debug, Default, Clone, Copy)]
struct Judged {
    answerable: bool,
    first_right: bool,
    irrelevant: usize,
    declined: bool,
}

/// The counts of one category (or of a whole half).
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    answerable: usize,
    first_right: usize,
    irrelevant: usize,
    unanswerable: usize,
    honest: usize,
    wrongly_declined: usize,
}

impl Tally {
    fn add(&mut self, judged: Judged) {
        self.irrelevant += judged.irrelevant;
        if judged.answerable {
            self.answerable += 1;
            self.first_right += usize::from(judged.first_right);
            self.wrongly_declined += usize::from(judged.declined);
        } else {
            self.unanswerable += 1;
            self.honest += usize::from(judged.declined);
        }
    }

    /// What a threshold is chosen by: right first citations and honest declines, less the
    /// irrelevant quotations.
    fn score(&self) -> i64 {
        (self.first_right + self.honest) as i64 - self.irrelevant as i64
    }
}

/// Reads the everyday questions.
pub fn load(path: &Path) -> Result<Vec<Everyday>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Asks every question of one half and judges the answers.
async fn judge<'q>(
    qa: &CatholicQa,
    questions: &'q [Everyday],
    half: Half,
) -> Result<Vec<(&'q Everyday, Judged, String)>, SkillError> {
    let mut judged = Vec::new();
    for everyday in questions.iter().filter(|q| q.half == half) {
        let answer = qa
            .run(SkillRequest::from_text(
                everyday.question.clone(),
                chrono::Utc::now(),
            ))
            .await?;
        let cited: Vec<String> = answer.data["citations"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|c| c["document_id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let listed = |id: &String| everyday.relevant.contains(id);
        judged.push((
            everyday,
            Judged {
                answerable: !everyday.relevant.is_empty(),
                first_right: cited.first().is_some_and(listed),
                irrelevant: cited.iter().filter(|id| !listed(id)).count(),
                declined: cited.is_empty(),
            },
            if cited.is_empty() {
                "(declined)".to_string()
            } else {
                cited
                    .iter()
                    .map(|id| {
                        if listed(id) {
                            id.clone()
                        } else {
                            format!("✗ {id}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ));
    }
    Ok(judged)
}

/// Tries the thresholds on the tuning half and reports each, and the best (the highest
/// score; among equals, the lowest threshold, which declines least).
pub async fn tune(corpus: Arc<Corpus>, questions: &[Everyday]) -> Result<String, SkillError> {
    let mut out = String::from(
        "\nTuning half: the judgement's threshold (least bearing to be quoted)\n\n| Threshold | Right first citations | Honest declines | Irrelevant quotations | Score |\n|---|---|---|---|---|\n",
    );
    let mut best: Option<(i64, f32)> = None;
    for hundredths in TRIED_BEARINGS.step_by(BEARING_STEP) {
        let bearing = hundredths as f32 / 100.0;
        let qa = CatholicQa::new(Arc::clone(&corpus), &LlmSettings::default())?
            .with_min_bearing(bearing);
        let mut tally = Tally::default();
        for (_, judged, _) in judge(&qa, questions, Half::Tune).await? {
            tally.add(judged);
        }
        let score = tally.score();
        out.push_str(&format!(
            "| {bearing:.2} | {}/{} | {}/{} | {} | {score} |\n",
            tally.first_right, tally.answerable, tally.honest, tally.unanswerable, tally.irrelevant
        ));
        if best.is_none_or(|(top, _)| score > top) {
            best = Some((score, bearing));
        }
    }
    if let Some((score, bearing)) = best {
        out.push_str(&format!(
            "\nBest on the tuning half: {bearing:.2} (score {score}); the skill's default is {MIN_BEARING:.2}. Its answers:\n"
        ));
        let qa = CatholicQa::new(Arc::clone(&corpus), &LlmSettings::default())?
            .with_min_bearing(bearing);
        out.push_str(&answers(&judge(&qa, questions, Half::Tune).await?));
    }
    Ok(out)
}

/// One half answered with the skill's default threshold: the figures per category, then every
/// answer, its unlisted passages marked.
pub async fn report(
    mode: SearchMode,
    corpus: Arc<Corpus>,
    questions: &[Everyday],
    half: Half,
) -> Result<String, SkillError> {
    let qa = CatholicQa::new(corpus, &LlmSettings::default())?;
    let judged = judge(&qa, questions, half).await?;
    let mut by_category: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for (everyday, outcome, _) in &judged {
        by_category
            .entry(everyday.category.as_str())
            .or_default()
            .add(*outcome);
        all.add(*outcome);
    }
    let mut out = format!(
        "\nEveryday questions, {half}, {mode} (threshold {MIN_BEARING:.2})\n\n| Category | Questions | Right first citation | Irrelevant quotations | Honest \"nothing answers\" | Declined though answerable |\n|---|---|---|---|---|---|\n"
    );
    let rows = by_category
        .iter()
        .map(|(name, tally)| (*name, tally))
        .chain(std::iter::once(("all", &all)));
    for (name, tally) in rows {
        let fraction = |n: usize, of: usize| {
            if of == 0 {
                "–".to_string()
            } else {
                format!("{n}/{of}")
            }
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            tally.answerable + tally.unanswerable,
            fraction(tally.first_right, tally.answerable),
            tally.irrelevant,
            fraction(tally.honest, tally.unanswerable),
            fraction(tally.wrongly_declined, tally.answerable),
        ));
    }
    out.push_str(&format!(
        "\nAnswers of the {half} (✗: not listed for the question):\n"
    ));
    out.push_str(&answers(&judged));
    Ok(out)
}

/// One line per answer: whether it is right (first citation listed, nothing unlisted quoted,
/// or an honest decline), the question and what it cited.
fn answers(judged: &[(&Everyday, Judged, String)]) -> String {
    let mut out = String::new();
    for (everyday, outcome, cited) in judged {
        let verdict = match (outcome.answerable, outcome.first_right, outcome.irrelevant) {
            (true, true, 0) | (false, _, 0) => "ok",
            _ => "MISS",
        };
        out.push_str(&format!("- {verdict} {:?}: {cited}\n", everyday.question));
    }
    out
}
