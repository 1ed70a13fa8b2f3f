//! `document_search` and `document_fetch`: the corpus, reachable by agents.

use std::sync::Arc;

use async_trait::async_trait;
use corpus::{Corpus, CorpusError, Document, SearchFilters, SearchRequest};
use serde_json::{Map, Value, json};

use crate::readings::INSTALL_BIBLE_COMMAND;

use crate::{
    Skill, SkillError, SkillInfo, SkillOutput, SkillRequest, catalog, limits, on_blocking_pool,
};

/// Sections returned by one fetch when the caller gives no limit: enough for a chapter or an
/// encyclical, small enough for an agent's context.
pub const DEFAULT_FETCH_LIMIT: usize = 50;
/// Most sections one fetch may return.
pub const MAX_FETCH_LIMIT: usize = 500;
/// How many "did you mean" ids an unknown id suggests.
const SUGGESTIONS: usize = 3;

const SEARCH_EXAMPLE: &str = "Send the words to look for, e.g. `grace and free will`, or a data part such as {\"query\": \"just wage\", \"limit\": 5, \"filters\": {\"type\": \"encyclical\"}}.";
const FETCH_EXAMPLE: &str = "Send a document id as returned by document_search, e.g. `cat:baltimore-1`, `bible:dr/JHN#3:16`, or a data part such as {\"id\": \"cat:baltimore-1\", \"offset\": 0, \"limit\": 20}.";

/// Full-text search over the corpus.
pub struct DocumentSearch {
    corpus: Arc<Corpus>,
}

impl DocumentSearch {
    /// A search skill over a corpus shared with the other skills.
    pub fn new(corpus: Arc<Corpus>) -> Self {
        DocumentSearch { corpus }
    }
}

/// One document, or one section of it, by id.
pub struct DocumentFetch {
    corpus: Arc<Corpus>,
}

impl DocumentFetch {
    /// A fetch skill over a corpus shared with the other skills.
    pub fn new(corpus: Arc<Corpus>) -> Self {
        DocumentFetch { corpus }
    }
}

fn failed(message: impl Into<String>) -> SkillError {
    SkillError::Failed(message.into())
}

fn internal(error: CorpusError) -> SkillError {
    SkillError::Internal(error.to_string())
}

/// A whole number from the data part, with a message naming the field and its range otherwise.
fn data_number(
    data: &Map<String, Value>,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<i64>, SkillError> {
    let Some(value) = data.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let number = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    match number {
        Some(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(failed(format!(
            "`{key}` must be a whole number from {} to {}, not {value}.",
            range.start(),
            range.end()
        ))),
    }
}

/// A string of the data part, trimmed, at most `limit` characters.
fn data_text(
    data: &Map<String, Value>,
    key: &str,
    limit: usize,
) -> Result<Option<String>, SkillError> {
    match data.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            limits::check(&format!("`{key}`"), s.trim(), limit)?;
            Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty()))
        }
        Some(other) => Err(failed(format!("`{key}` must be a string, not {other}."))),
    }
}

fn search_request(request: &SkillRequest) -> Result<SearchRequest, SkillError> {
    let data = &request.data;
    let query = match data_text(data, "query", limits::MAX_QUERY_CHARS)? {
        Some(query) => query,
        None => request.text.trim().to_string(),
    };
    limits::check("the document_search query", &query, limits::MAX_QUERY_CHARS)?;
    if query.is_empty() {
        return Err(failed(format!(
            "There is nothing to search for. {SEARCH_EXAMPLE}"
        )));
    }
    let limit = data_number(data, "limit", 1..=corpus::MAX_LIMIT as i64)?
        .map_or(corpus::DEFAULT_LIMIT, |n| n as usize);
    let offset =
        data_number(data, "offset", 0..=corpus::MAX_OFFSET as i64)?.map_or(0, |n| n as usize);
    let filters = match data.get("filters") {
        None | Some(Value::Null) => SearchFilters::default(),
        Some(Value::Object(filters)) => {
            let year = |key| data_number(filters, key, -9999..=9999).map(|y| y.map(|y| y as i32));
            SearchFilters {
                doc_type: data_text(filters, "type", limits::MAX_FILTER_CHARS)?,
                author: data_text(filters, "author", limits::MAX_FILTER_CHARS)?,
                year_from: year("year_from")?,
                year_to: year("year_to")?,
                language: data_text(filters, "language", limits::MAX_FILTER_CHARS)?,
            }
        }
        Some(other) => {
            return Err(failed(format!(
                "`filters` must be an object with any of type, author, year_from, year_to, language; not {other}."
            )));
        }
    };
    Ok(SearchRequest {
        query,
        limit,
        offset,
        filters,
    })
}

