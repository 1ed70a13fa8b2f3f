//! Turning a user's query into a tantivy query, running it, and shaping the hits.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use serde::{Deserialize, Serialize};
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::snippet::{SnippetGenerator, collapse_overlapped_ranges};
use tantivy::{DocAddress, Searcher, SegmentReader, TantivyDocument, Term};

use crate::analysis::{analyse, index_analyser, plain_analyser, query_analyser};
use crate::index::{Fields, normalise_keyword};
use crate::names::saint_names;
use crate::store::CatalogEntry;
use crate::{CorpusError, verses, wordings};

/// Largest page a search may ask for.
pub const MAX_LIMIT: usize = 50;
/// Page size when the caller gives none.
pub const DEFAULT_LIMIT: usize = 10;
/// Deepest offset accepted: past it, results are noise and collecting them costs memory.
pub const MAX_OFFSET: usize = 10_000;
/// Longest snippet, in characters, before the ellipses.
const SNIPPET_CHARS: usize = 240;
/// Highlight markers: Markdown bold, readable as plain text and rendered by most clients.
pub const HIGHLIGHT_OPEN: &str = "**";
/// Closing highlight marker.
pub const HIGHLIGHT_CLOSE: &str = "**";

const TITLE_BOOST: f32 = 0.5;
const HEADING_BOOST: f32 = 1.0;
const TEXT_BOOST: f32 = 1.0;

/// A search as the skills and the CLI ask for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRequest {
    /// Free text; words in `"…"` (or `“…”`, `«…»`) must appear as a phrase.
    pub query: String,
    /// Hits per page, 1 to [`MAX_LIMIT`].
    pub limit: usize,
    /// Hits to skip, for paging.
    pub offset: usize,
    /// Restrictions on the documents searched.
    pub filters: SearchFilters,
}

impl SearchRequest {
    /// A first page of [`DEFAULT_LIMIT`] hits with no filters: the common case.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            limit: DEFAULT_LIMIT,
            offset: 0,
            filters: SearchFilters::default(),
        }
    }
}

/// Restrictions on the documents a search looks at; all given filters must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchFilters {
    /// Document type, compared case-insensitively (`encyclical`, `catechism`, …).
    pub doc_type: Option<String>,
    /// Words of the author's name, in order (`leo` matches "Leo XIII").
    pub author: Option<String>,
    /// Earliest year, inclusive; undated documents are then excluded.
    pub year_from: Option<i32>,
    /// Latest year, inclusive; undated documents are then excluded.
    pub year_to: Option<i32>,
    /// ISO 639-1 language code.
    pub language: Option<String>,
}

/// One page of hits and how many there are in all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    /// Sections matching the query and filters, over all pages.
    pub total: usize,
    /// This page, best first; equal scores are ordered by document id, then reading order.
    pub hits: Vec<Hit>,
}

/// A matching section with what a client needs to show and cite it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// `doc_id#locus`, accepted by `document_fetch`.
    pub id: String,
    /// The document's id.
    pub doc_id: String,
    /// The section's locus.
    pub locus: String,
    /// The document's title.
    pub title: String,
    /// The document's author.
    pub author: Option<String>,
    /// The document's year.
    pub year: Option<i32>,
    /// The document's type.
    #[serde(rename = "type")]
    pub doc_type: String,
    /// The document's printed reference.
    pub reference: Option<String>,
    /// The section's heading.
    pub heading: Option<String>,
    /// An excerpt around the matches, with matched words between `**`.
    pub snippet: String,
    /// The whole section text, for quoting and citing.
    pub text: String,
    /// BM25 relevance, or in hybrid mode the fused reciprocal-rank score; only comparable
    /// within one search.
    pub score: f32,
    /// Where the document can be read online.
    pub source_url: Option<String>,
}

/// A piece of the user's query.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Words(String),
    Phrase(String),
}

