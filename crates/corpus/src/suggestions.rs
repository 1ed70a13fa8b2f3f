//! "Did you mean": the catalog entries whose id or title is closest to what a user typed, by
//! character trigrams (robust to typos and word order).

use crate::analysis::{analyse, plain_analyser};
use crate::store::CatalogEntry;

/// The ids and titles of `catalog` closest to `id_or_title`, best first, at most `n`.
pub(crate) fn closest(
    catalog: &[CatalogEntry],
    id_or_title: &str,
    n: usize,
) -> Vec<(String, String)> {
    let wanted = Trigrams::of(id_or_title);
    let mut scored: Vec<(f64, &CatalogEntry)> = catalog
        .iter()
        .map(|entry| {
            let score = wanted
                .similarity(&Trigrams::of(&entry.id))
                .max(wanted.similarity(&Trigrams::of(&entry.title)));
            (score, entry)
        })
        .filter(|(score, _)| *score >= SUGGESTION_THRESHOLD)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    scored
        .into_iter()
        .take(n)
        .map(|(_, entry)| (entry.id.clone(), entry.title.clone()))
        .collect()
}

/// Below this similarity a suggestion would only confuse.
const SUGGESTION_THRESHOLD: f64 = 0.15;

/// Character trigrams of a folded, lower-cased text: robust to typos and word order.
struct Trigrams(std::collections::BTreeSet<String>);

impl Trigrams {
    fn of(text: &str) -> Trigrams {
        let words: Vec<String> = analyse(&mut plain_analyser(), text)
            .into_iter()
            .map(|(_, word)| word)
            .collect();
        let padded: Vec<char> = format!("  {}  ", words.join(" ")).chars().collect();
        Trigrams(
            padded
                .windows(3)
                .map(|w| w.iter().collect::<String>())
                .filter(|g| !g.trim().is_empty())
                .collect(),
        )
    }

    /// Dice coefficient of the two sets.
    fn similarity(&self, other: &Trigrams) -> f64 {
        let total = self.0.len() + other.0.len();
        if total == 0 {
            return 0.0;
        }
        let shared = self.0.intersection(&other.0).count();
        2.0 * shared as f64 / total as f64
    }
}
