//! Reading documents from files: JSON Lines and Markdown with front matter.
//!
//! # JSON Lines
//! One [`Document`] per line, as serialised by this crate (`type` for the document type).
//! Blank lines are skipped. Every line is checked on its own: a bad line is reported with its
//! file and line number and the other lines are still imported.
//!
//! # Markdown
//! ```text
//! ---
//! id: mag:leo-xiii/rerum-novarum-1891
//! title: Rerum Novarum
//! author: Leo XIII
//! date: 1891-05-15
//! type: encyclical
//! language: la
//! reference: ASS 23 (1890-91) 641-670
//! source_url: https://www.vatican.va/…
//! ---
//! Text before the first heading (becomes the section `0`).
//!
//! # 1. Of the condition of workers
//! Text of the first section…
//!
//! ## The right of property {#rights}
//! Text…
//! ```
//! The front matter is `key: value` lines between two `---` lines (values may be quoted; `#`
//! lines are comments). `id`, `title`, `type` and `language` are required, except that when
//! `title` is absent the first `#` heading is taken as the title (and starts no section).
//!
//! Every `#` or `##` heading starts a section; deeper headings (`###`…) stay in the text of the
//! section they are in. The section's **locus** is, in order of preference:
//! 1. an explicit `{#locus}` at the end of the heading (removed from the heading text);
//! 2. the number the heading starts with, optionally after `§`, `No.` or `n.`
//!    (`# 12. Of prayer` → `12`, `## § 3` → `3`, `# 4.2 Hope` → `4.2`);
//! 3. otherwise the section's position among the headed sections (1, 2, 3, …).
//!
//! Text before the first heading, if any, is the section `0`. Two sections with the same locus
//! are an error reported at the second heading's line.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{Document, Section, WriteSummary};

/// A record that could not be imported, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportIssue {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ImportIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// What an import did: the changes made and the records refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Files read.
    pub files: usize,
    /// Valid records found (and written).
    pub valid_records: usize,
    /// The change to the corpus, or `None` when no record was valid and nothing was written.
    pub summary: Option<WriteSummary>,
    /// Records refused, by file and line.
    pub issues: Vec<ImportIssue>,
}

/// A valid document and where it came from.
pub(crate) struct Located {
    pub document: Document,
    pub file: PathBuf,
    pub line: usize,
}

fn issue(file: &Path, line: Option<usize>, message: impl Into<String>) -> ImportIssue {
    ImportIssue {
        file: file.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Reads the given files and folders (recursively: `*.jsonl` and `*.md`/`*.markdown`),
/// keeping the first record of each id and reporting every refused record.
pub(crate) fn read_sources(paths: &[PathBuf]) -> (Vec<Located>, usize, Vec<ImportIssue>) {
    let mut files = Vec::new();
    let mut issues = Vec::new();
    for path in paths {
        collect_files(path, &mut files, &mut issues, true);
    }
    let mut documents: Vec<Located> = Vec::new();
    let mut first_seen: HashMap<String, (PathBuf, usize)> = HashMap::new();
    for file in &files {
        let (found, mut file_issues) = read_file(file);
        issues.append(&mut file_issues);
        for located in found {
            if let Some((first_file, first_line)) = first_seen.get(&located.document.id) {
                issues.push(issue(
                    &located.file,
                    Some(located.line),
                    format!(
                        "id `{}` was already given at {}:{first_line} in this import",
                        located.document.id,
                        first_file.display()
                    ),
                ));
                continue;
            }
            first_seen.insert(
                located.document.id.clone(),
                (located.file.clone(), located.line),
            );
            documents.push(located);
        }
    }
    (documents, files.len(), issues)
}

fn collect_files(
    path: &Path,
    files: &mut Vec<PathBuf>,
    issues: &mut Vec<ImportIssue>,
    named: bool,
) {
    if named && !path.exists() {
        issues.push(issue(path, None, "no such file or folder"));
    } else if path.is_dir() {
        let mut entries: Vec<PathBuf> = match fs::read_dir(path) {
            Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
            Err(e) => {
                issues.push(issue(path, None, format!("cannot read the folder: {e}")));
                return;
            }
        };
        entries.sort();
        for entry in entries {
            collect_files(&entry, files, issues, false);
        }
    } else if kind_of(path).is_some() {
        files.push(path.to_path_buf());
    } else if named {
        issues.push(issue(path, None, "not a .jsonl, .md or .markdown file"));
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    JsonLines,
    Markdown,
}

fn kind_of(path: &Path) -> Option<Kind> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "jsonl" => Some(Kind::JsonLines),
        "md" | "markdown" => Some(Kind::Markdown),
        _ => None,
    }
}

fn read_file(path: &Path) -> (Vec<Located>, Vec<ImportIssue>) {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return (Vec::new(), vec![issue(path, None, e.to_string())]),
    };
    match kind_of(path) {
        Some(Kind::JsonLines) => parse_jsonl(path, &text),
        Some(Kind::Markdown) => match parse_markdown(path, &text) {
            Ok(document) => (
                vec![Located {
                    document,
                    file: path.to_path_buf(),
                    line: 1,
                }],
                Vec::new(),
            ),
            Err(problem) => (Vec::new(), vec![problem]),
        },
        None => (Vec::new(), Vec::new()),
    }
}

