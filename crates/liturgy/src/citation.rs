//! Scripture citations as the Lectionary for Mass writes them (`Is 7:10-14; 8:10`,
//! `Ps 122:1-2, 3-4a, 4b-5`, `Lk 1:57-66, 80`), parsed into a book and verse spans.
//!
//! The Lectionary counts psalms the Hebrew way and letters the Greek additions to Esther, while the
//! public-domain Bible the project installs (Douay-Rheims) follows the Vulgate: a citation keeps the
//! Lectionary's own numbering for display and converts to Douay-Rheims numbering only to fetch text.

use std::fmt;

/// Why a citation could not be understood; the message names the offending text so a data file
/// or a user can be corrected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CitationError {
    /// Nothing to parse.
    #[error("empty citation")]
    Empty,
    /// The book abbreviation is not one of the Lectionary's.
    #[error("unknown book {book:?} in citation {citation:?}")]
    UnknownBook {
        /// The abbreviation as written.
        book: String,
        /// The whole citation.
        citation: String,
    },
    /// The chapter and verse part does not follow the grammar.
    #[error("malformed citation {citation:?}: {reason}")]
    Malformed {
        /// The whole citation.
        citation: String,
        /// What was wrong.
        reason: String,
    },
}

/// A book of the Catholic canon, with the Lectionary abbreviation and the USFM code under which
/// Bible texts store it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Book {
    /// Lectionary (NAB) abbreviation, e.g. `1Sm`.
    pub abbreviation: &'static str,
    /// USFM code, e.g. `1SA`.
    pub usfm: &'static str,
    /// English name, for readable output.
    pub name: &'static str,
}

impl Book {
    /// Books with one chapter are cited by verse alone (`Jude 17, 20b-25`).
    pub fn has_single_chapter(&self) -> bool {
        matches!(self.usfm, "OBA" | "PHM" | "2JN" | "3JN" | "JUD")
    }
}

macro_rules! books {
    ($(($abbr:literal, $usfm:literal, $name:literal)),* $(,)?) => {
        /// Every book, in canonical order.
        pub static BOOKS: &[Book] = &[$(Book { abbreviation: $abbr, usfm: $usfm, name: $name }),*];
    };
}

books![
    ("Gn", "GEN", "Genesis"),
    ("Ex", "EXO", "Exodus"),
    ("Lv", "LEV", "Leviticus"),
    ("Nm", "NUM", "Numbers"),
    ("Dt", "DEU", "Deuteronomy"),
    ("Jos", "JOS", "Joshua"),
    ("Jgs", "JDG", "Judges"),
    ("Ru", "RUT", "Ruth"),
    ("1Sm", "1SA", "1 Samuel"),
    ("2Sm", "2SA", "2 Samuel"),
    ("1Kgs", "1KI", "1 Kings"),
    ("2Kgs", "2KI", "2 Kings"),
    ("1Chr", "1CH", "1 Chronicles"),
    ("2Chr", "2CH", "2 Chronicles"),
    ("Ezr", "EZR", "Ezra"),
    ("Neh", "NEH", "Nehemiah"),
    ("Tb", "TOB", "Tobit"),
    ("Jdt", "JDT", "Judith"),
    ("Est", "EST", "Esther"),
    ("1Mc", "1MA", "1 Maccabees"),
    ("2Mc", "2MA", "2 Maccabees"),
    ("Jb", "JOB", "Job"),
    ("Ps", "PSA", "Psalms"),
    ("Prv", "PRO", "Proverbs"),
    ("Eccl", "ECC", "Ecclesiastes"),
    ("Sg", "SNG", "Song of Songs"),
    ("Wis", "WIS", "Wisdom"),
    ("Sir", "SIR", "Sirach"),
    ("Is", "ISA", "Isaiah"),
    ("Jer", "JER", "Jeremiah"),
    ("Lam", "LAM", "Lamentations"),
    ("Bar", "BAR", "Baruch"),
    ("Ez", "EZK", "Ezekiel"),
    ("Dn", "DAN", "Daniel"),
    ("Hos", "HOS", "Hosea"),
    ("Jl", "JOL", "Joel"),
    ("Am", "AMO", "Amos"),
    ("Ob", "OBA", "Obadiah"),
    ("Jon", "JON", "Jonah"),
    ("Mi", "MIC", "Micah"),
    ("Na", "NAM", "Nahum"),
    ("Hb", "HAB", "Habakkuk"),
    ("Zep", "ZEP", "Zephaniah"),
    ("Hg", "HAG", "Haggai"),
    ("Zec", "ZEC", "Zechariah"),
    ("Mal", "MAL", "Malachi"),
    ("Mt", "MAT", "Matthew"),
    ("Mk", "MRK", "Mark"),
    ("Lk", "LUK", "Luke"),
    ("Jn", "JHN", "John"),
    ("Acts", "ACT", "Acts of the Apostles"),
    ("Rom", "ROM", "Romans"),
    ("1Cor", "1CO", "1 Corinthians"),
    ("2Cor", "2CO", "2 Corinthians"),
    ("Gal", "GAL", "Galatians"),
    ("Eph", "EPH", "Ephesians"),
    ("Phil", "PHP", "Philippians"),
    ("Col", "COL", "Colossians"),
    ("1Thes", "1TH", "1 Thessalonians"),
    ("2Thes", "2TH", "2 Thessalonians"),
    ("1Tm", "1TI", "1 Timothy"),
    ("2Tm", "2TI", "2 Timothy"),
    ("Ti", "TIT", "Titus"),
    ("Phlm", "PHM", "Philemon"),
    ("Heb", "HEB", "Hebrews"),
    ("Jas", "JAS", "James"),
    ("1Pt", "1PE", "1 Peter"),
    ("2Pt", "2PE", "2 Peter"),
    ("1Jn", "1JN", "1 John"),
    ("2Jn", "2JN", "2 John"),
    ("3Jn", "3JN", "3 John"),
    ("Jude", "JUD", "Jude"),
    ("Rv", "REV", "Revelation"),
];