/// Splits a query into loose words and quoted phrases; an unclosed quote counts as loose words.
fn split_query(query: &str) -> Vec<Piece> {
    const OPENING: [char; 3] = ['"', '“', '«'];
    const CLOSING: [char; 3] = ['"', '”', '»'];
    let mut pieces = Vec::new();
    let mut rest = query;
    while let Some(start) = rest.find(OPENING) {
        let quote_len = rest[start..].chars().next().map_or(1, char::len_utf8);
        let after = &rest[start + quote_len..];
        let Some(end) = after.find(CLOSING) else {
            break;
        };
        pieces.push(Piece::Words(rest[..start].to_string()));
        pieces.push(Piece::Phrase(after[..end].to_string()));
        let close_len = after[end..].chars().next().map_or(1, char::len_utf8);
        rest = &after[end + close_len..];
    }
    pieces.push(Piece::Words(rest.to_string()));
    pieces.retain(|p| match p {
        Piece::Words(w) | Piece::Phrase(w) => !w.trim().is_empty(),
    });
    pieces
}

/// True when the query quotes a phrase, which every hit must then contain.
#[cfg(feature = "embeddings")]
pub(crate) fn has_phrase(query: &str) -> bool {
    split_query(query)
        .iter()
        .any(|piece| matches!(piece, Piece::Phrase(_)))
}

fn boosted(query: Box<dyn Query>, boost: f32) -> Box<dyn Query> {
    if (boost - 1.0).abs() < f32::EPSILON {
        query
    } else {
        Box::new(BoostQuery::new(query, boost))
    }
}

/// Whole-query proximity: the words of the query close together, as the reader wrote them.
const PROXIMITY_BOOST: f32 = 2.0;
/// Two neighbouring words of the query close together ("real presence", "original sin").
const PAIR_BOOST: f32 = 1.0;
/// How far apart (in words) the words of a proximity boost may be.
const PROXIMITY_SLOP: u32 = 2;
/// Words of a query looked at for proximity boosts: enough for any question, bounded in cost.
const PROXIMITY_WORDS: usize = 12;
/// A saint's name written as the query names him ("St. Joseph").
const NAME_BOOST: f32 = 3.0;
/// The Douay-Rheims words of a well-known verse the query quotes in a modern wording.
const VERSE_BOOST: f32 = 8.0;
/// The older texts' words for a modern wording of the query ("Holy Ghost" for "Holy Spirit").
const OLDER_WORDING_BOOST: f32 = 2.0;

/// The scoring part of a search: loose words may match (BM25 over all of them), phrases must.
/// Boosts reorder what the words found: the words close together, a saint's name as a name;
/// and two find sections in other words: the Douay-Rheims wording of a quoted famous verse, and
/// the older texts' words for a modern wording.
fn text_query(fields: &Fields, query: &str) -> Result<Box<dyn Query>, CorpusError> {
    let named = saint_names(query);
    let pieces = split_query(&named.text);
    let words: String = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Words(w) => Some(w.as_str()),
            Piece::Phrase(_) => None,
        })
        .collect::<Vec<_>>()
        .join(" ");

    let word_terms = word_terms(fields, &words);
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    if !word_terms.is_empty() {
        let mut should: Vec<(Occur, Box<dyn Query>)> = word_terms
            .into_iter()
            .map(|(boost, term)| {
                let query: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, boosted(query, f32::from_bits(boost)))
            })
            .collect();
        should.extend(proximity_boosts(fields, &words));
        for name in &named.names {
            for title in ["st", "saint"] {
                if let Some(query) = phrase_query(fields, &format!("{title} {name}")) {
                    should.push((Occur::Should, boosted(query, NAME_BOOST)));
                }
            }
        }
        for wording in verses::douay_wordings(query) {
            if let Some(query) = phrase_query(fields, wording) {
                should.push((Occur::Should, boosted(query, VERSE_BOOST)));
            }
        }
        for wording in wordings::older_wordings(&words) {
            if let Some(query) = phrase_query(fields, wording) {
                should.push((Occur::Should, boosted(query, OLDER_WORDING_BOOST)));
            }
        }
        clauses.push((Occur::Should, Box::new(BooleanQuery::new(should))));
    }
    for piece in &pieces {
        if let Piece::Phrase(phrase) = piece
            && let Some(query) = phrase_query(fields, phrase)
        {
            clauses.push((Occur::Must, query));
        }
    }
    if clauses.is_empty() {
        return Err(CorpusError::NoSearchTerms);
    }
    if clauses.len() == 1 && clauses[0].0 == Occur::Should {
        return Ok(clauses.remove(0).1);
    }
    Ok(Box::new(BooleanQuery::new(clauses)))
}