/// Parses and validates each line of a JSON Lines text; `path` only labels the issues.
pub(crate) fn parse_jsonl(path: &Path, text: &str) -> (Vec<Located>, Vec<ImportIssue>) {
    let mut documents = Vec::new();
    let mut issues = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let document: Document = match serde_json::from_str(line) {
            Ok(document) => document,
            Err(e) => {
                issues.push(issue(path, Some(number), format!("not a document: {e}")));
                continue;
            }
        };
        match document.validate() {
            Ok(()) => documents.push(Located {
                document,
                file: path.to_path_buf(),
                line: number,
            }),
            Err(e) => issues.push(issue(path, Some(number), e.to_string())),
        }
    }
    (documents, issues)
}

const FRONT_MATTER_KEYS: [&str; 8] = [
    "id",
    "title",
    "author",
    "date",
    "type",
    "language",
    "reference",
    "source_url",
];

/// Parses and validates one Markdown document (format in the module docs); `path` labels issues.
pub fn parse_markdown(path: &Path, text: &str) -> Result<Document, ImportIssue> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Err(issue(
            path,
            Some(1),
            "the file must start with a `---` front matter block (id, title, type, language, …)",
        ));
    }
    let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
        return Err(issue(
            path,
            Some(1),
            "the front matter is not closed by `---`",
        ));
    };
    let end = end + 1;
    let mut meta: HashMap<&str, String> = HashMap::new();
    for (index, line) in lines.iter().enumerate().take(end).skip(1) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(issue(path, Some(index + 1), "expected `key: value`"));
        };
        let key = key.trim();
        let Some(known) = FRONT_MATTER_KEYS.iter().find(|k| **k == key) else {
            return Err(issue(
                path,
                Some(index + 1),
                format!(
                    "unknown key `{key}` (known: {})",
                    FRONT_MATTER_KEYS.join(", ")
                ),
            ));
        };
        let value = unquote(value.trim());
        if !value.is_empty() {
            meta.insert(known, value);
        }
    }

    let mut title = meta.remove("title");
    let mut sections: Vec<Section> = Vec::new();
    let mut heading_lines: HashMap<String, usize> = HashMap::new();
    let mut current: Option<(String, Option<String>)> = None;
    let mut body: Vec<&str> = Vec::new();
    let mut headed = 0;
    let mut flush = |current: &mut Option<(String, Option<String>)>, body: &mut Vec<&str>| {
        let text = body.join("\n").trim().to_string();
        body.clear();
        match current.take() {
            Some((locus, heading)) => sections.push(Section {
                locus,
                heading,
                text,
            }),
            None if !text.is_empty() => sections.push(Section {
                locus: "0".into(),
                heading: None,
                text,
            }),
            None => {}
        }
    };
    for (index, line) in lines.iter().enumerate().skip(end + 1) {
        let Some(heading) = section_heading(line) else {
            body.push(line);
            continue;
        };
        if title.is_none() && line.starts_with("# ") {
            title = Some(heading.to_string());
            continue;
        }
        flush(&mut current, &mut body);
        headed += 1;
        let (locus, heading) = locus_of(heading, headed);
        if let Some(first) = heading_lines.insert(locus.clone(), index + 1) {
            return Err(issue(
                path,
                Some(index + 1),
                format!("locus `{locus}` was already used by the heading at line {first}"),
            ));
        }
        current = Some((locus, (!heading.is_empty()).then_some(heading)));
    }
    flush(&mut current, &mut body);
    if heading_lines.contains_key("0") && sections.iter().filter(|s| s.locus == "0").count() > 1 {
        return Err(issue(
            path,
            heading_lines.get("0").copied(),
            "locus `0` is used both by the text before the first heading and by a heading",
        ));
    }
    if let Some(empty) = sections.iter().find(|s| s.text.is_empty()) {
        return Err(issue(
            path,
            heading_lines.get(&empty.locus).copied(),
            format!("section `{}` has no text", empty.locus),
        ));
    }

    let document = Document {
        id: meta.remove("id").unwrap_or_default(),
        title: title.unwrap_or_default(),
        author: meta.remove("author"),
        date: meta.remove("date"),
        doc_type: meta.remove("type").unwrap_or_default(),
        language: meta.remove("language").unwrap_or_default(),
        reference: meta.remove("reference"),
        source_url: meta.remove("source_url"),
        sections,
    };
    document
        .validate()
        .map_err(|e| issue(path, Some(1), e.to_string()))?;
    Ok(document)
}

