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

/// The Lectionary files the crate ships, as (file name, content), in the order their Masses
/// are listed when an id appears in several: what [`Lectionary::shipped`] parses. Public so that
/// a program can export the tables, check them against another edition, or parse them together
/// with files of its own (a national proper) through [`Lectionary::parse_files`].
pub const SHIPPED_FILES: &[(&str, &str)] = &[
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
            .get_or_init(|| Lectionary::parse_files(SHIPPED_FILES.iter().copied()))
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