/// Sloppy phrase queries over the loose words, in every language's text and heading fields:
/// all the words together, and each pair of neighbouring meaningful words.
fn proximity_boosts(fields: &Fields, words: &str) -> Vec<(Occur, Box<dyn Query>)> {
    let mut boosts: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (key, language_fields) in fields.all_languages() {
        let mut all = analyse(&mut index_analyser(key), words);
        all.truncate(PROXIMITY_WORDS);
        let mut meaningful = analyse(&mut query_analyser(key), words);
        meaningful.truncate(PROXIMITY_WORDS);
        for field in [language_fields.text, language_fields.heading] {
            if all.len() >= 2 {
                boosts.push((
                    Occur::Should,
                    boosted(sloppy_phrase(field, &all), PROXIMITY_BOOST),
                ));
            }
            if meaningful.len() >= 2 {
                for pair in meaningful.windows(2) {
                    boosts.push((
                        Occur::Should,
                        boosted(sloppy_phrase(field, pair), PAIR_BOOST),
                    ));
                }
            }
        }
    }
    boosts
}

/// A phrase of at least two terms whose words may stand [`PROXIMITY_SLOP`] words apart.
fn sloppy_phrase(field: Field, tokens: &[(usize, String)]) -> Box<dyn Query> {
    let first = tokens.first().map_or(0, |(position, _)| *position);
    let mut phrase = PhraseQuery::new_with_offset(
        tokens
            .iter()
            .map(|(position, text)| (position - first, Term::from_field_text(field, text)))
            .collect(),
    );
    phrase.set_slop(PROXIMITY_SLOP);
    Box::new(phrase)
}

/// The (boost bits, term) pairs of the loose words, for every language; boosts are kept as bits
/// so the set can deduplicate them. A language whose stop list removes every word ("who is he")
/// searches those words rather than nothing.
fn word_terms(fields: &Fields, words: &str) -> BTreeSet<(u32, Term)> {
    let mut terms = BTreeSet::new();
    if words.trim().is_empty() {
        return terms;
    }
    for (key, language_fields) in fields.all_languages() {
        let mut tokens = analyse(&mut query_analyser(key), words);
        if tokens.is_empty() {
            tokens = analyse(&mut index_analyser(key), words);
        }
        for (_, token) in tokens {
            for (field, boost) in [
                (language_fields.text, TEXT_BOOST),
                (language_fields.heading, HEADING_BOOST),
                (language_fields.title, TITLE_BOOST),
            ] {
                terms.insert((boost.to_bits(), Term::from_field_text(field, &token)));
            }
        }
    }
    terms
}

fn phrase_query(fields: &Fields, phrase: &str) -> Option<Box<dyn Query>> {
    let mut alternatives: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (key, language_fields) in fields.all_languages() {
        let tokens = analyse(&mut index_analyser(key), phrase);
        if tokens.is_empty() {
            continue;
        }
        for (field, boost) in [
            (language_fields.text, TEXT_BOOST),
            (language_fields.heading, HEADING_BOOST),
            (language_fields.title, TITLE_BOOST),
        ] {
            let query = field_phrase(field, &tokens);
            alternatives.push((Occur::Should, boosted(query, boost)));
        }
    }
    (!alternatives.is_empty()).then(|| Box::new(BooleanQuery::new(alternatives)) as Box<dyn Query>)
}

fn field_phrase(field: Field, tokens: &[(usize, String)]) -> Box<dyn Query> {
    match tokens {
        [(_, single)] => Box::new(TermQuery::new(
            Term::from_field_text(field, single),
            IndexRecordOption::WithFreqs,
        )),
        _ => {
            let first = tokens.first().map_or(0, |(position, _)| *position);
            Box::new(PhraseQuery::new_with_offset(
                tokens
                    .iter()
                    .map(|(position, text)| (position - first, Term::from_field_text(field, text)))
                    .collect(),
            ))
        }
    }
}