/// The text of a `#` or `##` heading line.
fn section_heading(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("## ")
        .or_else(|| line.strip_prefix("# "))?;
    Some(rest.trim())
}

/// The locus and the heading text of a heading (rules in the module docs).
fn locus_of(heading: &str, position: usize) -> (String, String) {
    if let Some(open) = heading.rfind("{#")
        && heading.ends_with('}')
    {
        let locus = heading[open + 2..heading.len() - 1].trim().to_string();
        if !locus.is_empty() {
            return (locus, heading[..open].trim().to_string());
        }
    }
    let mut rest = heading.trim_start();
    for marker in ["§", "No.", "no.", "n."] {
        if let Some(stripped) = rest.strip_prefix(marker) {
            rest = stripped.trim_start();
            break;
        }
    }
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    let followed_well = rest[number.len()..]
        .chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || matches!(c, '.' | ')' | ':' | '-'));
    if number.starts_with(|c: char| c.is_ascii_digit()) && followed_well {
        return (number.to_string(), heading.to_string());
    }
    (position.to_string(), heading.to_string())
}

fn unquote(value: &str) -> String {
    let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    if quoted('"') {
        value[1..value.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    } else if quoted('\'') {
        value[1..value.len() - 1].replace("''", "'")
    } else {
        value.to_string()
    }
}

/// The report of an import whose records were all refused.
pub(crate) fn nothing_written(files: usize, issues: Vec<ImportIssue>) -> ImportReport {
    ImportReport {
        files,
        valid_records: 0,
        summary: None,
        issues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loci_come_from_attributes_numbers_or_positions() {
        assert_eq!(
            locus_of("Of grace {#grace}", 4),
            ("grace".into(), "Of grace".into())
        );
        assert_eq!(locus_of("12. Of prayer", 1).0, "12");
        assert_eq!(locus_of("§ 3", 1).0, "3");
        assert_eq!(locus_of("No. 7 Hope", 1).0, "7");
        assert_eq!(locus_of("4.2 Hope", 1).0, "4.2");
        assert_eq!(locus_of("1891 was a year", 2).0, "1891");
        assert_eq!(locus_of("3rd part", 2).0, "2");
        assert_eq!(locus_of("Of charity", 5), ("5".into(), "Of charity".into()));
    }

    #[test]
    fn markdown_sections_and_front_matter() {
        let text = "---\nid: cat:test\ntitle: \"A: Test\"\ntype: catechism\nlanguage: en\n---\nIntro line.\n\n# 1. First\nOne.\n### Sub\nStill one.\n## Second\nTwo.\n";
        let doc = parse_markdown(Path::new("t.md"), text).unwrap();
        assert_eq!(doc.title, "A: Test");
        let loci: Vec<&str> = doc.sections.iter().map(|s| s.locus.as_str()).collect();
        assert_eq!(loci, ["0", "1", "2"]);
        assert!(doc.sections[1].text.contains("Still one."));
        assert_eq!(doc.sections[2].heading.as_deref(), Some("Second"));
    }

    #[test]
    fn markdown_title_from_first_heading_and_errors_with_lines() {
        let text =
            "---\nid: cat:t\ntype: catechism\nlanguage: en\n---\n# The Title\n## 1\nA.\n## 1\nB.\n";
        let err = parse_markdown(Path::new("t.md"), text).unwrap_err();
        assert_eq!(err.line, Some(9));
        assert!(err.message.contains("already used"), "{err}");

        let err = parse_markdown(Path::new("t.md"), "no front matter").unwrap_err();
        assert_eq!(err.line, Some(1));

        let err =
            parse_markdown(Path::new("t.md"), "---\nid: cat:t\ncolour: red\n---\n").unwrap_err();
        assert_eq!(err.line, Some(3));
    }
}