/// The book with this Lectionary abbreviation (spaces ignored, so `1 Sm` works too).
pub fn book_by_abbreviation(abbreviation: &str) -> Option<&'static Book> {
    let compact: String = abbreviation
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    BOOKS
        .iter()
        .find(|b| b.abbreviation.eq_ignore_ascii_case(&compact))
}

/// The book stored under this USFM code.
pub fn book_by_usfm(usfm: &str) -> Option<&'static Book> {
    BOOKS.iter().find(|b| b.usfm == usfm)
}

/// A verse position; `verse` is `u32::MAX` for "to the end of the chapter".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VerseRef {
    /// Chapter number.
    pub chapter: u32,
    /// Verse number; part-verse letters are dropped.
    pub verse: u32,
}

/// A contiguous run of verses, inclusive at both ends, possibly across chapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First verse.
    pub start: VerseRef,
    /// Last verse.
    pub end: VerseRef,
}

/// A parsed citation. The original text is kept because part-verse letters and the Lectionary's
/// numbering are what people expect to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    text: String,
    book: &'static Book,
    spans: Vec<Span>,
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Citation {
    type Err = CitationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Citation::parse(s)
    }
}

impl Citation {
    /// Parses one citation (no ` | ` alternatives: split those first).
    pub fn parse(text: &str) -> Result<Citation, CitationError> {
        let trimmed = text.trim();
        let body = strip_cf(trimmed);
        if body.is_empty() {
            return Err(CitationError::Empty);
        }
        let (book, rest) = split_book(body, trimmed)?;
        let spans = parse_spans(book, rest).map_err(|reason| CitationError::Malformed {
            citation: trimmed.to_string(),
            reason,
        })?;
        Ok(Citation {
            text: trimmed.to_string(),
            book,
            spans,
        })
    }

    /// The citation as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The book cited.
    pub fn book(&self) -> &'static Book {
        self.book
    }

    /// The verse spans in the Lectionary's numbering (Hebrew psalms, lettered Esther additions
    /// already resolved to Vulgate chapters).
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// The verse spans in Douay-Rheims (Vulgate) numbering, for fetching text. Only the Psalms
    /// differ: a span whose ends fall in different Douay psalms still reads correctly in canonical
    /// order (Hebrew 116:5-12 becomes Douay 114:5 to 115:12).
    pub fn douay_rheims_spans(&self) -> Vec<Span> {
        if self.book.usfm != "PSA" {
            return self.spans.clone();
        }
        self.spans
            .iter()
            .map(|span| Span {
                start: hebrew_psalm_to_douay(span.start, false),
                end: hebrew_psalm_to_douay(span.end, true),
            })
            .collect()
    }
}