/// Scores are for ordering: four decimals are plenty and keep the JSON readable.
fn rounded(score: f32) -> f64 {
    (f64::from(score) * 10_000.0).round() / 10_000.0
}

#[async_trait]
impl Skill for DocumentSearch {
    fn info(&self) -> &SkillInfo {
        &catalog::DOCUMENT_SEARCH
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        let search = search_request(&request)?;
        let (search, results) = on_blocking_pool(&self.corpus, move |corpus| {
            let results = corpus.search(&search);
            (search, results)
        })
        .await?;
        let results = match results {
            Ok(results) => results,
            Err(CorpusError::NoSearchTerms) => {
                return Err(failed(format!(
                    "The query `{}` has no words to search for. {SEARCH_EXAMPLE}",
                    search.query
                )));
            }
            Err(CorpusError::InvalidRequest(message)) => return Err(failed(format!("{message}."))),
            Err(other) => return Err(internal(other)),
        };

        let mut text = if self.corpus.is_empty() {
            format!(
                "The document corpus of this server is empty, so nothing matches. The operator fills it with `{INSTALL_BIBLE_COMMAND}` (the Douay-Rheims, Haydock's commentary and the catechisms) and restarts the server."
            )
        } else if results.total == 0 {
            format!("No passage of the corpus matches \"{}\".", search.query)
        } else if results.hits.is_empty() {
            format!(
                "\"{}\" matches {} passages, but none at offset {}.",
                search.query, results.total, search.offset
            )
        } else {
            format!(
                "{} passages match \"{}\"; showing {} to {}:",
                results.total,
                search.query,
                search.offset + 1,
                search.offset + results.hits.len()
            )
        };
        let mut listed = Vec::with_capacity(results.hits.len());
        for (index, hit) in results.hits.iter().enumerate() {
            let mut cited = hit.title.clone();
            if let Some(author) = &hit.author {
                cited.push_str(&format!(", {author}"));
            }
            if let Some(year) = hit.year {
                cited.push_str(&format!(" ({year})"));
            }
            if let Some(reference) = &hit.reference {
                cited.push_str(&format!(", {reference}"));
            }
            text.push_str(&format!(
                "\n\n{}. {cited}\n   id: {}\n   {}",
                search.offset + index + 1,
                hit.id,
                hit.snippet.replace('\n', " ")
            ));
            listed.push(json!({
                "id": hit.id,
                "title": hit.title,
                "author": hit.author,
                "year": hit.year,
                "type": hit.doc_type,
                "reference": hit.reference,
                "snippet": hit.snippet,
                "score": rounded(hit.score),
                "source_url": hit.source_url,
            }));
        }
        let data = json!({
            "query": search.query,
            "total": results.total,
            "offset": search.offset,
            "limit": search.limit,
            "results": listed,
        });
        Ok(SkillOutput {
            artifact_name: "search_results",
            text,
            data: into_map(data),
        })
    }
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The id (and locus) the user asked for: the data `id`, else the first word of the text that
/// looks like an id (`prefix:…`), else the whole text.
fn requested_id(request: &SkillRequest) -> Result<(String, Option<String>), SkillError> {
    let raw = match data_text(&request.data, "id", limits::MAX_ID_CHARS)? {
        Some(id) => id,
        None => {
            let text = request.text.trim();
            text.split_whitespace()
                .map(|w| {
                    w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | '.' | '<' | '>'))
                })
                .find(|w| w.contains(':'))
                .unwrap_or(text)
                .to_string()
        }
    };
    limits::check("the document id", &raw, limits::MAX_ID_CHARS)?;
    if raw.is_empty() {
        return Err(failed(format!("No document id was given. {FETCH_EXAMPLE}")));
    }
    Ok(match raw.split_once('#') {
        Some((id, locus)) if !locus.is_empty() => (id.to_string(), Some(locus.to_string())),
        Some((id, _)) => (id.to_string(), None),
        None => (raw, None),
    })
}

