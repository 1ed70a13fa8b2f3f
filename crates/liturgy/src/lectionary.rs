//! The Lectionary for Mass: which Scripture passages are read on each liturgical day.
//!
//! The tables live in `data/lectionary/*.txt`, one book of the Lectionary per file, compiled into
//! the binary and parsed once. They hold citations only (facts of the Ordo Lectionum Missae), never
//! the text of a translation; the text comes from the Bible the operator installs (`crate::bible`).
//!
//! # Format
//! ```text
//! # comment
//! [advent_1_sunday A]
//! first_reading: Is 2:1-5
//! responsorial_psalm: Ps 122:1-2, 3-4, 4-5, 6-7, 8-9
//! second_reading: Rom 13:11-14
//! gospel_acclamation: Ps 85:8
//! gospel: Mt 24:37-44
//! ```
//! A header is `[<celebration id> <cycle> [<mass>]]`: the celebration id is the one the calendar
//! produces; the cycle is `A`, `B`, `C` (Sundays), `I`, `II` (weekdays) or `*` (every year); the
//! optional mass is one lowercase word (`vigil`, `night`, `dawn`, `day`, `procession`, `chrism`…).
//! A lookup merges the `*` section with the cycle's section key by key, the cycle winning, so an
//! Ordinary Time weekday takes its first reading and psalm from `I`/`II` and its gospel from `*`.
//!
//! Keys: `first_reading`, `responsorial_psalm`, `second_reading`, `gospel_acclamation`, `gospel`.
//! The Easter Vigil also uses `psalm_1` (after the first reading), `reading_2` … `reading_7` with
//! `psalm_2` … `psalm_7`, and `epistle` with `epistle_psalm`. A value is one citation, or several
//! separated by ` | ` when the Lectionary offers a choice (the first is the default, e.g. the longer
//! form of a Gospel before the shorter one).

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::citation::{Citation, alternatives};

/// The Lectionary files, in the order their Masses are listed when an id appears in several.
const FILES: &[(&str, &str)] = &[
    (
        "sundays.txt",
        include_str!("../data/lectionary/sundays.txt"),
    ),
    (
        "seasons.txt",
        include_str!("../data/lectionary/seasons.txt"),
    ),
    (
        "ordinary_weekdays.txt",
        include_str!("../data/lectionary/ordinary_weekdays.txt"),
    ),
    ("saints.txt", include_str!("../data/lectionary/saints.txt")),
];

/// Ids the calendar may use for a day whose readings are filed under another name.
const ALIASES: &[(&str, &str)] = &[
    ("sunday_of_the_word_of_god", "ordinary_time_3_sunday"),
    ("easter_time_2_sunday", "divine_mercy_sunday"),
    ("easter_time_1_sunday", "easter_sunday"),
    ("lent_6_sunday", "palm_sunday_of_the_passion_of_the_lord"),
    (
        "ordinary_time_34_sunday",
        "our_lord_jesus_christ_king_of_the_universe",
    ),
    ("christmas_octave_day_8", "mary_mother_of_god"),
];

/// A fault in a Lectionary file, naming the file and line so the data can be corrected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct LectionaryError {
    /// The file name, e.g. `sundays.txt`.
    pub file: String,
    /// One-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The place of a reading in the Mass; ordering follows the order in which they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadingKind {
    /// The first reading (at the Easter Vigil, the first of seven).
    FirstReading,
    /// The psalm after the first reading.
    ResponsorialPsalm,
    /// The psalm after the first reading of the Easter Vigil.
    VigilPsalm1,
    /// Readings 2–7 of the Easter Vigil and the psalm after each, as (number, is psalm).
    VigilReading(u8, bool),
    /// The second reading of Sundays and solemnities.
    SecondReading,
    /// The New Testament reading of the Easter Vigil.
    Epistle,
    /// The psalm after the epistle of the Easter Vigil.
    EpistlePsalm,
    /// The verse before the Gospel.
    GospelAcclamation,
    /// The Gospel.
    Gospel,
}