/// Maps a Hebrew-numbered psalm verse to the Douay-Rheims psalm and verse. Where two Hebrew psalms
/// share one Douay psalm (9–10, 114–115) the second one's verses follow the first's.
fn hebrew_psalm_to_douay(at: VerseRef, is_end: bool) -> VerseRef {
    let VerseRef { chapter, verse } = at;
    let whole = verse == u32::MAX;
    let shifted = |psalm: u32, offset: u32| VerseRef {
        chapter: psalm,
        verse: if whole { u32::MAX } else { verse + offset },
    };
    match chapter {
        1..=8 | 148.. => at,
        9 => at,
        10 => shifted(9, 21),
        11..=113 => shifted(chapter - 1, 0),
        114 => {
            if whole && is_end {
                VerseRef {
                    chapter: 113,
                    verse: 8,
                }
            } else {
                shifted(113, 0)
            }
        }
        115 => shifted(113, 8),
        116 => {
            if whole {
                let psalm = if is_end { 115 } else { 114 };
                VerseRef {
                    chapter: psalm,
                    verse: if is_end { u32::MAX } else { 1 },
                }
            } else if verse <= 9 {
                shifted(114, 0)
            } else {
                shifted(115, 0)
            }
        }
        117..=146 => shifted(chapter - 1, 0),
        147 => {
            if whole {
                let psalm = if is_end { 147 } else { 146 };
                VerseRef {
                    chapter: psalm,
                    verse: if is_end { u32::MAX } else { 1 },
                }
            } else if verse <= 11 {
                shifted(146, 0)
            } else {
                shifted(147, 0)
            }
        }
        0 => at,
    }
}

fn strip_cf(text: &str) -> &str {
    for prefix in ["Cf.", "cf.", "See"] {
        if let Some(rest) = text.strip_prefix(prefix) {
            return rest.trim_start();
        }
    }
    text
}

/// Splits `1 Sm 2:1` into the book and `2:1`: the book is everything up to the first space
/// followed by a digit (a leading digit belongs to the book name).
fn split_book<'a>(body: &'a str, whole: &str) -> Result<(&'static Book, &'a str), CitationError> {
    let bytes = body.as_bytes();
    let mut split_at = None;
    for (index, window) in bytes.windows(2).enumerate() {
        let after_space_is_reference =
            window[0] == b' ' && (window[1].is_ascii_digit() || is_esther_letter(window[1]));
        if after_space_is_reference && index > 0 {
            let book_part = &body[..index];
            if book_by_abbreviation(book_part).is_some() {
                split_at = Some(index);
                break;
            }
        }
    }
    let index = split_at.ok_or_else(|| {
        let book = body.split(' ').next().unwrap_or(body).to_string();
        if book_by_abbreviation(&book).is_some() {
            CitationError::Malformed {
                citation: whole.to_string(),
                reason: "no chapter or verse".into(),
            }
        } else {
            CitationError::UnknownBook {
                book,
                citation: whole.to_string(),
            }
        }
    })?;
    let book = book_by_abbreviation(&body[..index]).ok_or_else(|| CitationError::UnknownBook {
        book: body[..index].to_string(),
        citation: whole.to_string(),
    })?;
    Ok((book, body[index..].trim()))
}

fn is_esther_letter(byte: u8) -> bool {
    (b'A'..=b'F').contains(&byte)
}