fn unknown_document(corpus: &Corpus, id: &str) -> SkillError {
    if corpus.is_empty() {
        return failed(format!(
            "No document `{id}`: the document corpus of this server is empty. The operator fills it with `{INSTALL_BIBLE_COMMAND}` (the Douay-Rheims, Haydock's commentary and the catechisms) and restarts the server."
        ));
    }
    let suggestions = corpus.suggest(id, SUGGESTIONS);
    if suggestions.is_empty() {
        let existing: Vec<String> = corpus
            .document_ids(SUGGESTIONS)
            .into_iter()
            .map(|id| format!("`{id}`"))
            .collect();
        return failed(format!(
            "No document has the id `{id}`. Use document_search to find ids; this corpus holds e.g. {}.",
            existing.join(", ")
        ));
    }
    let listed: Vec<String> = suggestions
        .iter()
        .map(|(id, title)| format!("`{id}` ({title})"))
        .collect();
    failed(format!(
        "No document has the id `{id}`. Did you mean: {}?",
        listed.join(", ")
    ))
}

#[async_trait]
impl Skill for DocumentFetch {
    fn info(&self) -> &SkillInfo {
        &catalog::DOCUMENT_FETCH
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        let (id, locus) = requested_id(&request)?;
        let locus = match data_text(&request.data, "locus", limits::MAX_ID_CHARS)? {
            Some(locus) => Some(locus),
            None => locus,
        };
        let limit = data_number(&request.data, "limit", 1..=MAX_FETCH_LIMIT as i64)?
            .map_or(DEFAULT_FETCH_LIMIT, |n| n as usize);
        let offset = data_number(&request.data, "offset", 0..=i64::from(u32::MAX))?
            .map_or(0, |n| n as usize);
        let wanted = id.clone();
        let document =
            on_blocking_pool(&self.corpus, move |corpus| match corpus.document(&wanted) {
                Ok(Some(document)) => Ok(document),
                Ok(None) => Err(unknown_document(corpus, &wanted)),
                Err(error) => Err(internal(error)),
            })
            .await??;
        let total = document.sections.len();
        let (start, end, next_offset) = match &locus {
            Some(locus) => {
                let Some(position) = document.sections.iter().position(|s| &s.locus == locus)
                else {
                    return Err(missing_section(&document, locus));
                };
                (position, position + 1, None)
            }
            None => {
                let start = offset.min(total);
                let end = start.saturating_add(limit).min(total);
                (start, end, (end < total).then_some(end))
            }
        };
        let sections = &document.sections[start..end];
        Ok(SkillOutput {
            artifact_name: "document",
            text: render_document(&document, sections, start, next_offset),
            data: into_map(json!({
                "id": document.id,
                "locus": locus,
                "title": document.title,
                "author": document.author,
                "date": document.date,
                "type": document.doc_type,
                "language": document.language,
                "reference": document.reference,
                "source_url": document.source_url,
                "total_sections": total,
                "offset": start,
                "next_offset": next_offset,
                "sections": sections,
            })),
        })
    }
}

fn missing_section(document: &Document, locus: &str) -> SkillError {
    // A chapter asked for where the loci are verses (`JHN#6` for `JHN#6:1`…): name its first.
    let within: Vec<String> = document
        .sections
        .iter()
        .filter(|s| {
            s.locus
                .strip_prefix(locus)
                .is_some_and(|rest| rest.starts_with([':', '.']))
        })
        .take(SUGGESTIONS)
        .map(|s| format!("`{}#{}`", document.id, s.locus))
        .collect();
    if !within.is_empty() {
        return failed(format!(
            "{} (`{}`) has no section `{locus}`; its sections there are {}…, or fetch `{}` with an offset to page through them.",
            document.title,
            document.id,
            within.join(", "),
            document.id
        ));
    }
    let first = document.sections.first().map_or("", |s| s.locus.as_str());
    let last = document.sections.last().map_or("", |s| s.locus.as_str());
    failed(format!(
        "{} (`{}`) has no section `{locus}`. Its {} sections run from `{first}` to `{last}`; fetch `{}` without `#…` to page through them.",
        document.title,
        document.id,
        document.sections.len(),
        document.id
    ))
}