impl ReadingKind {
    /// The key used in the data files and in the skill's output.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadingKind::FirstReading => "first_reading",
            ReadingKind::ResponsorialPsalm => "responsorial_psalm",
            ReadingKind::VigilPsalm1 => "psalm_1",
            ReadingKind::VigilReading(n, is_psalm) => VIGIL_KEYS
                .iter()
                .find(|(_, kind)| *kind == ReadingKind::VigilReading(n, is_psalm))
                .map_or("reading", |(key, _)| key),
            ReadingKind::SecondReading => "second_reading",
            ReadingKind::Epistle => "epistle",
            ReadingKind::EpistlePsalm => "epistle_psalm",
            ReadingKind::GospelAcclamation => "gospel_acclamation",
            ReadingKind::Gospel => "gospel",
        }
    }

    /// A heading for people: "First Reading", "Responsorial Psalm"…
    pub fn label(self) -> String {
        match self {
            ReadingKind::FirstReading => "First Reading".into(),
            ReadingKind::ResponsorialPsalm | ReadingKind::VigilPsalm1 => {
                "Responsorial Psalm".into()
            }
            ReadingKind::VigilReading(n, false) => format!("Reading {n}"),
            ReadingKind::VigilReading(_, true) => "Responsorial Psalm".into(),
            ReadingKind::SecondReading => "Second Reading".into(),
            ReadingKind::Epistle => "Epistle".into(),
            ReadingKind::EpistlePsalm => "Responsorial Psalm".into(),
            ReadingKind::GospelAcclamation => "Gospel Acclamation".into(),
            ReadingKind::Gospel => "Gospel".into(),
        }
    }

    /// The kind named by a data-file key.
    pub fn from_key(key: &str) -> Option<ReadingKind> {
        match key {
            "first_reading" => Some(ReadingKind::FirstReading),
            "responsorial_psalm" => Some(ReadingKind::ResponsorialPsalm),
            "psalm_1" => Some(ReadingKind::VigilPsalm1),
            "second_reading" => Some(ReadingKind::SecondReading),
            "epistle" => Some(ReadingKind::Epistle),
            "epistle_psalm" => Some(ReadingKind::EpistlePsalm),
            "gospel_acclamation" => Some(ReadingKind::GospelAcclamation),
            "gospel" => Some(ReadingKind::Gospel),
            other => VIGIL_KEYS
                .iter()
                .find(|(name, _)| *name == other)
                .map(|(_, kind)| *kind),
        }
    }
}

const VIGIL_KEYS: &[(&str, ReadingKind)] = &[
    ("reading_2", ReadingKind::VigilReading(2, false)),
    ("psalm_2", ReadingKind::VigilReading(2, true)),
    ("reading_3", ReadingKind::VigilReading(3, false)),
    ("psalm_3", ReadingKind::VigilReading(3, true)),
    ("reading_4", ReadingKind::VigilReading(4, false)),
    ("psalm_4", ReadingKind::VigilReading(4, true)),
    ("reading_5", ReadingKind::VigilReading(5, false)),
    ("psalm_5", ReadingKind::VigilReading(5, true)),
    ("reading_6", ReadingKind::VigilReading(6, false)),
    ("psalm_6", ReadingKind::VigilReading(6, true)),
    ("reading_7", ReadingKind::VigilReading(7, false)),
    ("psalm_7", ReadingKind::VigilReading(7, true)),
];

impl fmt::Display for ReadingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reading of a Mass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// Its place in the Mass.
    pub kind: ReadingKind,
    /// The default citation.
    pub citation: String,
    /// Other citations the Lectionary allows in its place (e.g. a shorter form).
    pub alternatives: Vec<String>,
}

/// The readings of one Mass of a day; a day has several where the Missal gives several Masses
/// (Christmas vigil, night, dawn and day; the Palm Sunday procession and Mass).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mass {
    /// `None` for the one Mass of the day, else `vigil`, `night`, `procession`…
    pub name: Option<String>,
    /// The readings, in the order they are read.
    pub readings: Vec<Reading>,
}