/// A reference as written: chapter (possibly an Esther letter) and verse.
#[derive(Clone, Copy)]
struct Written {
    chapter: WrittenChapter,
    verse: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum WrittenChapter {
    Number(u32),
    EstherAddition(char),
}

fn parse_spans(book: &'static Book, rest: &str) -> Result<Vec<Span>, String> {
    let mut spans = Vec::new();
    let mut current_chapter: Option<WrittenChapter> = book
        .has_single_chapter()
        .then_some(WrittenChapter::Number(1));
    for (group_index, group) in rest.split(';').enumerate() {
        let group = group.trim();
        if group.is_empty() {
            return Err("empty part between semicolons".into());
        }
        for (item_index, item) in group.split(',').enumerate() {
            let item = item.trim();
            if item.is_empty() {
                return Err("empty part between commas".into());
            }
            let must_name_chapter =
                item_index == 0 && !(group_index == 0 && book.has_single_chapter());
            let (first, last) = match item.split_once('-') {
                Some((from, to)) => (from.trim(), Some(to.trim())),
                None => (item, None),
            };
            let start = parse_point(first, current_chapter, must_name_chapter, book)?;
            current_chapter = Some(start.chapter);
            let end = match last {
                Some(to) => {
                    let point = parse_point(to, current_chapter, false, book)?;
                    current_chapter = Some(point.chapter);
                    point
                }
                None => start,
            };
            spans.push(resolve(book, start, end)?);
        }
    }
    Ok(spans)
}

/// Parses `12`, `12b`, `3:4`, `3:4cd`, `C:12` or (for a whole chapter) `23` with no colon where
/// a chapter is expected.
fn parse_point(
    text: &str,
    current_chapter: Option<WrittenChapter>,
    must_name_chapter: bool,
    book: &Book,
) -> Result<Written, String> {
    match text.split_once(':') {
        Some((chapter, verse)) => Ok(Written {
            chapter: parse_chapter(chapter.trim(), book)?,
            verse: parse_verse(verse.trim())?,
        }),
        None if must_name_chapter || current_chapter.is_none() => Ok(Written {
            chapter: parse_chapter(text, book)?,
            verse: u32::MAX,
        }),
        None => Ok(Written {
            chapter: current_chapter.ok_or("verse without chapter")?,
            verse: parse_verse(text)?,
        }),
    }
}

fn parse_chapter(text: &str, book: &Book) -> Result<WrittenChapter, String> {
    if book.usfm == "EST" && text.len() == 1 && is_esther_letter(text.as_bytes()[0]) {
        return Ok(WrittenChapter::EstherAddition(
            text.chars().next().unwrap_or('A'),
        ));
    }
    match text.parse::<u32>() {
        Ok(chapter) if chapter > 0 => Ok(WrittenChapter::Number(chapter)),
        _ => Err(format!("bad chapter {text:?}")),
    }
}

fn parse_verse(text: &str) -> Result<u32, String> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, letters) = text.split_at(digits_end);
    let verse = digits
        .parse::<u32>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("bad verse {text:?}"))?;
    if letters.chars().all(|c| ('a'..='g').contains(&c)) {
        Ok(verse)
    } else {
        Err(format!("bad verse {text:?}"))
    }
}

fn resolve(book: &Book, start: Written, end: Written) -> Result<Span, String> {
    let start = to_numbered(book, start)?;
    let end = to_numbered(book, end)?;
    let start = if start.verse == u32::MAX {
        VerseRef {
            chapter: start.chapter,
            verse: 1,
        }
    } else {
        start
    };
    if end < start {
        return Err(format!(
            "range ends before it starts ({}:{} - {}:{})",
            start.chapter, start.verse, end.chapter, end.verse
        ));
    }
    Ok(Span { start, end })
}

/// Converts a written point to numbered chapters; the lettered additions to Esther become the
/// Vulgate chapters 10–16 where they stand in the Douay-Rheims.
fn to_numbered(book: &Book, point: Written) -> Result<VerseRef, String> {
    match point.chapter {
        WrittenChapter::Number(chapter) => Ok(VerseRef {
            chapter,
            verse: point.verse,
        }),
        WrittenChapter::EstherAddition(letter) => {
            if book.usfm != "EST" {
                return Err("lettered chapters exist only in Esther".into());
            }
            if point.verse == u32::MAX {
                return Err(format!("cite verses of Esther {letter}"));
            }
            esther_addition(letter, point.verse)
                .ok_or_else(|| format!("no verse {letter}:{} in Esther", point.verse))
        }
    }
}

/// Where the verses of the Greek additions to Esther (NAB letters A–F) stand in the Vulgate.
fn esther_addition(letter: char, verse: u32) -> Option<VerseRef> {
    let at = |chapter, verse| Some(VerseRef { chapter, verse });
    match (letter, verse) {
        ('A', 1..=11) => at(11, verse + 1),
        ('A', 12..=17) => at(12, verse - 11),
        ('B', 1..=7) => at(13, verse),
        ('C', 1..=11) => at(13, verse + 7),
        ('C', 12..=30) => at(14, verse - 11),
        ('D', 1..=16) => at(15, verse + 3),
        ('E', 1..=24) => at(16, verse),
        ('F', 1..=10) => at(10, verse + 3),
        ('F', 11) => at(11, 1),
        _ => None,
    }
}