fn filter_queries(
    fields: &Fields,
    filters: &SearchFilters,
) -> Result<Vec<Box<dyn Query>>, CorpusError> {
    let mut queries: Vec<Box<dyn Query>> = Vec::new();
    let present = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    if let Some(doc_type) = present(&filters.doc_type) {
        queries.push(Box::new(TermQuery::new(
            Term::from_field_text(fields.doc_type, &normalise_keyword(&doc_type)),
            IndexRecordOption::Basic,
        )));
    }
    if let Some(language) = present(&filters.language) {
        queries.push(Box::new(TermQuery::new(
            Term::from_field_text(fields.language, &language.to_lowercase()),
            IndexRecordOption::Basic,
        )));
    }
    if let Some(author) = present(&filters.author) {
        let tokens = analyse(&mut plain_analyser(), &author);
        if tokens.is_empty() {
            return Err(CorpusError::InvalidRequest(format!(
                "the author filter `{author}` has no letters or digits"
            )));
        }
        queries.push(field_phrase(fields.author, &tokens));
    }
    if let (Some(from), Some(to)) = (filters.year_from, filters.year_to)
        && from > to
    {
        return Err(CorpusError::InvalidRequest(format!(
            "year_from ({from}) is after year_to ({to})"
        )));
    }
    if filters.year_from.is_some() || filters.year_to.is_some() {
        let bound = |year: Option<i32>| match year {
            Some(year) => Bound::Included(Term::from_field_i64(fields.year, i64::from(year))),
            None => Bound::Unbounded,
        };
        queries.push(Box::new(RangeQuery::new(
            bound(filters.year_from),
            bound(filters.year_to),
        )));
    }
    Ok(queries
        .into_iter()
        .map(|q| Box::new(ConstScoreQuery::new(q, 0.0)) as Box<dyn Query>)
        .collect())
}

/// Checks the paging of a request, so that bad input is an error rather than a panic.
pub(crate) fn check_paging(request: &SearchRequest) -> Result<(), CorpusError> {
    if !(1..=MAX_LIMIT).contains(&request.limit) {
        return Err(CorpusError::InvalidRequest(format!(
            "limit must be between 1 and {MAX_LIMIT}, not {}",
            request.limit
        )));
    }
    if request.offset > MAX_OFFSET {
        return Err(CorpusError::InvalidRequest(format!(
            "offset must be at most {MAX_OFFSET}, not {}",
            request.offset
        )));
    }
    Ok(())
}

/// The full query (text and filters) of a request.
pub(crate) fn build_query(
    fields: &Fields,
    request: &SearchRequest,
) -> Result<Box<dyn Query>, CorpusError> {
    let text = text_query(fields, &request.query)?;
    let filters = filter_queries(fields, &request.filters)?;
    if filters.is_empty() {
        return Ok(text);
    }
    let mut clauses = vec![(Occur::Must, text)];
    clauses.extend(filters.into_iter().map(|f| (Occur::Must, f)));
    Ok(Box::new(BooleanQuery::new(clauses)))
}

/// The ordering of every search: score, then document id, then reading order (the ordinal).
fn top_docs(
    limit: usize,
    offset: usize,
) -> impl tantivy::collector::Collector<Fruit = Vec<((f32, Reverse<u64>), DocAddress)>> {
    TopDocs::with_limit(limit)
        .and_offset(offset)
        .tweak_score(|segment: &SegmentReader| {
            let ordinals = ordinal_column(segment);
            move |doc, score| {
                let ordinal = ordinals.as_ref().map_or(u64::MAX, |c| c.get_val(doc));
                (score, Reverse(ordinal))
            }
        })
}

fn ordinal_column(
    segment: &SegmentReader,
) -> Option<std::sync::Arc<dyn tantivy::columnar::ColumnValues<u64>>> {
    segment
        .fast_fields()
        .u64("ordinal")
        .ok()
        .map(|column| column.first_or_default_col(u64::MAX))
}