impl Mass {
    /// A heading for people: "Mass during the Night", "Procession with Palms"…
    pub fn title(&self) -> String {
        match self.name.as_deref() {
            None => "Mass".into(),
            Some("vigil") => "Vigil Mass".into(),
            Some("night") => "Mass during the Night".into(),
            Some("dawn") => "Mass at Dawn".into(),
            Some("day") => "Mass during the Day".into(),
            Some("procession") => "Procession with Palms".into(),
            Some("chrism") => "Chrism Mass".into(),
            Some(other) => format!("Mass ({other})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SectionKey {
    id: String,
    cycle: String,
    mass: Option<String>,
}

#[derive(Debug, Clone)]
struct Section {
    /// Position of the header, for ordering Masses as the files list them.
    position: (usize, usize),
    entries: Vec<(ReadingKind, String)>,
}

/// The parsed Lectionary: every section of every file.
#[derive(Debug, Default)]
pub struct Lectionary {
    sections: HashMap<SectionKey, Section>,
}

const CYCLES: &[&str] = &["*", "A", "B", "C", "I", "II"];

impl Lectionary {
    /// The Lectionary shipped with the crate, parsed on first use. The shipped files are checked
    /// by the tests, so a fault here is a build defect, reported rather than panicking.
    pub fn shipped() -> Result<&'static Lectionary, &'static LectionaryError> {
        static SHIPPED: OnceLock<Result<Lectionary, LectionaryError>> = OnceLock::new();
        SHIPPED
            .get_or_init(|| Lectionary::parse_files(FILES.iter().copied()))
            .as_ref()
    }

    /// Parses Lectionary files given as (name, content), rejecting anything malformed.
    pub fn parse_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Lectionary, LectionaryError> {
        let mut lectionary = Lectionary::default();
        for (file_index, (name, content)) in files.into_iter().enumerate() {
            lectionary.parse_file(file_index, name, content)?;
        }
        Ok(lectionary)
    }

    fn parse_file(
        &mut self,
        file_index: usize,
        file: &str,
        content: &str,
    ) -> Result<(), LectionaryError> {
        let fail = |line: usize, message: String| LectionaryError {
            file: file.to_string(),
            line,
            message,
        };
        let mut current: Option<SectionKey> = None;
        for (index, raw) in content.lines().enumerate() {
            let line_number = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let header = header
                    .strip_suffix(']')
                    .ok_or_else(|| fail(line_number, "header must end with ']'".into()))?;
                let key = parse_header(header).map_err(|message| fail(line_number, message))?;
                if self.sections.contains_key(&key) {
                    return Err(fail(line_number, format!("duplicate section [{header}]")));
                }
                self.sections.insert(
                    key.clone(),
                    Section {
                        position: (file_index, line_number),
                        entries: Vec::new(),
                    },
                );
                current = Some(key);
                continue;
            }
            let key = current
                .as_ref()
                .ok_or_else(|| fail(line_number, "entry before any [section] header".into()))?;
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| fail(line_number, "expected 'key: citation'".into()))?;
            let kind = ReadingKind::from_key(name.trim())
                .ok_or_else(|| fail(line_number, format!("unknown key {:?}", name.trim())))?;
            let value = value.trim();
            for alternative in alternatives(value) {
                Citation::parse(alternative)
                    .map_err(|error| fail(line_number, error.to_string()))?;
            }
            let section = self
                .sections
                .get_mut(key)
                .ok_or_else(|| fail(line_number, "section vanished".into()))?;
            if section.entries.iter().any(|(k, _)| *k == kind) {
                return Err(fail(line_number, format!("key {kind} given twice")));
            }
            section.entries.push((kind, value.to_string()));
        }
        Ok(())
    }

    /// The Masses of a celebration for the given Sunday cycle (`A`/`B`/`C`) and weekday cycle
    /// (`I`/`II`), in the order the files list them; empty when the Lectionary has no proper
    /// readings for it (a memorial that takes the weekday's readings, for instance).
    pub fn masses(
        &self,
        celebration_id: &str,
        sunday_cycle: &str,
        weekday_cycle: &str,
    ) -> Vec<Mass> {
        let id = canonical_id(celebration_id);
        let mut drafts: Vec<MassDraft> = Vec::new();
        for cycle in ["*", sunday_cycle, weekday_cycle] {
            for (key, section) in self
                .sections
                .iter()
                .filter(|(key, _)| key.id == id && key.cycle == cycle)
            {
                let index = match drafts.iter().position(|d| d.name == key.mass) {
                    Some(found) => found,
                    None => {
                        drafts.push(MassDraft {
                            name: key.mass.clone(),
                            position: section.position,
                            entries: Vec::new(),
                        });
                        drafts.len() - 1
                    }
                };
                let draft = &mut drafts[index];
                draft.position = draft.position.min(section.position);
                for (kind, value) in &section.entries {
                    draft.entries.retain(|(existing, _)| existing != kind);
                    draft.entries.push((*kind, value.clone()));
                }
            }
        }
        drafts.sort_by_key(|d| d.position);
        drafts.into_iter().map(MassDraft::finish).collect()
    }

    /// Whether any section names this celebration (in any cycle).
    pub fn has(&self, celebration_id: &str) -> bool {
        let id = canonical_id(celebration_id);
        self.sections.keys().any(|key| key.id == id)
    }

    /// Every (celebration id, cycle, mass, key, value) of the tables, for checks and exports.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str, Option<&str>, ReadingKind, &str)> {
        self.sections.iter().flat_map(|(key, section)| {
            section.entries.iter().map(move |(kind, value)| {
                (
                    key.id.as_str(),
                    key.cycle.as_str(),
                    key.mass.as_deref(),
                    *kind,
                    value.as_str(),
                )
            })
        })
    }
}

/// A Mass being assembled from the `*` and cycle sections of a celebration.
struct MassDraft {
    name: Option<String>,
    position: (usize, usize),
    entries: Vec<(ReadingKind, String)>,
}

