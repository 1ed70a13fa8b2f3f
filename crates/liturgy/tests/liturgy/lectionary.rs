//! The Lectionary tables: the shipped files parse, a lookup merges the every-year and cycle
//! sections, a day keeps its several Masses in file order, aliases reach the filed readings, and
//! every fault in a file names the file and line.

use liturgy::citation::{Citation, alternatives};
use liturgy::lectionary::{Lectionary, ReadingKind};

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

#[test]
fn aliases_reach_the_filed_readings() {
    let lectionary =
        Lectionary::parse_files([("s.txt", "[ordinary_time_3_sunday A]\ngospel: Mt 4:12-23\n")])
            .unwrap();
    assert_eq!(
        lectionary
            .masses("sunday_of_the_word_of_god", "A", "II")
            .len(),
        1
    );
    assert!(lectionary.has("sunday_of_the_word_of_god"));
}