/// Runs a query and returns one page, ordered by score, then document id, then reading order.
pub(crate) fn run<'a>(
    searcher: &Searcher,
    fields: &Fields,
    query: &dyn Query,
    request: &SearchRequest,
    catalog: &dyn Fn(&str) -> Option<&'a CatalogEntry>,
) -> Result<SearchResults, CorpusError> {
    let (total, page) =
        searcher.search(query, &(Count, top_docs(request.limit, request.offset)))?;
    let mut hits = HitMaker::new(searcher, fields, query, catalog);
    let hits = page
        .into_iter()
        .map(|((score, _), address)| hits.make(address, score))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SearchResults { total, hits })
}

/// Builds [`Hit`]s from index entries, with snippets highlighted for one query.
pub(crate) struct HitMaker<'s, 'a> {
    searcher: &'s Searcher,
    fields: &'s Fields,
    query: &'s dyn Query,
    catalog: &'s dyn Fn(&str) -> Option<&'a CatalogEntry>,
    snippet_generators: HashMap<Field, SnippetGenerator>,
}

impl<'s, 'a> HitMaker<'s, 'a> {
    pub fn new(
        searcher: &'s Searcher,
        fields: &'s Fields,
        query: &'s dyn Query,
        catalog: &'s dyn Fn(&str) -> Option<&'a CatalogEntry>,
    ) -> Self {
        HitMaker {
            searcher,
            fields,
            query,
            catalog,
            snippet_generators: HashMap::new(),
        }
    }

    /// The hit for the section at `address`, with the given score.
    pub fn make(&mut self, address: DocAddress, score: f32) -> Result<Hit, CorpusError> {
        let fields = self.fields;
        let unit: TantivyDocument = self.searcher.doc(address)?;
        let stored = |field: Field| {
            unit.get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let doc_id = stored(fields.doc_id).unwrap_or_default();
        let locus = stored(fields.locus).unwrap_or_default();
        let text = stored(fields.stored_text).unwrap_or_default();
        let Some(entry) = (self.catalog)(&doc_id) else {
            return Err(CorpusError::Inconsistent(format!(
                "the index has `{doc_id}` but the catalog does not"
            )));
        };
        let text_field = fields.for_language(&entry.language).text;
        let generator = match self.snippet_generators.entry(text_field) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut generator =
                    SnippetGenerator::create(self.searcher, self.query, text_field)?;
                generator.set_max_num_chars(SNIPPET_CHARS);
                v.insert(generator)
            }
        };
        Ok(Hit {
            id: format!("{doc_id}#{locus}"),
            snippet: snippet(generator, &text),
            title: entry.title.clone(),
            author: entry.author.clone(),
            year: entry.date.as_deref().and_then(crate::model::parse_year),
            doc_type: entry.doc_type.clone(),
            reference: entry.reference.clone(),
            source_url: entry.source_url.clone(),
            heading: stored(fields.stored_heading),
            doc_id,
            locus,
            text,
            score,
        })
    }
}

/// The best `depth` matches of a query as (ordinal, address), best first, and the number of
/// matches in all: the BM25 list that hybrid search fuses.
#[cfg(feature = "embeddings")]
pub(crate) fn ranked_ordinals(
    searcher: &Searcher,
    query: &dyn Query,
    depth: usize,
) -> Result<(usize, Vec<(usize, DocAddress)>), CorpusError> {
    let (total, page) = searcher.search(query, &(Count, top_docs(depth, 0)))?;
    let ranked = page
        .into_iter()
        .filter_map(|((_, Reverse(ordinal)), address)| {
            usize::try_from(ordinal).ok().map(|o| (o, address))
        })
        .collect();
    Ok((total, ranked))
}

