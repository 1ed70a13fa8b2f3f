//! End-to-end behaviour of the corpus: imports, storage, search and lookups, over a small corpus
//! of invented documents in English, Latin and French.

use std::fs;
use std::path::{Path, PathBuf};

use corpus::{
    Corpus, CorpusError, CorpusWriter, Document, SearchFilters, SearchMode, SearchRequest, Section,
};

fn section(locus: &str, text: &str) -> Section {
    Section {
        locus: locus.into(),
        heading: None,
        text: text.into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn document(
    id: &str,
    title: &str,
    author: Option<&str>,
    date: Option<&str>,
    doc_type: &str,
    language: &str,
    sections: Vec<Section>,
) -> Document {
    Document {
        id: id.into(),
        title: title.into(),
        author: author.map(Into::into),
        date: date.map(Into::into),
        doc_type: doc_type.into(),
        language: language.into(),
        reference: None,
        source_url: None,
        sections,
    }
}

/// The fixture corpus: invented texts, small enough to reason about every hit.
fn fixture() -> Vec<Document> {
    let mut on_prayer = document(
        "mag:pius-exemplar/on-prayer-1910",
        "On Prayer",
        Some("Pius Exemplar"),
        Some("1910-03-01"),
        "encyclical",
        "en",
        vec![
            section(
                "1",
                "Prayer is the lifting up of the mind and heart to God, as the old teachers said.",
            ),
            section(
                "2",
                "The prayers of the faithful rise like incense before the throne of mercy.",
            ),
            section(
                "3",
                "Grace does not destroy nature but heals it, and the kingdom of heaven is near.",
            ),
        ],
    );
    on_prayer.reference = Some("Acta Exempli 2 (1910) 1-9".into());
    on_prayer.source_url = Some("https://example.org/on-prayer".into());
    vec![
        on_prayer,
        document(
            "cat:little-catechism",
            "A Little Catechism",
            Some("Committee of Examples"),
            Some("1885"),
            "catechism",
            "en",
            vec![
                Section {
                    locus: "q1".into(),
                    heading: Some("Of grace".into()),
                    text: "What is grace? Grace is a gift of God freely given for our salvation."
                        .into(),
                },
                section(
                    "q2",
                    "Where is heaven? The kingdom of heaven is the joy of the saints with God.",
                ),
                section(
                    "q3",
                    "What is a sacrament? An outward sign instituted to give grace.",
                ),
                section(
                    "q4",
                    "Must we love our neighbour? Yes: heaven and kingdom alike are promised to the meek.",
                ),
            ],
        ),
        document(
            "mag:concilium-exemplum/de-caelo-1563",
            "De Caelo et Gratia",
            Some("Concilium Exemplum"),
            Some("1563-12-04"),
            "council document",
            "la",
            vec![
                section("1", "Cælum et terra transibunt, verba autem Dei manent."),
                section("2", "Gratia Dei praevenit voluntatem hominis."),
                section("3", "Regnum caelorum patet iustis."),
            ],
        ),
        document(
            "mag:pie-exemple/sur-la-priere-1925",
            "Sur la prière",
            Some("Pie Exemple"),
            Some("1925"),
            "encyclical",
            "fr",
            vec![
                section(
                    "1",
                    "Les prières des fidèles montent vers Dieu comme l'encens.",
                ),
                section("2", "La grâce de Dieu précède toute bonne œuvre."),
            ],
        ),
    ]
}

fn corpus_with(documents: Vec<Document>) -> (tempfile::TempDir, Corpus) {
    let data = tempfile::tempdir().unwrap();
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(documents)
        .unwrap();
    let corpus = Corpus::open(data.path()).unwrap();
    (data, corpus)
}

fn search(corpus: &Corpus, query: &str) -> Vec<String> {
    corpus
        .search(&SearchRequest::new(query))
        .unwrap()
        .hits
        .into_iter()
        .map(|hit| hit.id)
        .collect()
}

fn search_with(corpus: &Corpus, query: &str, filters: SearchFilters) -> Vec<String> {
    let mut request = SearchRequest::new(query);
    request.filters = filters;
    corpus
        .search(&request)
        .unwrap()
        .hits
        .into_iter()
        .map(|hit| hit.id)
        .collect()
}

fn jsonl(documents: &[Document]) -> String {
    documents
        .iter()
        .map(|d| serde_json::to_string(d).unwrap() + "\n")
        .collect()
}

#[test]
fn a_missing_corpus_is_empty_and_a_broken_one_is_an_error() {
    let data = tempfile::tempdir().unwrap();
    let corpus = Corpus::open(data.path()).unwrap();
    assert!(corpus.is_empty());
    assert_eq!(corpus.stats().documents, 0);
    let results = corpus.search(&SearchRequest::new("grace")).unwrap();
    assert_eq!(results.total, 0);
    assert!(matches!(
        corpus.search(&SearchRequest::new("?!")),
        Err(CorpusError::NoSearchTerms)
    ));
    assert_eq!(corpus.document("cat:little-catechism").unwrap(), None);

    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(fixture())
        .unwrap();
    let generation = fs::read_to_string(data.path().join("corpus/CURRENT")).unwrap();
    fs::write(
        data.path()
            .join("corpus")
            .join(generation.trim())
            .join("catalog.json"),
        "{not json",
    )
    .unwrap();
    let err = Corpus::open(data.path()).err().unwrap();
    assert!(matches!(err, CorpusError::Corrupt { .. }), "{err}");
}

#[test]
fn readers_write_nothing() {
    let (data, _) = corpus_with(fixture());
    let generation = fs::read_to_string(data.path().join("corpus/CURRENT")).unwrap();
    let index_dir = data
        .path()
        .join("corpus")
        .join(generation.trim())
        .join("index");
    let listing = || {
        let mut names: Vec<String> = fs::read_dir(&index_dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    for name in listing() {
        if name.ends_with(".lock") {
            fs::remove_file(index_dir.join(name)).unwrap();
        }
    }
    let before = listing();
    let corpus = Corpus::open(data.path()).unwrap();
    assert!(!search(&corpus, "grace").is_empty());
    assert!(corpus.document("cat:little-catechism").unwrap().is_some());
    assert_eq!(listing(), before, "opening and searching created no file");
}

#[test]
fn import_reports_bad_records_by_file_and_line_and_keeps_the_good_ones() {
    let data = tempfile::tempdir().unwrap();
    let sources = tempfile::tempdir().unwrap();
    let docs = fixture();
    let mut duplicate_loci = docs[1].clone();
    duplicate_loci.id = "cat:broken".into();
    duplicate_loci.sections[1].locus = "q1".into();
    let lines = [
        serde_json::to_string(&docs[0]).unwrap(),
        "{\"id\": \"cat:half\", ".to_string(),
        String::new(),
        serde_json::to_string(&duplicate_loci).unwrap(),
        serde_json::to_string(&docs[2]).unwrap(),
        serde_json::to_string(&docs[0]).unwrap(),
    ];
    let file = sources.path().join("docs.jsonl");
    fs::write(&file, lines.join("\n")).unwrap();
    let bad_markdown = sources.path().join("bad.md");
    fs::write(
        &bad_markdown,
        "---\nid: not an id\ntitle: X\ntype: t\nlanguage: en\n---\n# 1\nText\n",
    )
    .unwrap();

    let report = CorpusWriter::open(data.path())
        .unwrap()
        .import(&[
            sources.path().to_path_buf(),
            PathBuf::from("/no/such/file.jsonl"),
        ])
        .unwrap();
    assert_eq!(report.files, 2);
    assert_eq!(report.valid_records, 2);
    let summary = report.summary.clone().unwrap();
    assert_eq!((summary.added, summary.documents), (2, 2));

    let lines_of = |path: &Path| -> Vec<Option<usize>> {
        report
            .issues
            .iter()
            .filter(|i| i.file == path)
            .map(|i| i.line)
            .collect()
    };
    assert_eq!(lines_of(&file), vec![Some(2), Some(4), Some(6)]);
    assert_eq!(lines_of(&bad_markdown).len(), 1);
    assert_eq!(lines_of(Path::new("/no/such/file.jsonl")), vec![None]);
    let shown: Vec<String> = report.issues.iter().map(|i| i.to_string()).collect();
    assert!(
        shown.iter().any(|s| s
            .ends_with(":4: document `cat:broken` is invalid: locus `q1` appears more than once")),
        "{shown:?}"
    );

    let corpus = Corpus::open(data.path()).unwrap();
    assert_eq!(corpus.stats().documents, 2);
    assert!(corpus.document("cat:broken").unwrap().is_none());
    assert_eq!(
        corpus
            .document("mag:pius-exemplar/on-prayer-1910")
            .unwrap()
            .unwrap(),
        docs[0]
    );
}

#[test]
fn reimport_is_idempotent_and_replaces_by_id() {
    let data = tempfile::tempdir().unwrap();
    let sources = tempfile::tempdir().unwrap();
    let file = sources.path().join("docs.jsonl");
    fs::write(&file, jsonl(&fixture())).unwrap();
    let mut writer = CorpusWriter::open(data.path()).unwrap();
    let first = writer.import(std::slice::from_ref(&file)).unwrap();
    let stats_after_first = Corpus::open(data.path()).unwrap().stats();
    let second = writer.import(std::slice::from_ref(&file)).unwrap();
    let stats_after_second = Corpus::open(data.path()).unwrap().stats();

    assert_eq!(first.summary.unwrap().added, 4);
    let second = second.summary.unwrap();
    assert_eq!((second.added, second.replaced), (0, 4));
    assert_eq!(stats_after_first, stats_after_second);
    assert_eq!(stats_after_second.sections, 12);
    assert_eq!(stats_after_second.by_language.get("la"), Some(&1));
    assert_eq!(stats_after_second.by_type.get("encyclical"), Some(&2));

    let mut changed = fixture()[1].clone();
    changed.sections.truncate(1);
    writer.upsert([changed]).unwrap();
    let corpus = Corpus::open(data.path()).unwrap();
    assert_eq!(corpus.stats().sections, 9);
    assert!(search(&corpus, "sacrament").is_empty());
}

#[test]
fn a_refused_batch_changes_nothing_and_old_readers_keep_working() {
    let (data, before) = corpus_with(fixture());
    let mut bad = fixture()[0].clone();
    bad.id = "mag:nobody/no-year".into();
    let mut good = fixture()[1].clone();
    good.id = "cat:another".into();
    let mut writer = CorpusWriter::open(data.path()).unwrap();
    let err = writer.upsert([good, bad]).unwrap_err();
    assert!(err.to_string().contains("mag:nobody/no-year"), "{err}");
    assert_eq!(Corpus::open(data.path()).unwrap().stats(), before.stats());

    assert!(matches!(
        CorpusWriter::open(data.path()),
        Err(CorpusError::Locked(_))
    ));

    writer.remove("cat:little-catechism").unwrap();
    writer.remove("mag:pie-exemple/sur-la-priere-1925").unwrap();
    // `before` was opened two generations ago and still answers from its snapshot.
    assert_eq!(before.stats().documents, 4);
    assert!(before.document("cat:little-catechism").unwrap().is_some());
    assert!(!search(&before, "sacrament").is_empty());
}

#[test]
fn remove_and_reindex() {
    let (data, _) = corpus_with(fixture());
    let mut writer = CorpusWriter::open(data.path()).unwrap();
    assert!(writer.remove("cat:little-catechism").unwrap());
    assert!(!writer.remove("cat:little-catechism").unwrap());
    assert!(!writer.remove("cat:never-there").unwrap());

    let corpus = Corpus::open(data.path()).unwrap();
    assert_eq!(corpus.stats().documents, 3);
    assert!(corpus.document("cat:little-catechism").unwrap().is_none());
    assert!(search(&corpus, "sacrament").is_empty());
    let before = search(&corpus, "grace heaven");

    let summary = writer.reindex().unwrap();
    assert_eq!((summary.documents, summary.sections), (3, 8));
    let reindexed = Corpus::open(data.path()).unwrap();
    assert_eq!(reindexed.stats(), corpus.stats());
    assert_eq!(search(&reindexed, "grace heaven"), before);
    let generations = fs::read_dir(data.path().join("corpus"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("gen-"))
        .count();
    assert!(generations <= 2, "old generations are cleaned up");
}

#[test]
fn hits_carry_the_section_and_its_document() {
    let (_data, corpus) = corpus_with(fixture());
    let results = corpus.search(&SearchRequest::new("incense")).unwrap();
    assert_eq!(results.total, 1);
    let hit = results
        .hits
        .iter()
        .find(|h| h.doc_id == "mag:pius-exemplar/on-prayer-1910")
        .unwrap();
    assert_eq!(hit.id, "mag:pius-exemplar/on-prayer-1910#2");
    assert_eq!(hit.locus, "2");
    assert_eq!(hit.title, "On Prayer");
    assert_eq!(hit.author.as_deref(), Some("Pius Exemplar"));
    assert_eq!(hit.year, Some(1910));
    assert_eq!(hit.doc_type, "encyclical");
    assert_eq!(hit.reference.as_deref(), Some("Acta Exempli 2 (1910) 1-9"));
    assert_eq!(
        hit.source_url.as_deref(),
        Some("https://example.org/on-prayer")
    );
    assert!(hit.text.starts_with("The prayers of the faithful"));
    assert!(hit.snippet.contains("**incense**"), "{}", hit.snippet);
    assert!(hit.score > 0.0);

    let heading_hit = corpus.search(&SearchRequest::new("grace")).unwrap();
    let q1 = heading_hit
        .hits
        .iter()
        .find(|h| h.id == "cat:little-catechism#q1")
        .unwrap();
    assert_eq!(q1.heading.as_deref(), Some("Of grace"));
}

#[test]
fn user_text_never_fails_to_parse() {
    let (_data, corpus) = corpus_with(fixture());
    for query in [
        "what is grace?",
        "title:grace AND (",
        "grace^2 ~ -nature +heaven",
        "\"unclosed phrase",
        "[1 TO 2]",
    ] {
        assert!(corpus.search(&SearchRequest::new(query)).is_ok(), "{query}");
    }
    let only_function_words = search(&corpus, "what is the");
    assert!(
        only_function_words.contains(&"cat:little-catechism#q1".to_string()),
        "a query of function words still searches them: {only_function_words:?}"
    );
    let hits = search(&corpus, "what is grace?");
    assert!(hits.contains(&"cat:little-catechism#q1".to_string()));
    assert!(
        !hits.contains(&"mag:pius-exemplar/on-prayer-1910#1".to_string()),
        "function words alone do not match: {hits:?}"
    );
}

#[test]
fn stemming_and_folding_per_language() {
    let (_data, corpus) = corpus_with(fixture());
    let prayers = search(&corpus, "prayers");
    assert!(prayers.contains(&"mag:pius-exemplar/on-prayer-1910#1".to_string()));
    assert!(prayers.contains(&"mag:pius-exemplar/on-prayer-1910#2".to_string()));

    let mut caelum = search(&corpus, "caelum");
    caelum.sort();
    assert_eq!(
        caelum,
        vec![
            "mag:concilium-exemplum/de-caelo-1563#1",
            "mag:concilium-exemplum/de-caelo-1563#3",
        ]
    );
    assert_eq!(search(&corpus, "cælum"), search(&corpus, "caelum"));
    assert!(
        search(&corpus, "gratiae").contains(&"mag:concilium-exemplum/de-caelo-1563#2".to_string())
    );

    let priere = search_with(
        &corpus,
        "priere",
        SearchFilters {
            language: Some("fr".into()),
            ..Default::default()
        },
    );
    assert_eq!(priere, vec!["mag:pie-exemple/sur-la-priere-1925#1"]);
    assert!(search(&corpus, "grace").contains(&"mag:pie-exemple/sur-la-priere-1925#2".to_string()));
}

#[test]
fn phrases_must_match_in_order() {
    let (_data, corpus) = corpus_with(fixture());
    let phrase = search(&corpus, "\"kingdom of heaven\"");
    assert_eq!(
        phrase,
        vec![
            "cat:little-catechism#q2",
            "mag:pius-exemplar/on-prayer-1910#3"
        ]
        .into_iter()
        .map(String::from)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|id| phrase.contains(id))
        .collect::<Vec<_>>()
    );
    assert_eq!(phrase.len(), 2);
    let words = search(&corpus, "kingdom heaven");
    assert!(words.contains(&"cat:little-catechism#q4".to_string()));
    assert!(!phrase.contains(&"cat:little-catechism#q4".to_string()));
    let mixed = search(&corpus, "saints \"kingdom of heaven\"");
    assert_eq!(
        mixed.first().map(String::as_str),
        Some("cat:little-catechism#q2")
    );
    assert_eq!(mixed.len(), 2);
}

#[test]
fn filters_restrict_by_type_author_year_and_language() {
    let (_data, corpus) = corpus_with(fixture());
    let by_type = search_with(
        &corpus,
        "grace",
        SearchFilters {
            doc_type: Some("Catechism".into()),
            ..Default::default()
        },
    );
    assert!(!by_type.is_empty());
    assert!(
        by_type
            .iter()
            .all(|id| id.starts_with("cat:little-catechism#"))
    );

    let by_author = search_with(
        &corpus,
        "grace prayer",
        SearchFilters {
            author: Some("pius".into()),
            ..Default::default()
        },
    );
    assert!(!by_author.is_empty());
    assert!(
        by_author
            .iter()
            .all(|id| id.starts_with("mag:pius-exemplar/"))
    );

    let in_years = search_with(
        &corpus,
        "grace gratia grâce",
        SearchFilters {
            year_from: Some(1800),
            year_to: Some(1900),
            ..Default::default()
        },
    );
    assert!(!in_years.is_empty());
    assert!(
        in_years
            .iter()
            .all(|id| id.starts_with("cat:little-catechism#"))
    );

    let before = search_with(
        &corpus,
        "grace gratia grâce",
        SearchFilters {
            year_to: Some(1600),
            ..Default::default()
        },
    );
    assert_eq!(
        before.first().map(String::as_str),
        Some("mag:concilium-exemplum/de-caelo-1563#2"),
        "the text match outranks the title match of the opening section"
    );
    assert!(
        before
            .iter()
            .all(|id| id.starts_with("mag:concilium-exemplum/"))
    );

    let latin = search_with(
        &corpus,
        "dei",
        SearchFilters {
            language: Some("la".into()),
            ..Default::default()
        },
    );
    assert!(!latin.is_empty());
    assert!(
        latin
            .iter()
            .all(|id| id.starts_with("mag:concilium-exemplum/"))
    );

    let mut backwards = SearchRequest::new("grace");
    backwards.filters.year_from = Some(1900);
    backwards.filters.year_to = Some(1800);
    assert!(matches!(
        corpus.search(&backwards),
        Err(CorpusError::InvalidRequest(_))
    ));
}

#[test]
fn pagination_and_stable_order() {
    let many = document(
        "cat:many",
        "Many Sayings",
        None,
        None,
        "commentary",
        "en",
        (1..=25)
            .map(|n| section(&n.to_string(), "Charity is patient and kind."))
            .collect(),
    );
    let twin_b = document(
        "cat:twin-b",
        "Twin",
        None,
        None,
        "commentary",
        "en",
        vec![section("1", "Charity is patient and kind.")],
    );
    let twin_a = document(
        "cat:twin-a",
        "Twin",
        None,
        None,
        "commentary",
        "en",
        twin_b.sections.clone(),
    );
    let (_data, corpus) = corpus_with(vec![twin_b, many, twin_a]);

    let mut request = SearchRequest::new("charity");
    request.limit = 50;
    let all = corpus.search(&request).unwrap();
    assert_eq!(all.total, 27);
    let ids: Vec<String> = all.hits.iter().map(|h| h.id.clone()).collect();
    let mut expected: Vec<String> = (1..=25).map(|n| format!("cat:many#{n}")).collect();
    expected.push("cat:twin-a#1".into());
    expected.push("cat:twin-b#1".into());
    assert_eq!(
        ids, expected,
        "equal scores: by document id, then reading order"
    );

    let mut pages = Vec::new();
    for offset in (0..30).step_by(10) {
        let mut page = SearchRequest::new("charity");
        page.offset = offset;
        let results = corpus.search(&page).unwrap();
        assert_eq!(results.total, 27);
        pages.extend(results.hits.into_iter().map(|h| h.id));
    }
    assert_eq!(pages, expected);

    for limit in [0, 51] {
        let mut bad = SearchRequest::new("charity");
        bad.limit = limit;
        let err = corpus.search(&bad).unwrap_err();
        assert!(err.to_string().contains("between 1 and 50"), "{err}");
    }
}

#[test]
fn lookups_and_suggestions() {
    let (_data, corpus) = corpus_with(fixture());
    let doc = corpus.document("cat:little-catechism").unwrap().unwrap();
    assert_eq!(doc.sections.len(), 4);
    assert_eq!(
        corpus
            .section("cat:little-catechism", "q3")
            .unwrap()
            .unwrap()
            .text,
        "What is a sacrament? An outward sign instituted to give grace."
    );
    assert!(
        corpus
            .section("cat:little-catechism", "q9")
            .unwrap()
            .is_none()
    );
    assert!(corpus.document("cat:little").unwrap().is_none());

    let by_title = corpus.suggest("on prayr", 3);
    assert_eq!(
        by_title.first().map(|(id, _)| id.as_str()),
        Some("mag:pius-exemplar/on-prayer-1910")
    );
    let by_id = corpus.suggest("cat:litle-catechism", 3);
    assert_eq!(
        by_id.first(),
        Some(&(
            "cat:little-catechism".to_string(),
            "A Little Catechism".to_string()
        ))
    );
    assert!(corpus.suggest("zzzzqqq", 3).is_empty());
    assert!(corpus.suggest("caelo", 1).len() <= 1);
}

#[test]
fn markdown_folders_import_with_derived_loci() {
    let data = tempfile::tempdir().unwrap();
    let sources = tempfile::tempdir().unwrap();
    let nested = sources.path().join("council");
    fs::create_dir(&nested).unwrap();
    fs::write(
        nested.join("decree.md"),
        "---\n\
         id: mag:concilium-exemplum/decretum-de-fide-1564\n\
         title: 'Decretum de Fide'\n\
         author: Concilium Exemplum\n\
         date: 1564-01-20\n\
         type: council document\n\
         language: la\n\
         reference: Acta 3, 12\n\
         source_url: https://example.org/decretum\n\
         ---\n\
         Prooemium breve de fide.\n\
         \n\
         # Caput 1. De fide {#c1}\n\
         Fides est fundamentum.\n\
         ### Nota\n\
         Nota de fide.\n\
         ## § 2\n\
         Spes sequitur fidem.\n\
         ## De caritate\n\
         Caritas numquam excidit.\n",
    )
    .unwrap();
    fs::write(sources.path().join("notes.txt"), "ignored in folders").unwrap();
    let report = CorpusWriter::open(data.path())
        .unwrap()
        .import(&[sources.path().to_path_buf()])
        .unwrap();
    assert!(report.issues.is_empty(), "{:?}", report.issues);
    assert_eq!(report.files, 1);

    let corpus = Corpus::open(data.path()).unwrap();
    let doc = corpus
        .document("mag:concilium-exemplum/decretum-de-fide-1564")
        .unwrap()
        .unwrap();
    assert_eq!(doc.title, "Decretum de Fide");
    assert_eq!(doc.reference.as_deref(), Some("Acta 3, 12"));
    let loci: Vec<&str> = doc.sections.iter().map(|s| s.locus.as_str()).collect();
    assert_eq!(loci, ["0", "c1", "2", "3"]);
    assert_eq!(doc.sections[1].heading.as_deref(), Some("Caput 1. De fide"));
    assert!(doc.sections[1].text.contains("Nota de fide."));
    assert_eq!(
        search(&corpus, "caritas"),
        vec!["mag:concilium-exemplum/decretum-de-fide-1564#3"]
    );
}

/// The public-domain reference texts, when this checkout sits beside them.
fn reference_corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/corpus");
    dir.is_dir().then_some(dir)
}

/// Baltimore Catechism No. 1 as one document, a section per question (locus = its number).
fn baltimore(reference: &Path) -> Document {
    let raw: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(reference.join("baltimore-catechism-1/baltimore_catechism.json"))
            .unwrap(),
    )
    .unwrap();
    let mut sections = Vec::new();
    for lesson in raw["lessons"].as_array().unwrap() {
        for question in lesson["questions"].as_array().unwrap() {
            let flat = |key: &str| {
                question[key]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            sections.push(Section {
                locus: question["number"].as_str().unwrap().to_string(),
                heading: lesson["title"].as_str().map(str::to_string),
                text: format!("Q. {} A. {}", flat("question"), flat("answer")),
            });
        }
    }
    document(
        "cat:baltimore-1",
        "Baltimore Catechism No. 1",
        Some("Third Plenary Council of Baltimore"),
        Some("1891"),
        "catechism",
        "en",
        sections,
    )
}

/// The Roman Catechism as one document, a section per heading of any level (locus = position).
fn trent(reference: &Path) -> Document {
    let text = fs::read_to_string(reference.join("catechism-of-trent/Catholic_Catechism_Trent.md"))
        .unwrap();
    let mut sections: Vec<Section> = Vec::new();
    let mut heading: Option<String> = None;
    let mut body = String::new();
    let flush = |heading: &Option<String>, body: &mut String, sections: &mut Vec<Section>| {
        if !body.trim().is_empty() {
            sections.push(Section {
                locus: format!("s{}", sections.len() + 1),
                heading: heading.clone(),
                text: body.trim().to_string(),
            });
        }
        body.clear();
    };
    for line in text.lines() {
        if line.starts_with('#') {
            flush(&heading, &mut body, &mut sections);
            heading = Some(line.trim_start_matches('#').trim().to_string());
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&heading, &mut body, &mut sections);
    document(
        "cat:trent",
        "Catechism of the Council of Trent",
        Some("McHugh and Callan (trans.)"),
        Some("1923"),
        "catechism",
        "en",
        sections,
    )
}

/// How a person would phrase a question, and the Baltimore question numbers that answer it.
const BALTIMORE_QUERIES: &[(&str, &[&str])] = &[
    ("who created the world", &["1"]),
    ("why were we made", &["6"]),
    ("three persons in one God", &["23", "27", "29"]),
    ("what are angels", &["35"]),
    ("sin inherited from Adam", &["47", "45"]),
    ("difference between mortal and venial sin", &["54", "57"]),
    ("meaning of the incarnation", &["69"]),
    ("why did Christ suffer and die", &["83"]),
    ("Christ ascended after forty days", &["91"]),
    ("sanctifying grace", &["105"]),
    ("the virtue of hope", &["108"]),
    ("visible head of the church", &["117"]),
    ("how many sacraments are there", &["137"]),
    ("is baptism needed to be saved", &["154"]),
    ("who may baptize", &["155"]),
    ("how does the bishop confirm", &["168", "167", "170"]),
    ("examination of conscience", &["192"]),
    ("sorrow for sin", &["195"]),
    ("cannot remember how many sins to confess", &["214"]),
    ("plenary indulgence", &["234"]),
    (
        "bread and wine changed into the body and blood",
        &["238", "249", "250", "262"],
    ),
    ("communion received in mortal sin", &["255"]),
    ("is the mass the same sacrifice as the cross", &["265"]),
    ("extreme unction", &["271", "274"]),
    ("sacrament of matrimony", &["282", "285"]),
    ("holy water", &["301"]),
    ("making the sign of the cross", &["295", "296", "294"]),
    ("distractions during prayer", &["309"]),
    ("may we pray to the saints", &["332", "333"]),
    (
        "honoring relics and images",
        &["340", "341", "342", "343", "344"],
    ),
    ("what is a vow", &["350"]),
    ("servile works on Sunday", &["359", "360"]),
    ("must we give back stolen goods", &["376"]),
    ("presumption and despair", &["328", "329"]),
];

/// Questions answered by a section of the Roman Catechism, recognised by its heading.
const TRENT_QUERIES: &[(&str, &str)] = &[
    ("why are sponsors required at baptism", "sponsors"),
    (
        "infant baptism should not be delayed",
        "infants should not be delayed",
    ),
    ("concupiscence remaining after baptism", "concupiscence"),
    ("faith excludes doubt", "faith excludes doubt"),
    ("creation of the world of spirits", "world of spirits"),
];

/// Recall@10 and MRR of a ranking over the relevance queries.
fn relevance(corpus: &Corpus, mode: SearchMode) -> (f64, f64) {
    let rank_of = |query: &str, wanted: &dyn Fn(&corpus::Hit) -> bool| {
        corpus
            .search_in_mode(&SearchRequest::new(query), mode)
            .unwrap()
            .hits
            .iter()
            .position(wanted)
            .map(|p| p + 1)
    };
    let mut ranks = Vec::new();
    for (query, loci) in BALTIMORE_QUERIES {
        let rank = rank_of(query, &|hit| {
            hit.doc_id == "cat:baltimore-1" && loci.contains(&hit.locus.as_str())
        });
        eprintln!("{mode}\t{rank:?}\t{query}");
        ranks.push(rank);
    }
    for (query, heading) in TRENT_QUERIES {
        let rank = rank_of(query, &|hit| {
            hit.doc_id == "cat:trent"
                && hit
                    .heading
                    .as_deref()
                    .is_some_and(|h| h.to_lowercase().contains(heading))
        });
        eprintln!("{mode}\t{rank:?}\t{query}");
        ranks.push(rank);
    }
    let found = ranks.iter().flatten().count() as f64;
    let recall_at_10 = found / ranks.len() as f64;
    let mrr = ranks.iter().flatten().map(|r| 1.0 / *r as f64).sum::<f64>() / ranks.len() as f64;
    eprintln!(
        "{mode}: {} queries: recall@10 {recall_at_10:.3}, MRR {mrr:.3}",
        ranks.len()
    );
    (recall_at_10, mrr)
}

#[test]
fn relevance_on_the_reference_catechisms() {
    let Some(reference) = reference_corpus() else {
        eprintln!("reference corpus not found: relevance check skipped");
        return;
    };
    let data = tempfile::tempdir().unwrap();
    #[cfg(feature = "embeddings")]
    let model = embeddings::test_model();
    #[cfg(feature = "embeddings")]
    if let Some(model) = &model {
        embeddings::install_test_model(model, data.path());
    }
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(vec![baltimore(&reference), trent(&reference)])
        .unwrap();
    let corpus = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();

    let (recall_at_10, mrr) = relevance(&corpus, SearchMode::Bm25);
    // Measured: recall@10 0.897, MRR 0.637 (39 queries); the floors leave room for tuning noise.
    assert!(recall_at_10 >= 0.85, "recall@10 {recall_at_10:.3}");
    assert!(mrr >= 0.60, "MRR {mrr:.3}");

    #[cfg(feature = "embeddings")]
    if model.is_some() {
        assert_eq!(corpus.search_mode(), SearchMode::Hybrid);
        let (recall_at_10, mrr) = relevance(&corpus, SearchMode::Hybrid);
        // Measured: recall@10 0.974, MRR 0.814 (39 queries); the floors leave room for noise
        // and still require hybrid to beat BM25 alone.
        assert!(recall_at_10 >= 0.92, "hybrid recall@10 {recall_at_10:.3}");
        assert!(mrr >= 0.75, "hybrid MRR {mrr:.3}");
    } else {
        eprintln!("A2A_TEST_MODEL_DIR not set: hybrid relevance skipped");
    }
}

#[test]
fn hybrid_without_vectors_answers_with_bm25() {
    let data = tempfile::tempdir().unwrap();
    let empty = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();
    assert_eq!(empty.search_mode(), SearchMode::Bm25);
    assert_eq!(empty.search(&SearchRequest::new("grace")).unwrap().total, 0);

    // No model in this data directory, so the writer stores no vectors.
    CorpusWriter::open(data.path())
        .unwrap()
        .upsert(fixture())
        .unwrap();
    let hybrid = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();
    let bm25 = Corpus::open(data.path()).unwrap();
    assert_eq!(hybrid.search_mode(), SearchMode::Bm25);
    assert_eq!(bm25.search_mode(), SearchMode::Bm25);
    let request = SearchRequest::new("grace nature");
    let expected = bm25.search(&request).unwrap();
    assert!(!expected.hits.is_empty());
    assert_eq!(hybrid.search(&request).unwrap(), expected);
    assert_eq!(
        bm25.search_in_mode(&request, SearchMode::Hybrid).unwrap(),
        expected
    );
    assert!(matches!(
        hybrid.search(&SearchRequest::new("?!")),
        Err(CorpusError::NoSearchTerms)
    ));
}

#[test]
fn search_modes_read_from_configuration_text() {
    assert_eq!("bm25".parse::<SearchMode>().unwrap(), SearchMode::Bm25);
    assert_eq!(
        " Hybrid ".parse::<SearchMode>().unwrap(),
        SearchMode::Hybrid
    );
    let err = "vector".parse::<SearchMode>().unwrap_err();
    assert!(err.to_string().contains("bm25"), "{err}");
    assert_eq!(SearchMode::default(), SearchMode::Bm25);
    assert_eq!(SearchMode::Hybrid.to_string(), "hybrid");
    assert_eq!(
        serde_json::from_str::<SearchMode>(r#""hybrid""#).unwrap(),
        SearchMode::Hybrid
    );
}

/// Tests that need the real model: they run when `A2A_TEST_MODEL_DIR` names a folder holding
/// `model.safetensors`, `tokenizer.json` and `config.json` (see `scripts/test-embeddings`).
#[cfg(feature = "embeddings")]
mod embeddings {
    use super::*;

    /// The model folder named by `A2A_TEST_MODEL_DIR`, when it holds the model files.
    pub fn test_model() -> Option<PathBuf> {
        let dir = PathBuf::from(std::env::var_os("A2A_TEST_MODEL_DIR")?);
        corpus::MODEL_FILES
            .iter()
            .all(|name| dir.join(name).is_file())
            .then_some(dir)
    }

    /// Installs the test model into a data directory without copying 91 MB.
    pub fn install_test_model(model: &Path, data_dir: &Path) {
        let target = corpus::model_dir(data_dir);
        fs::create_dir_all(&target).unwrap();
        for name in corpus::MODEL_FILES {
            let source = fs::canonicalize(model.join(name)).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink(source, target.join(name)).unwrap();
            #[cfg(not(unix))]
            fs::copy(source, target.join(name)).unwrap();
        }
    }

    /// Invented sections on distinct subjects; the first shares no word with the paraphrase
    /// asked for below.
    fn topics() -> Vec<Document> {
        vec![
            document(
                "mag:exemplar/de-infirmis-1900",
                "On Visiting the Sick",
                Some("Pius Exemplar"),
                Some("1900"),
                "encyclical",
                "en",
                vec![
                    section(
                        "1",
                        "Those who lie sick in bed should be visited and comforted, for whoever \
                         tends them serves the Lord himself.",
                    ),
                    section(
                        "2",
                        "The parish should keep a list of the housebound so that no one is \
                         forgotten on Sundays.",
                    ),
                ],
            ),
            document(
                "mag:exemplar/de-pecunia-1901",
                "On Money",
                Some("Pius Exemplar"),
                Some("1901"),
                "encyclical",
                "en",
                vec![
                    section(
                        "1",
                        "A just wage lets a worker feed his family and save a little for old age.",
                    ),
                    section("2", "Usury is forbidden, and debts must be paid on time."),
                ],
            ),
            document(
                "mag:exemplar/de-musica-1902",
                "On Sacred Music",
                Some("Leo Exemplar"),
                Some("1902"),
                "encyclical",
                "en",
                vec![section(
                    "1",
                    "Gregorian chant holds the first place in the singing of the liturgy.",
                )],
            ),
            document(
                "cat:exemplum-gallicum",
                "Petit exemple",
                None,
                Some("1890"),
                "catechism",
                "fr",
                vec![section(
                    "1",
                    "Il faut visiter les malades et consoler ceux qui souffrent.",
                )],
            ),
        ]
    }

    fn ids(results: &corpus::SearchResults) -> Vec<&str> {
        results.hits.iter().map(|hit| hit.id.as_str()).collect()
    }

    #[test]
    fn hybrid_finds_a_paraphrase_that_bm25_misses() {
        let Some(model) = test_model() else {
            eprintln!("A2A_TEST_MODEL_DIR not set: embedding test skipped");
            return;
        };
        let data = tempfile::tempdir().unwrap();
        install_test_model(&model, data.path());
        CorpusWriter::open(data.path())
            .unwrap()
            .upsert(topics())
            .unwrap();
        let corpus = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();
        assert_eq!(corpus.search_mode(), SearchMode::Hybrid);

        let paraphrase = SearchRequest::new("caring for ill people");
        let wanted = "mag:exemplar/de-infirmis-1900#1";
        let bm25 = corpus
            .search_in_mode(&paraphrase, SearchMode::Bm25)
            .unwrap();
        assert!(!ids(&bm25).contains(&wanted), "{:?}", ids(&bm25));
        let hybrid = corpus.search(&paraphrase).unwrap();
        assert_eq!(ids(&hybrid).first(), Some(&wanted), "{:?}", ids(&hybrid));
        assert!(hybrid.hits[0].score > hybrid.hits[1].score);
        // Found by meaning alone, the hit still carries its text and a snippet.
        assert!(hybrid.hits[0].snippet.starts_with("Those who lie sick"));
        assert_eq!(hybrid.hits[0].title, "On Visiting the Sick");

        // Filters hold for the vector signal too.
        let mut in_french = paraphrase.clone();
        in_french.filters.language = Some("fr".into());
        let french = corpus.search(&in_french).unwrap();
        assert_eq!(ids(&french), ["cat:exemplum-gallicum#1"]);
        let mut about_money = paraphrase.clone();
        about_money.filters.year_from = Some(1901);
        about_money.filters.year_to = Some(1901);
        let money = corpus.search(&about_money).unwrap();
        assert!(
            money
                .hits
                .iter()
                .all(|hit| hit.doc_id == "mag:exemplar/de-pecunia-1901"),
            "{:?}",
            ids(&money)
        );

        // A quoted phrase must still appear in every hit.
        let phrase = corpus
            .search(&SearchRequest::new(r#""just wage" sick people"#))
            .unwrap();
        assert_eq!(ids(&phrase), ["mag:exemplar/de-pecunia-1901#1"]);

        // Paging a hybrid ranking gives the same order as one long page.
        let mut all = SearchRequest::new("helping those in need");
        all.limit = 6;
        let whole = ids(&corpus.search(&all).unwrap())
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        let mut pages = Vec::new();
        for offset in [0, 2, 4] {
            let mut page = all.clone();
            page.limit = 2;
            page.offset = offset;
            pages.extend(
                ids(&corpus.search(&page).unwrap())
                    .into_iter()
                    .map(str::to_string),
            );
        }
        assert_eq!(pages, whole);
        assert_eq!(whole.len(), 6, "every section is a candidate by meaning");
    }

    #[test]
    fn vectors_follow_upserts_and_removals() {
        let Some(model) = test_model() else {
            eprintln!("A2A_TEST_MODEL_DIR not set: embedding test skipped");
            return;
        };
        let data = tempfile::tempdir().unwrap();
        install_test_model(&model, data.path());
        let mut writer = CorpusWriter::open(data.path()).unwrap();
        writer.upsert(topics()).unwrap();
        // A new document between existing ids, a replaced one, and a removal: rows must still
        // line up with the sections, or opening in hybrid mode would refuse the vectors.
        let mut changed = topics().remove(2);
        changed.sections[0].text = "Bells are rung before the Sunday mass.".into();
        writer.upsert(vec![changed]).unwrap();
        writer
            .upsert(vec![document(
                "mag:exemplar/de-hospitibus-1900",
                "On Guests",
                None,
                Some("1900"),
                "encyclical",
                "en",
                vec![section(
                    "1",
                    "Strangers at the door are to be welcomed with bread.",
                )],
            )])
            .unwrap();
        assert!(writer.remove("mag:exemplar/de-pecunia-1901").unwrap());
        drop(writer);

        let corpus = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();
        assert_eq!(corpus.search_mode(), SearchMode::Hybrid);
        let hits = corpus
            .search(&SearchRequest::new("ringing church bells"))
            .unwrap();
        assert_eq!(
            ids(&hits).first(),
            Some(&"mag:exemplar/de-musica-1902#1"),
            "the replaced text was embedded again"
        );
        let hits = corpus
            .search(&SearchRequest::new("hospitality to travellers"))
            .unwrap();
        assert_eq!(
            ids(&hits).first(),
            Some(&"mag:exemplar/de-hospitibus-1900#1")
        );
        assert!(
            hits.hits
                .iter()
                .all(|hit| hit.doc_id != "mag:exemplar/de-pecunia-1901")
        );

        // Reindexing recomputes every vector and leaves the same ranking.
        CorpusWriter::open(data.path()).unwrap().reindex().unwrap();
        let again = Corpus::open_with_mode(data.path(), SearchMode::Hybrid).unwrap();
        assert_eq!(
            ids(&again
                .search(&SearchRequest::new("hospitality to travellers"))
                .unwrap()),
            ids(&hits)
        );
    }

    #[test]
    fn embeddings_are_unit_vectors_that_measure_meaning() {
        let Some(model) = test_model() else {
            eprintln!("A2A_TEST_MODEL_DIR not set: embedding test skipped");
            return;
        };
        let embedder = corpus::SentenceEmbedder::load(&model).unwrap();
        assert_eq!(embedder.dimensions(), 384);
        let vectors = embedder
            .embed(&[
                "The sick should be visited.",
                "Visit those who are ill.",
                "Debts must be paid on time.",
                "",
            ])
            .unwrap();
        assert_eq!(vectors.len(), 4);
        for vector in &vectors {
            assert_eq!(vector.len(), 384);
            let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        }
        let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let close = cosine(&vectors[0], &vectors[1]);
        let far = cosine(&vectors[0], &vectors[2]);
        assert!(close > far + 0.2, "close {close}, far {far}");
        // Batching pads shorter texts; a text alone must embed the same.
        let alone = embedder.embed(&["Visit those who are ill."]).unwrap();
        assert!(cosine(&alone[0], &vectors[1]) > 0.9999);

        let missing = corpus::SentenceEmbedder::load(Path::new("/nonexistent/model"));
        assert!(missing.is_err());
    }

    #[test]
    fn a_texts_vector_does_not_depend_on_the_texts_batched_with_it() {
        let Some(model) = test_model() else {
            eprintln!("A2A_TEST_MODEL_DIR not set: embedding test skipped");
            return;
        };
        let embedder = corpus::SentenceEmbedder::load(&model).unwrap();
        // Lengths from one word to past the 256-token truncation, so that batches by length
        // differ from batches in the given order and every text meets padding in one of them.
        let long =
            "Grace is a supernatural gift of God bestowed on us for our salvation. ".repeat(30);
        let texts: Vec<String> = (0..40)
            .map(|n| match n % 5 {
                0 => format!("Mercy {n}."),
                1 => format!("Who made the world? God made the world, {n} times over."),
                2 => "Blessed are the poor in spirit: for theirs is the kingdom of heaven. "
                    .repeat(1 + n % 7),
                3 => long.clone(),
                _ => format!(
                    "The sacraments are {n} outward signs instituted by Christ to give grace."
                ),
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let by_length = embedder.embed(&refs).unwrap();
        let one_batch = embedder.embed_batch(&refs).unwrap();
        let alone: Vec<Vec<f32>> = refs
            .iter()
            .map(|text| embedder.embed_batch(&[text]).unwrap().remove(0))
            .collect();
        let reversed: Vec<&str> = refs.iter().rev().copied().collect();
        let mut in_reverse = embedder.embed(&reversed).unwrap();
        in_reverse.reverse();
        let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for (n, reference) in alone.iter().enumerate() {
            for (name, other) in [
                ("by length", &by_length),
                ("one padded batch", &one_batch),
                ("reversed", &in_reverse),
            ] {
                let similarity = cosine(reference, &other[n]);
                assert!(
                    similarity >= 0.999,
                    "text {n} {name}: cosine {similarity} with the text embedded alone"
                );
            }
        }
        let lengths = embedder.token_lengths(&refs).unwrap();
        assert_eq!(
            lengths.iter().max(),
            Some(&256),
            "the long text is truncated"
        );
        let batches = corpus::SentenceEmbedder::batches(&lengths);
        assert!(batches.len() > 1, "the texts are cut into several batches");
        let mut seen: Vec<usize> = batches.concat();
        seen.sort_unstable();
        assert_eq!(seen, (0..refs.len()).collect::<Vec<_>>());
    }
}

#[test]
fn starter_catechisms_hold_every_question_and_answer() {
    let catechisms = corpus::starter::catechisms().unwrap();
    let counts: Vec<(&str, usize)> = catechisms
        .iter()
        .map(|d| (d.id.as_str(), d.sections.len()))
        .collect();
    assert_eq!(
        counts,
        [
            ("cat:baltimore-1", 207),
            ("cat:baltimore-2", 421),
            ("cat:baltimore-3", 1398),
            ("cat:trent", 1028),
        ]
    );
    let first = &catechisms[0].sections[0];
    assert_eq!(first.locus, "1");
    assert_eq!(first.heading.as_deref(), Some("Who made the world?"));
    assert_eq!(first.text, "God made the world.");
    let grace = catechisms[2]
        .section("456")
        .expect("Baltimore No. 3, question 456");
    assert_eq!(grace.heading.as_deref(), Some("What do you mean by grace?"));
    assert!(
        grace
            .text
            .starts_with("By grace I mean a supernatural gift of God"),
        "{}",
        grace.text
    );
    for catechism in &catechisms {
        assert_eq!(catechism.doc_type, "catechism");
        assert!(
            catechism.sections.iter().all(|s| !s.text.contains('\r')),
            "hard line breaks are folded"
        );
    }
}