impl MassDraft {
    fn finish(mut self) -> Mass {
        self.entries.sort_by_key(|(kind, _)| *kind);
        Mass {
            name: self.name,
            readings: self
                .entries
                .into_iter()
                .map(|(kind, value)| {
                    let mut options = alternatives(&value).map(str::to_string);
                    Reading {
                        kind,
                        citation: options.next().unwrap_or_default(),
                        alternatives: options.collect(),
                    }
                })
                .collect(),
        }
    }
}

fn canonical_id(id: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == id)
        .map_or(id, |(_, canonical)| canonical)
}

fn parse_header(header: &str) -> Result<SectionKey, String> {
    let words: Vec<&str> = header.split_whitespace().collect();
    let (id, cycle, mass) = match words.as_slice() {
        [id, cycle] => (*id, *cycle, None),
        [id, cycle, mass] => (*id, *cycle, Some(*mass)),
        _ => return Err(format!("header [{header}] must be [<id> <cycle> [<mass>]]")),
    };
    let is_word = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if !is_word(id) {
        return Err(format!("bad celebration id {id:?}"));
    }
    if !CYCLES.contains(&cycle) {
        return Err(format!("bad cycle {cycle:?}: use A, B, C, I, II or *"));
    }
    if let Some(mass) = mass
        && (!is_word(mass) || mass.contains('_'))
    {
        return Err(format!("bad mass name {mass:?}: one lowercase word"));
    }
    Ok(SectionKey {
        id: id.to_string(),
        cycle: cycle.to_string(),
        mass: mass.map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_files_parse_and_every_citation_parses() {
        let lectionary = Lectionary::shipped().unwrap();
        let mut count = 0;
        for (id, cycle, mass, kind, value) in lectionary.entries() {
            for alternative in alternatives(value) {
                Citation::parse(alternative)
                    .unwrap_or_else(|e| panic!("[{id} {cycle} {mass:?}] {kind}: {e}"));
                count += 1;
            }
        }
        assert!(count > 1000, "only {count} citations shipped");
    }

    const SAMPLE: &str = "# sample\n\
        [ordinary_time_1_monday I]\n\
        first_reading: Heb 1:1-6\n\
        responsorial_psalm: Ps 97:1, 2b, 6, 7c, 9\n\
        \n\
        [ordinary_time_1_monday *]\n\
        gospel_acclamation: Mk 1:15\n\
        gospel: Mk 1:14-20\n\
        [ordinary_time_1_monday II]\n\
        first_reading: 1Sm 1:1-8\n\
        [feast_x * vigil]\n\
        gospel: Lk 1:5-17\n\
        [feast_x * day]\n\
        gospel: Lk 1:57-66, 80 | Lk 1:57-66\n";

    #[test]
    fn lookup_merges_every_year_and_cycle_sections() {
        let lectionary = Lectionary::parse_files([("sample.txt", SAMPLE)]).unwrap();
        let masses = lectionary.masses("ordinary_time_1_monday", "A", "I");
        assert_eq!(masses.len(), 1);
        let kinds: Vec<_> = masses[0].readings.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ReadingKind::FirstReading,
                ReadingKind::ResponsorialPsalm,
                ReadingKind::GospelAcclamation,
                ReadingKind::Gospel
            ]
        );
        assert_eq!(masses[0].readings[0].citation, "Heb 1:1-6");
        let year_two = lectionary.masses("ordinary_time_1_monday", "A", "II");
        assert_eq!(year_two[0].readings[0].citation, "1Sm 1:1-8");
        assert_eq!(year_two[0].readings.len(), 3);
        assert!(lectionary.masses("nothing_here", "A", "I").is_empty());
    }

    #[test]
    fn several_masses_keep_file_order_and_alternatives() {
        let lectionary = Lectionary::parse_files([("sample.txt", SAMPLE)]).unwrap();
        let masses = lectionary.masses("feast_x", "B", "II");
        let names: Vec<_> = masses.iter().map(|m| m.name.as_deref()).collect();
        assert_eq!(names, vec![Some("vigil"), Some("day")]);
        assert_eq!(masses[1].readings[0].citation, "Lk 1:57-66, 80");
        assert_eq!(masses[1].readings[0].alternatives, vec!["Lk 1:57-66"]);
    }

    #[test]
    fn faults_name_file_and_line() {
        let cases = [
            (
                "[x A]\nfirst_reading: Is 2:1-5\nfoo: Is 2:1\n",
                3,
                "unknown key",
            ),
            ("[x A\n", 1, "header"),
            ("[x Q]\n", 1, "bad cycle"),
            ("[x A]\n[x A]\n", 2, "duplicate"),
            ("[x A]\ngospel: Mt 1:1\ngospel: Mt 1:2\n", 3, "twice"),
            ("[x A]\ngospel: Qq 1:1\n", 2, "unknown book"),
            ("gospel: Mt 1:1\n", 1, "before any"),
            ("[x A]\ngospel: Mt 1:1 | Mt\n", 2, "malformed"),
        ];
        for (content, line, needle) in cases {
            let error = Lectionary::parse_files([("bad.txt", content)]).unwrap_err();
            assert_eq!(error.file, "bad.txt");
            assert_eq!(error.line, line, "{content}");
            assert!(error.message.contains(needle), "{error} lacks {needle}");
        }
    }

    /// Checks the shipped tables against two public reference lectionaries when the project's
    /// reference folder is present: the litcal lectionary books (keyed by day) and the
    /// per-date readings of 2025–2027 (keyed through the romcal calendar of the same years).
    /// Prints the agreement and every disagreement; fails only below a floor, so that a
    /// regression in the tables is caught while the references' own slips are tolerated.
    mod reference_check {
        use super::*;
        use serde_json::Value;
        use std::path::PathBuf;

        fn reference_dir() -> Option<PathBuf> {
            let dir =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference");
            dir.join("readings").is_dir().then_some(dir)
        }

        /// Turns a citation written with full book names (`1 Thessalonians 3:12—4:2`,
        /// `Psalm 1:1-2, 3, 4 and 6`, `Cf. Psalm 85:8`) into parsed alternatives.
        fn normalise(text: &str) -> Vec<Citation> {
            let cleaned = text
                .replace(['\u{2014}', '\u{2013}'], "-")
                .replace(" and ", ", ")
                .replace(" or ", "|")
                .replace("Cf.", "")
                .replace("cf.", "");
            let mut out = Vec::new();
            let mut last_book: Option<&'static crate::citation::Book> = None;
            for alternative in cleaned.split('|') {
                let alternative = alternative.trim();
                let mut alternative =
                    hebrew_psalm(alternative).unwrap_or_else(|| alternative.to_string());
                while let (Some(open), Some(close)) = (alternative.find('('), alternative.find(')'))
                {
                    if close < open {
                        break;
                    }
                    alternative.replace_range(open..=close, "");
                }
                let alternative = alternative.replace(": ", ":").replace(" :", ":");
                let alternative = alternative.trim();
                if alternative.is_empty() {
                    continue;
                }
                let split = alternative
                    .char_indices()
                    .skip(1)
                    .find(|(i, c)| c.is_ascii_digit() && alternative[..*i].ends_with(' '))
                    .map(|(i, _)| i);
                let (book, rest) = match split {
                    Some(i) => (alternative[..i].trim(), &alternative[i..]),
                    None => ("", alternative),
                };
                let book = if book.is_empty() {
                    last_book
                } else {
                    book_from_name(book)
                };
                let Some(book) = book else { continue };
                last_book = Some(book);
                if let Ok(citation) = Citation::parse(&format!("{} {}", book.abbreviation, rest)) {
                    out.push(citation);
                }
            }
            out
        }

        fn book_from_name(name: &str) -> Option<&'static crate::citation::Book> {
            let name = name.trim().trim_end_matches('.');
            let fixed = match name {
                "Psalm" | "Psalms" => "Psalms",
                "Marc" => "Mark",
                "Sirarch" => "Sirach",
                "Phiippians" => "Philippians",
                "Hewbrews" => "Hebrews",
                "Acts" => "Acts of the Apostles",
                "Song of Solomon" => "Song of Songs",
                "Revelations" => "Revelation",
                other => other,
            };
            crate::citation::BOOKS
                .iter()
                .find(|b| b.name.eq_ignore_ascii_case(fixed))
                .or_else(|| crate::citation::book_by_abbreviation(name))
        }

        /// Equal spans, or a reference that names only a chapter (`Psalm 147`) and ours lies in it.
        fn same(ours: &Citation, theirs: &Citation) -> bool {
            if ours.book().usfm != theirs.book().usfm {
                return false;
            }
            match theirs.spans() {
                [only] if only.start.verse == 1 && only.end.verse == u32::MAX => {
                    ours.spans().iter().all(|s| {
                        s.start.chapter == only.start.chapter && s.end.chapter == only.start.chapter
                    })
                }
                spans => ours.spans() == spans,
            }
        }

        /// `Psalm 71 (72)`: the Greek number first, the Hebrew one (which we use) in parentheses.
        fn hebrew_psalm(alternative: &str) -> Option<String> {
            let rest = alternative.strip_prefix("Psalm ")?;
            let (greek, hebrew) = rest.split_once(" (")?;
            let hebrew = hebrew.strip_suffix(')')?;
            (greek.chars().all(|c| c.is_ascii_digit())
                && hebrew.chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("Psalm {hebrew}"))
        }

        #[derive(Default)]
        struct Tally {
            compared: usize,
            agreed: usize,
            disagreements: Vec<String>,
        }

        impl Tally {
            /// Compares our value for (id, mass, kind) with the reference text: agreement when
            /// our default or any of our alternatives equals any of theirs.
            fn compare(
                &mut self,
                label: &str,
                masses: &[Mass],
                kind: ReadingKind,
                reference: &str,
            ) {
                let theirs = normalise(reference);
                if theirs.is_empty() {
                    return;
                }
                let ours: Vec<Citation> = masses
                    .iter()
                    .flat_map(|m| m.readings.iter().filter(|r| r.kind == kind))
                    .flat_map(|r| std::iter::once(&r.citation).chain(&r.alternatives))
                    .filter_map(|c| Citation::parse(c).ok())
                    .collect();
                self.compared += 1;
                if ours.iter().any(|o| theirs.iter().any(|t| same(o, t))) {
                    self.agreed += 1;
                } else {
                    let ours_text: Vec<&str> = ours.iter().map(Citation::text).collect();
                    self.disagreements.push(format!(
                        "{label} {kind}: ours {ours_text:?}, reference {reference:?}"
                    ));
                }
            }

            fn report(&self, name: &str) -> f64 {
                for line in &self.disagreements {
                    println!("  {line}");
                }
                let share = if self.compared == 0 {
                    1.0
                } else {
                    self.agreed as f64 / self.compared as f64
                };
                println!(
                    "{name}: {}/{} readings agree ({:.1}%)",
                    self.agreed,
                    self.compared,
                    share * 100.0
                );
                share
            }
        }

        fn litcal_id(book: &str, key: &str) -> Option<(String, Option<&'static str>)> {
            let weekday = |day: &str| {
                [
                    "Monday",
                    "Tuesday",
                    "Wednesday",
                    "Thursday",
                    "Friday",
                    "Saturday",
                ]
                .iter()
                .find(|d| **d == day)
                .map(|d| d.to_lowercase())
            };
            let numbered = |prefix: &str| -> Option<(u32, String)> {
                let rest = key.strip_prefix(prefix)?;
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                Some((digits.parse().ok()?, rest[digits.len()..].to_string()))
            };
            let fixed: &[(&str, &str, Option<&'static str>)] = &[
                ("Christmas", "nativity_of_the_lord", None),
                ("HolyFamily", "holy_family_of_jesus_mary_and_joseph", None),
                ("MaryMotherOfGod", "mary_mother_of_god", None),
                ("Christmas2", "second_sunday_after_christmas", None),
                ("Epiphany", "epiphany_of_the_lord", None),
                ("BaptismLord", "baptism_of_the_lord", None),
                ("PalmSun", "palm_sunday_of_the_passion_of_the_lord", None),
                ("HolyThursChrism", "holy_thursday", Some("chrism")),
                ("HolyThurs", "thursday_of_the_lords_supper", None),
                ("GoodFri", "friday_of_the_passion_of_the_lord", None),
                ("EasterVigil", "easter_sunday", Some("vigil")),
                ("Easter", "easter_sunday", None),
                ("Easter2", "divine_mercy_sunday", None),
                ("Ascension", "ascension_of_the_lord", None),
                ("Pentecost", "pentecost_sunday", None),
                ("Trinity", "most_holy_trinity", None),
                ("CorpusChristi", "most_holy_body_and_blood_of_christ", None),
                ("SacredHeart", "most_sacred_heart_of_jesus", None),
                (
                    "ChristKing",
                    "our_lord_jesus_christ_king_of_the_universe",
                    None,
                ),
                ("AshWednesday", "ash_wednesday", None),
                (
                    "ThursdayAfterAshWednesday",
                    "thursday_after_ash_wednesday",
                    None,
                ),
                (
                    "FridayAfterAshWednesday",
                    "friday_after_ash_wednesday",
                    None,
                ),
                (
                    "SaturdayAfterAshWednesday",
                    "saturday_after_ash_wednesday",
                    None,
                ),
                ("MonHolyWeek", "holy_monday", None),
                ("TueHolyWeek", "holy_tuesday", None),
                ("WedHolyWeek", "holy_wednesday", None),
                ("MonOctaveEaster", "easter_monday", None),
                ("TueOctaveEaster", "easter_tuesday", None),
                ("WedOctaveEaster", "easter_wednesday", None),
                ("ThuOctaveEaster", "easter_thursday", None),
                ("FriOctaveEaster", "easter_friday", None),
                ("SatOctaveEaster", "easter_saturday", None),
                ("ChristmasWeekdayDec29", "christmas_octave_day_5", None),
                ("ChristmasWeekdayDec30", "christmas_octave_day_6", None),
                ("ChristmasWeekdayDec31", "christmas_octave_day_7", None),
            ];
            if let Some((_, id, mass)) = fixed.iter().find(|(k, _, _)| *k == key) {
                return Some((id.to_string(), *mass));
            }
            let _ = book;
            if let Some((n, rest)) = numbered("OrdSunday") {
                return rest
                    .is_empty()
                    .then(|| (format!("ordinary_time_{n}_sunday"), None));
            }
            for (prefix, season) in [
                ("AdventWeekday", "advent"),
                ("LentWeekday", "lent"),
                ("EasterWeekday", "easter_time"),
            ] {
                if let Some((n, day)) = numbered(prefix) {
                    return weekday(&day).map(|d| (format!("{season}_{n}_{d}"), None));
                }
            }
            for (prefix, season) in [
                ("Advent", "advent"),
                ("Lent", "lent"),
                ("Easter", "easter_time"),
            ] {
                if let Some((n, rest)) = numbered(prefix)
                    && rest.is_empty()
                {
                    return Some((format!("{season}_{n}_sunday"), None));
                }
            }
            if let Some(day) = key.strip_prefix("AdventWeekdayDec") {
                return Some((format!("advent_december_{day}"), None));
            }
            if let Some(day) = key.strip_prefix("ChristmasWeekdayJan") {
                return Some((format!("christmas_time_january_{day}"), None));
            }
            if let Some(day) = key.strip_prefix("DayAfterEpiphany") {
                return weekday(day).map(|d| (format!("{d}_after_epiphany"), None));
            }
            None
        }

        fn litcal_kind(key: &str, vigil: bool) -> Option<ReadingKind> {
            if vigil {
                return match key {
                    "first_reading" => Some(ReadingKind::FirstReading),
                    "responsorial_psalm" => Some(ReadingKind::VigilPsalm1),
                    "second_reading" => Some(ReadingKind::VigilReading(2, false)),
                    "third_reading" => Some(ReadingKind::VigilReading(3, false)),
                    "fourth_reading" => Some(ReadingKind::VigilReading(4, false)),
                    "fifth_reading" => Some(ReadingKind::VigilReading(5, false)),
                    "sixth_reading" => Some(ReadingKind::VigilReading(6, false)),
                    "seventh_reading" => Some(ReadingKind::VigilReading(7, false)),
                    "epistle" => Some(ReadingKind::Epistle),
                    "responsorial_psalm_epistle" => Some(ReadingKind::EpistlePsalm),
                    "gospel" => Some(ReadingKind::Gospel),
                    other => other
                        .strip_prefix("responsorial_psalm_")
                        .and_then(|n| n.parse().ok())
                        .map(|n| ReadingKind::VigilReading(n, true)),
                };
            }
            match key {
                "palm_gospel" => None,
                other => ReadingKind::from_key(other),
            }
        }

        fn check_litcal(lectionary: &Lectionary, dir: &std::path::Path, tally: &mut Tally) {
            let books = [
                ("dominicale_et_festivum_A", "A", "I"),
                ("dominicale_et_festivum_B", "B", "I"),
                ("dominicale_et_festivum_C", "C", "I"),
                ("feriale_tempus_adventus", "A", "I"),
                ("feriale_tempus_nativitatis", "A", "I"),
                ("feriale_tempus_quadragesimae", "A", "I"),
                ("feriale_tempus_paschatis", "B", "I"),
            ];
            for (book, sunday, weekday) in books {
                let path = dir.join(format!(
                    "readings/litcal-lectionary/lectionary/{book}/en.json"
                ));
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let json: Value = serde_json::from_str(&text).unwrap();
                for (key, value) in json.as_object().unwrap() {
                    let Some((id, mass)) = litcal_id(book, key) else {
                        continue;
                    };
                    let masses = lectionary.masses(&id, sunday, weekday);
                    let object = value.as_object().unwrap();
                    let nested = object.values().all(Value::is_object);
                    let groups: Vec<(Option<String>, &serde_json::Map<String, Value>)> = if nested {
                        object
                            .iter()
                            .map(|(m, v)| (Some(m.clone()), v.as_object().unwrap()))
                            .collect()
                    } else {
                        vec![(mass.map(str::to_string), object)]
                    };
                    for (mass_name, fields) in groups {
                        let wanted = match mass_name.as_deref() {
                            Some("evening") => Some("day".to_string()),
                            other => other.map(str::to_string),
                        };
                        let selected: Vec<Mass> = masses
                            .iter()
                            .filter(|m| wanted.is_none() || m.name == wanted)
                            .cloned()
                            .collect();
                        let vigil = key == "EasterVigil";
                        for (field, reference) in fields {
                            let (Some(kind), Some(reference)) =
                                (litcal_kind(field, vigil), reference.as_str())
                            else {
                                continue;
                            };
                            if reference.trim().is_empty() {
                                continue;
                            }
                            let label =
                                format!("litcal {book} {key} {mass_name:?} -> [{id} {sunday}]");
                            tally.compare(&label, &selected, kind, reference);
                        }
                    }
                }
            }
        }

        fn cycle(value: Option<&Value>) -> &'static str {
            match value.and_then(Value::as_str) {
                Some("YEAR_A") => "A",
                Some("YEAR_B") => "B",
                Some("YEAR_C") => "C",
                Some("YEAR_1") => "I",
                _ => "II",
            }
        }

        /// Days whose reference record is known to be unreliable or follows another Mass than
        /// ours (the Easter Vigil record mixes readings; Christmas keeps one of four Masses).
        fn per_date_skipped(id: &str) -> bool {
            matches!(
                id,
                "holy_saturday" | "easter_sunday" | "nativity_of_the_lord"
            )
        }

        fn check_per_date(
            lectionary: &Lectionary,
            dir: &std::path::Path,
            seasonal_only: bool,
            tally: &mut Tally,
        ) {
            let temporale_tables = Lectionary::parse_files(FILES[..2].iter().copied()).unwrap();
            for year in [2025, 2026, 2027] {
                let calendar_path = dir.join(format!("romcal/grc-sunday-{year}.json"));
                let Ok(calendar) = std::fs::read_to_string(&calendar_path) else {
                    continue;
                };
                let calendar: Value = serde_json::from_str(&calendar).unwrap();
                let readings_dir = dir.join(format!(
                    "readings/cpbjr-catholic-readings-api/readings/{year}"
                ));
                let Ok(entries) = std::fs::read_dir(&readings_dir) else {
                    continue;
                };
                let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
                files.sort();
                for file in files {
                    let record: Value =
                        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                    let Some(date) = record["date"].as_str() else {
                        continue;
                    };
                    let Some(celebrations) = calendar[date].as_array() else {
                        continue;
                    };
                    let Some((celebration, mut masses)) = celebrations.iter().find_map(|c| {
                        let id = c["id"].as_str()?;
                        let masses = lectionary.masses(
                            id,
                            cycle(c.get("sundayCycle")),
                            cycle(c.get("weekdayCycle")),
                        );
                        (!masses.is_empty()).then_some((c, masses))
                    }) else {
                        continue;
                    };
                    if celebration["id"] == "holy_thursday" {
                        masses.extend(lectionary.masses("thursday_of_the_lords_supper", "A", "I"));
                    }
                    let id = celebration["id"].as_str().unwrap_or_default();
                    let seasonal = !id.starts_with("ordinary_time_") || id.ends_with("_sunday");
                    let temporale = temporale_tables.has(id);
                    if per_date_skipped(id) || (seasonal_only && !(seasonal && temporale)) {
                        continue;
                    }
                    let label = format!("{date} [{id} {}]", cycle(celebration.get("sundayCycle")));
                    for (field, kind) in [
                        ("firstReading", ReadingKind::FirstReading),
                        ("psalm", ReadingKind::ResponsorialPsalm),
                        ("secondReading", ReadingKind::SecondReading),
                        ("gospel", ReadingKind::Gospel),
                    ] {
                        if let Some(reference) = record["readings"][field].as_str() {
                            tally.compare(&label, &masses, kind, reference);
                        }
                    }
                }
            }
        }

        #[test]
        fn shipped_tables_agree_with_the_reference_lectionaries() {
            let Some(dir) = reference_dir() else {
                println!("skipped: no reference folder next to the repository");
                return;
            };
            let lectionary = Lectionary::shipped().unwrap();
            let mut litcal = Tally::default();
            check_litcal(lectionary, &dir, &mut litcal);
            let litcal_share = litcal.report("litcal lectionary (Sundays and seasons)");
            let mut per_date = Tally::default();
            check_per_date(lectionary, &dir, true, &mut per_date);
            let per_date_share =
                per_date.report("per-date readings 2025-2027 (Sundays and seasons)");
            assert!(
                litcal_share >= 0.9,
                "litcal agreement fell to {litcal_share:.3}"
            );
            assert!(
                per_date_share >= 0.9,
                "per-date agreement fell to {per_date_share:.3}"
            );
        }
    }

    #[test]
    fn aliases_reach_the_filed_readings() {
        let lectionary = Lectionary::parse_files([(
            "s.txt",
            "[ordinary_time_3_sunday A]\ngospel: Mt 4:12-23\n",
        )])
        .unwrap();
        assert_eq!(
            lectionary
                .masses("sunday_of_the_word_of_god", "A", "II")
                .len(),
            1
        );
        assert!(lectionary.has("sunday_of_the_word_of_god"));
    }
}