/// Which ordinals pass the request's filters (`None` when there are no filters): the vector
/// search then looks only at those, so filters mean the same in both signals.
#[cfg(feature = "embeddings")]
pub(crate) fn allowed_ordinals(
    searcher: &Searcher,
    fields: &Fields,
    filters: &SearchFilters,
    sections: usize,
) -> Result<Option<Vec<bool>>, CorpusError> {
    let filters = filter_queries(fields, filters)?;
    if filters.is_empty() {
        return Ok(None);
    }
    let mut clauses: Vec<(Occur, Box<dyn Query>)> =
        vec![(Occur::Must, Box::new(tantivy::query::AllQuery))];
    clauses.extend(filters.into_iter().map(|f| (Occur::Must, f)));
    let matching = searcher.search(
        &BooleanQuery::new(clauses),
        &tantivy::collector::DocSetCollector,
    )?;
    let mut allowed = vec![false; sections];
    let mut columns: HashMap<
        u32,
        Option<std::sync::Arc<dyn tantivy::columnar::ColumnValues<u64>>>,
    > = HashMap::new();
    for address in matching {
        let column = columns
            .entry(address.segment_ord)
            .or_insert_with(|| ordinal_column(searcher.segment_reader(address.segment_ord)));
        if let Some(column) = column
            && let Ok(ordinal) = usize::try_from(column.get_val(address.doc_id))
            && let Some(slot) = allowed.get_mut(ordinal)
        {
            *slot = true;
        }
    }
    Ok(Some(allowed))
}

/// Where the section `doc_id#locus` is in the index.
#[cfg(feature = "embeddings")]
pub(crate) fn address_of(
    searcher: &Searcher,
    fields: &Fields,
    doc_id: &str,
    locus: &str,
) -> Result<Option<DocAddress>, CorpusError> {
    let query = BooleanQuery::new(vec![
        (
            Occur::Must,
            Box::new(TermQuery::new(
                Term::from_field_text(fields.doc_id, doc_id),
                IndexRecordOption::Basic,
            )) as Box<dyn Query>,
        ),
        (
            Occur::Must,
            Box::new(TermQuery::new(
                Term::from_field_text(fields.locus, locus),
                IndexRecordOption::Basic,
            )),
        ),
    ]);
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    Ok(found.into_iter().next().map(|(_, address)| address))
}

/// The best fragment with matches in bold; the opening of the text when nothing matched in it
/// (the match was in the title or heading).
fn snippet(generator: &SnippetGenerator, text: &str) -> String {
    let snippet = generator.snippet(text);
    if snippet.is_empty() {
        return opening(text, SNIPPET_CHARS);
    }
    let fragment = snippet.fragment();
    let mut out = String::new();
    if snippet.fragment_range().start > 0 {
        out.push('…');
    }
    let mut from = 0;
    for range in collapse_overlapped_ranges(snippet.highlighted()) {
        out.push_str(&fragment[from..range.start]);
        out.push_str(HIGHLIGHT_OPEN);
        out.push_str(&fragment[range.clone()]);
        out.push_str(HIGHLIGHT_CLOSE);
        from = range.end;
    }
    out.push_str(&fragment[from..]);
    if snippet.fragment_range().end < text.len() {
        out.push('…');
    }
    out
}

/// The first `max_chars` characters of a text, cut at a word boundary.
pub(crate) fn opening(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(max_chars).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(space) if space > 0 => &cut[..space],
        _ => &cut,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_make_phrases_and_stray_quotes_are_words() {
        assert_eq!(
            split_query(r#"grace "free will" «vie éternelle» end"#),
            vec![
                Piece::Words("grace ".into()),
                Piece::Phrase("free will".into()),
                Piece::Words(" ".into()),
                Piece::Phrase("vie éternelle".into()),
                Piece::Words(" end".into()),
            ]
            .into_iter()
            .filter(|p| !matches!(p, Piece::Words(w) if w.trim().is_empty()))
            .collect::<Vec<_>>()
        );
        assert_eq!(
            split_query(r#"what is "grace?"#),
            vec![Piece::Words(r#"what is "grace?"#.into())]
        );
        assert!(split_query("  ").is_empty());
    }

    #[test]
    fn no_searchable_terms_is_an_error() {
        let (_, fields) = crate::index::schema();
        assert!(matches!(
            text_query(&fields, "?!  ...").map(|_| ()),
            Err(CorpusError::NoSearchTerms)
        ));
        assert!(text_query(&fields, "what is it").is_ok());
        assert!(text_query(&fields, "AND OR NOT ( title:").is_ok());
    }

    #[test]
    fn openings_cut_at_words() {
        assert_eq!(opening("short", 10), "short");
        assert_eq!(opening("one two three four", 10), "one two…");
    }
}