/// The line above the sections shown when they are not the whole document, naming them by
/// their loci (the `[877]` below it) and then by their place among the document's sections,
/// so that one section is not announced as a range of places ("Sections 875 to 875").
fn shown_sections(sections: &[corpus::Section], start: usize, total: usize) -> String {
    if sections.len() >= total {
        return String::new();
    }
    match sections {
        [] => String::new(),
        [only] => format!(
            "\nSection [{}], number {} of the {total} sections.",
            only.locus,
            start + 1
        ),
        [first, .., last] => format!(
            "\nSections [{}] to [{}], numbers {} to {} of the {total} sections.",
            first.locus,
            last.locus,
            start + 1,
            start + sections.len()
        ),
    }
}

fn render_document(
    document: &Document,
    sections: &[corpus::Section],
    start: usize,
    next_offset: Option<usize>,
) -> String {
    let mut text = document.title.clone();
    let details: Vec<String> = [
        document.author.clone(),
        document.date.clone(),
        document.reference.clone(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !details.is_empty() {
        text.push_str(&format!(" — {}", details.join(", ")));
    }
    text.push_str(&format!("\nid: {}", document.id));
    text.push_str(&shown_sections(sections, start, document.sections.len()));
    for section in sections {
        text.push_str(&format!("\n\n[{}]", section.locus));
        if let Some(heading) = &section.heading {
            text.push_str(&format!(" {heading}"));
        }
        text.push('\n');
        text.push_str(&section.text);
    }
    if let Some(next) = next_offset {
        text.push_str(&format!(
            "\n\n… {} more sections: fetch again with offset {next}.",
            document.sections.len() - next
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use corpus::{CorpusWriter, Section};

    fn document(id: &str, title: &str, texts: &[&str]) -> Document {
        Document {
            id: id.into(),
            title: title.into(),
            author: Some("Gregory Exemplar".into()),
            date: Some("1902-06-01".into()),
            doc_type: "encyclical".into(),
            language: "en".into(),
            reference: Some("Acta 4, 10".into()),
            source_url: None,
            sections: texts
                .iter()
                .enumerate()
                .map(|(n, text)| Section {
                    locus: (n + 1).to_string(),
                    heading: None,
                    text: (*text).into(),
                })
                .collect(),
        }
    }

    fn corpus() -> (tempfile::TempDir, Arc<Corpus>) {
        let data = tempfile::tempdir().unwrap();
        let mut long: Vec<String> = (1..=120)
            .map(|n| format!("Verse {n} of the long text."))
            .collect();
        long[6] = "The just wage of the worker is owed in justice.".into();
        let long_refs: Vec<&str> = long.iter().map(String::as_str).collect();
        CorpusWriter::open(data.path())
            .unwrap()
            .upsert([
                document(
                    "mag:gregory-exemplar/de-opificibus-1902",
                    "De Opificibus",
                    &long_refs,
                ),
                document(
                    "mag:gregory-exemplar/on-hope-1903",
                    "On Hope",
                    &[
                        "Hope looks to the promises of God.",
                        "Hope is not wishful thinking.",
                    ],
                ),
            ])
            .unwrap();
        let corpus = Arc::new(Corpus::open(data.path()).unwrap());
        (data, corpus)
    }

    fn with_data(text: &str, data: Value) -> SkillRequest {
        let mut request = SkillRequest::from_text(text, chrono::Utc::now());
        request.data = into_map(data);
        request
    }

    fn failure(result: Result<SkillOutput, SkillError>) -> String {
        match result {
            Err(SkillError::Failed(message)) => message,
            other => panic!("expected a failed task, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn search_lists_hits_in_text_and_data() {
        let (_data, corpus) = corpus();
        let skill = DocumentSearch::new(corpus);
        let output = skill
            .run(SkillRequest::from_text(
                "What is a just wage?",
                chrono::Utc::now(),
            ))
            .await
            .unwrap();
        assert_eq!(output.artifact_name, "search_results");
        assert_eq!(output.data["total"], 1);
        assert_eq!(output.data["limit"], 10);
        let first = &output.data["results"][0];
        assert_eq!(first["id"], "mag:gregory-exemplar/de-opificibus-1902#7");
        assert_eq!(first["type"], "encyclical");
        assert_eq!(first["year"], 1902);
        assert!(first["snippet"].as_str().unwrap().contains("**wage**"));
        assert!(
            output
                .text
                .contains("1. De Opificibus, Gregory Exemplar (1902), Acta 4, 10")
        );
        assert!(
            output
                .text
                .contains("id: mag:gregory-exemplar/de-opificibus-1902#7")
        );
    }

    #[tokio::test]
    async fn search_data_wins_and_pages() {
        let (_data, corpus) = corpus();
        let skill = DocumentSearch::new(corpus);
        let output = skill
            .run(with_data(
                "ignored words",
                json!({"query": "verse long", "limit": 5, "offset": 10, "filters": {"type": "encyclical", "year_from": 1900}}),
            ))
            .await
            .unwrap();
        assert_eq!(output.data["query"], "verse long");
        assert_eq!(output.data["offset"], 10);
        assert_eq!(output.data["results"].as_array().unwrap().len(), 5);
        assert!(output.data["total"].as_u64().unwrap() > 100);
        assert!(output.text.starts_with(&format!(
            "{} passages match \"verse long\"; showing 11 to 15:",
            output.data["total"]
        )));
        assert!(output.text.contains("\n\n11. "));
    }

    #[tokio::test]
    async fn search_refuses_bad_input_with_guidance() {
        let (_data, corpus) = corpus();
        let skill = DocumentSearch::new(corpus);
        let message = failure(skill.run(with_data("hope", json!({"limit": 80}))).await);
        assert!(message.contains("from 1 to 50"), "{message}");
        let message = failure(skill.run(with_data("hope", json!({"limit": "many"}))).await);
        assert!(message.contains("from 1 to 50"), "{message}");
        let message = failure(
            skill
                .run(SkillRequest::from_text("  ", chrono::Utc::now()))
                .await,
        );
        assert!(message.contains("e.g."), "{message}");
        let message = failure(
            skill
                .run(SkillRequest::from_text("?? !", chrono::Utc::now()))
                .await,
        );
        assert!(message.contains("no words"), "{message}");
        let message = failure(
            skill
                .run(with_data("hope", json!({"filters": "encyclical"})))
                .await,
        );
        assert!(message.contains("`filters` must be an object"), "{message}");
    }

    #[tokio::test]
    async fn no_hits_and_empty_corpus_complete_plainly() {
        let (_data, corpus) = corpus();
        let output = DocumentSearch::new(corpus)
            .run(SkillRequest::from_text("zebra", chrono::Utc::now()))
            .await
            .unwrap();
        assert_eq!(output.data["total"], 0);
        assert!(output.text.contains("No passage"), "{}", output.text);

        let output = DocumentSearch::new(Arc::new(Corpus::empty()))
            .run(SkillRequest::from_text("hope", chrono::Utc::now()))
            .await
            .unwrap();
        assert_eq!(output.data["total"], 0);
        assert_eq!(output.data["results"], json!([]));
        assert!(output.text.contains("empty"), "{}", output.text);
        assert!(
            output.text.contains(INSTALL_BIBLE_COMMAND),
            "the empty corpus's answer names the command that fills it: {}",
            output.text
        );
        let message = failure(
            DocumentFetch::new(Arc::new(Corpus::empty()))
                .run(SkillRequest::from_text(
                    "bible:dr/JHN#6:35",
                    chrono::Utc::now(),
                ))
                .await,
        );
        assert!(message.contains(INSTALL_BIBLE_COMMAND), "{message}");
    }

    #[tokio::test]
    async fn one_section_fetched_is_named_by_its_locus_not_as_a_range() {
        let data = tempfile::tempdir().unwrap();
        let mut numbered = document("cat:numbered", "Numbered", &["First.", "Second.", "Third."]);
        for (section, locus) in numbered.sections.iter_mut().zip(["875", "877", "878"]) {
            section.locus = locus.into();
        }
        CorpusWriter::open(data.path())
            .unwrap()
            .upsert([numbered])
            .unwrap();
        let skill = DocumentFetch::new(Arc::new(Corpus::open(data.path()).unwrap()));
        let one = skill
            .run(SkillRequest::from_text(
                "cat:numbered#877",
                chrono::Utc::now(),
            ))
            .await
            .unwrap();
        assert!(
            one.text
                .contains("\nSection [877], number 2 of the 3 sections.\n\n[877]\nSecond."),
            "{}",
            one.text
        );
        assert!(!one.text.contains(" to "), "{}", one.text);
        let two = skill
            .run(with_data(
                "",
                json!({"id": "cat:numbered", "offset": 1, "limit": 2}),
            ))
            .await
            .unwrap();
        assert!(
            two.text
                .contains("Sections [877] to [878], numbers 2 to 3 of the 3 sections."),
            "{}",
            two.text
        );
    }

    #[tokio::test]
    async fn fetch_pages_through_sections() {
        let (_data, corpus) = corpus();
        let skill = DocumentFetch::new(corpus);
        let id = "mag:gregory-exemplar/de-opificibus-1902";
        let output = skill
            .run(SkillRequest::from_text(
                format!("please fetch {id}"),
                chrono::Utc::now(),
            ))
            .await
            .unwrap();
        assert_eq!(output.artifact_name, "document");
        assert_eq!(output.data["id"], id);
        assert_eq!(output.data["total_sections"], 120);
        assert_eq!(
            output.data["sections"].as_array().unwrap().len(),
            DEFAULT_FETCH_LIMIT
        );
        assert_eq!(output.data["next_offset"], 50);
        assert!(
            output
                .text
                .starts_with("De Opificibus — Gregory Exemplar, 1902-06-01, Acta 4, 10")
        );
        assert!(output.text.contains("fetch again with offset 50"));

        let last = skill
            .run(with_data("", json!({"id": id, "offset": 100, "limit": 30})))
            .await
            .unwrap();
        assert_eq!(last.data["sections"].as_array().unwrap().len(), 20);
        assert_eq!(last.data["sections"][0]["locus"], "101");
        assert_eq!(last.data["next_offset"], Value::Null);
        assert!(last.data["sections"][0].get("heading").is_none());
    }

    #[tokio::test]
    async fn fetch_one_section_by_locus() {
        let (_data, corpus) = corpus();
        let skill = DocumentFetch::new(corpus);
        let output = skill
            .run(SkillRequest::from_text(
                "mag:gregory-exemplar/de-opificibus-1902#7",
                chrono::Utc::now(),
            ))
            .await
            .unwrap();
        let sections = output.data["sections"].as_array().unwrap();
        assert_eq!(sections.len(), 1);
        assert_eq!(
            sections[0]["text"],
            "The just wage of the worker is owed in justice."
        );
        assert_eq!(output.data["offset"], 6);
        assert!(output.text.contains("[7]\nThe just wage"));

        let message = failure(
            skill
                .run(SkillRequest::from_text(
                    "mag:gregory-exemplar/on-hope-1903#9",
                    chrono::Utc::now(),
                ))
                .await,
        );
        assert!(
            message.contains("no section `9`") && message.contains("from `1` to `2`"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn fetch_unknown_ids_suggest_close_ones() {
        let (_data, corpus) = corpus();
        let skill = DocumentFetch::new(corpus);
        let message = failure(
            skill
                .run(SkillRequest::from_text(
                    "mag:gregory-exemplar/on-hope",
                    chrono::Utc::now(),
                ))
                .await,
        );
        assert!(message.starts_with("No document has the id `mag:gregory-exemplar/on-hope`. Did you mean: `mag:gregory-exemplar/on-hope-1903` (On Hope)"), "{message}");
        let message = failure(
            skill
                .run(SkillRequest::from_text("", chrono::Utc::now()))
                .await,
        );
        assert!(message.contains("e.g."), "{message}");
        let message = failure(
            DocumentFetch::new(Arc::new(Corpus::empty()))
                .run(SkillRequest::from_text(
                    "cat:baltimore-1",
                    chrono::Utc::now(),
                ))
                .await,
        );
        assert!(message.contains("empty"), "{message}");
    }

    #[tokio::test]
    async fn fetch_of_an_id_like_no_other_names_ids_that_exist() {
        let (_data, corpus) = corpus();
        let message = failure(
            DocumentFetch::new(corpus)
                .run(SkillRequest::from_text("zz:qqqq", chrono::Utc::now()))
                .await,
        );
        assert!(
            message.contains("`mag:gregory-exemplar/") && !message.contains("cat:baltimore-1"),
            "{message}"
        );
    }
}