/// Splits a Lectionary value into its alternatives (` | `), the first being the default.
pub fn alternatives(value: &str) -> impl Iterator<Item = &str> {
    value.split('|').map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(c1: u32, v1: u32, c2: u32, v2: u32) -> Span {
        Span {
            start: VerseRef {
                chapter: c1,
                verse: v1,
            },
            end: VerseRef {
                chapter: c2,
                verse: v2,
            },
        }
    }

    #[test]
    fn parses_semicolons_and_chapter_changes() {
        let c = Citation::parse("Is 7:10-14; 8:10").unwrap();
        assert_eq!(c.book().usfm, "ISA");
        assert_eq!(c.spans(), &[span(7, 10, 7, 14), span(8, 10, 8, 10)]);
        assert_eq!(c.text(), "Is 7:10-14; 8:10");
    }

    #[test]
    fn drops_verse_letters_and_keeps_chapter_after_commas() {
        let c = Citation::parse("Ps 122:1-2, 3-4a, 4b-5").unwrap();
        assert_eq!(
            c.spans(),
            &[
                span(122, 1, 122, 2),
                span(122, 3, 122, 4),
                span(122, 4, 122, 5)
            ]
        );
        let c = Citation::parse("Lk 1:57-66, 80").unwrap();
        assert_eq!(c.spans(), &[span(1, 57, 1, 66), span(1, 80, 1, 80)]);
        let c = Citation::parse("Dn 3:52, 53, 54").unwrap();
        assert_eq!(c.spans().len(), 3);
    }

    #[test]
    fn cross_chapter_ranges_carry_the_new_chapter() {
        let c = Citation::parse("Mt 26:14-27:66").unwrap();
        assert_eq!(c.book().usfm, "MAT");
        assert_eq!(c.spans(), &[span(26, 14, 27, 66)]);
        let c = Citation::parse("Gn 1:1-2:2, 4").unwrap();
        assert_eq!(c.spans(), &[span(1, 1, 2, 2), span(2, 4, 2, 4)]);
    }

    #[test]
    fn numbered_books_single_chapter_books_and_cf() {
        assert_eq!(
            Citation::parse("1Sm 3:3b-10, 19").unwrap().book().usfm,
            "1SA"
        );
        assert_eq!(Citation::parse("1 Cor 13:4").unwrap().book().usfm, "1CO");
        let jude = Citation::parse("Jude 17, 20b-25").unwrap();
        assert_eq!(jude.spans(), &[span(1, 17, 1, 17), span(1, 20, 1, 25)]);
        assert_eq!(
            Citation::parse("Cf. Ps 85:8").unwrap().spans(),
            &[span(85, 8, 85, 8)]
        );
        let whole = Citation::parse("Ps 117").unwrap();
        assert_eq!(whole.spans(), &[span(117, 1, 117, u32::MAX)]);
    }

    #[test]
    fn psalms_map_to_douay_rheims_numbering() {
        let dr = |text: &str| Citation::parse(text).unwrap().douay_rheims_spans();
        assert_eq!(dr("Ps 23:1-3"), vec![span(22, 1, 22, 3)]);
        assert_eq!(dr("Ps 8:4"), vec![span(8, 4, 8, 4)]);
        assert_eq!(dr("Ps 10:1"), vec![span(9, 22, 9, 22)]);
        assert_eq!(dr("Ps 115:1"), vec![span(113, 9, 113, 9)]);
        assert_eq!(dr("Ps 116:5-12"), vec![span(114, 5, 115, 12)]);
        assert_eq!(dr("Ps 147:12-13"), vec![span(147, 12, 147, 13)]);
        assert_eq!(dr("Ps 147:1-2"), vec![span(146, 1, 146, 2)]);
        assert_eq!(dr("Ps 150:1"), vec![span(150, 1, 150, 1)]);
        assert_eq!(dr("Is 12:2"), vec![span(12, 2, 12, 2)]);
    }

    #[test]
    fn esther_additions_resolve_to_vulgate_chapters() {
        let c = Citation::parse("Est C:12, 14-16, 23-25").unwrap();
        assert_eq!(
            c.spans(),
            &[span(14, 1, 14, 1), span(14, 3, 14, 5), span(14, 12, 14, 14)]
        );
        assert!(matches!(
            Citation::parse("Est C:40"),
            Err(CitationError::Malformed { .. })
        ));
    }

    #[test]
    fn rejects_bad_input_with_clear_errors() {
        assert_eq!(Citation::parse("  "), Err(CitationError::Empty));
        assert!(matches!(
            Citation::parse("Xyz 1:1"),
            Err(CitationError::UnknownBook { .. })
        ));
        for bad in [
            "Is",
            "Is 7:",
            "Is 7:14-",
            "Is 7:14-10",
            "Is 7:1x",
            "Is 0:1",
            "Is 7:1,,2",
        ] {
            assert!(
                matches!(Citation::parse(bad), Err(CitationError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn alternatives_split_on_bars() {
        let parts: Vec<_> = alternatives("Mt 26:14-27:66 | Mt 27:11-54").collect();
        assert_eq!(parts, vec!["Mt 26:14-27:66", "Mt 27:11-54"]);
    }
}
