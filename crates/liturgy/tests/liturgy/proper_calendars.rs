//! The proper calendars: their own days in two years, a transfer, their options, and every
//! entry of their data files found on its date with its rank.

use chrono::{Datelike, NaiveDate, Weekday};
use liturgy::{Calendar, CalendarOptions, Rank, calendar_ids};

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn calendar(id: &str) -> Calendar {
    Calendar::of(id, Calendar::default_options(id).unwrap()).unwrap()
}

/// One proper day of each calendar: (calendar, id, month, day, rank), each checked in 2026 and
/// 2027 as the day's celebration.
const PROPER_DAYS: [(&str, &str, u32, u32, Rank); 16] = [
    ("americas", "our_lady_of_guadalupe", 12, 12, Rank::Feast),
    ("europe", "benedict_of_nursia_abbot", 7, 11, Rank::Feast),
    (
        "united-states",
        "kateri_tekakwitha_virgin",
        7,
        14,
        Rank::Memorial,
    ),
    (
        "canada",
        "john_de_brebeuf_isaac_jogues_priests_and_companions_martyrs",
        9,
        26,
        Rank::Feast,
    ),
    (
        "england-and-wales",
        "george_of_lydda_martyr",
        4,
        23,
        Rank::Solemnity,
    ),
    (
        "ireland",
        "patrick_of_ireland_bishop",
        3,
        17,
        Rank::Solemnity,
    ),
    (
        "australia",
        "our_lady_help_of_christians",
        5,
        24,
        Rank::Solemnity,
    ),
    ("brazil", "our_lady_of_aparecida", 10, 12, Rank::Solemnity),
    ("portugal", "our_lady_of_fatima", 5, 13, Rank::Feast),
    ("poland", "our_lady_queen_of_poland", 5, 3, Rank::Solemnity),
    ("france", "joan_of_arc_virgin", 5, 30, Rank::Memorial),
    (
        "belgium",
        "our_lady_mediatrix_of_all_grace",
        8,
        31,
        Rank::Feast,
    ),
    (
        "netherlands",
        "willibrord_of_utrecht_bishop",
        11,
        7,
        Rank::Solemnity,
    ),
    ("germany", "visitation_of_mary", 7, 2, Rank::Feast),
    ("austria", "john_nepomucene_priest", 5, 16, Rank::Memorial),
    (
        "switzerland",
        "nicholas_of_flue_hermit",
        9,
        25,
        Rank::Solemnity,
    ),
];

#[test]
fn each_calendar_keeps_its_proper_days_in_two_years() {
    let mut checked = 0;
    for (id, celebration, month, day, rank) in PROPER_DAYS {
        let calendar = calendar(id);
        for year in [2026, 2027] {
            let on = calendar.day(date(year, month, day)).unwrap();
            if on.date.weekday() == Weekday::Sun && rank != Rank::Solemnity {
                continue;
            }
            if on.celebration.precedence <= 2 {
                let moved = on
                    .sanctorale
                    .iter()
                    .find(|s| s.celebration.id == celebration);
                let reason = moved.and_then(|s| s.reason.as_deref()).unwrap_or_default();
                assert!(reason.starts_with("transferred to"), "{id} {}", on.date);
                continue;
            }
            assert_eq!(on.celebration.id, celebration, "{id} {}", on.date);
            assert_eq!(on.celebration.rank, rank, "{id} {}", on.date);
            checked += 1;
        }
        let general = Calendar::default().day(date(2026, month, day)).unwrap();
        assert!(
            general.celebration.id != celebration || general.celebration.rank != rank,
            "{id}: {celebration} is no different in the General Roman Calendar"
        );
    }
    assert!(checked >= 24, "only {checked} proper days checked");
}

#[test]
fn a_proper_solemnity_impeded_by_a_sunday_of_easter_is_transferred() {
    // 2022: May 8 is the Fourth Sunday of Easter, so St Stanislaus moves to Monday May 9.
    let poland = calendar("poland");
    let sunday = poland.day(date(2022, 5, 8)).unwrap();
    assert_eq!(sunday.celebration.id, "easter_time_4_sunday");
    let note = sunday
        .sanctorale
        .iter()
        .find(|s| s.celebration.id == "stanislaus_of_szczepanow_bishop")
        .unwrap();
    assert!(!note.celebrated);
    assert!(
        note.reason
            .as_deref()
            .unwrap()
            .contains("transferred to 2022-05-09")
    );
    let monday = poland.day(date(2022, 5, 9)).unwrap();
    assert_eq!(monday.celebration.id, "stanislaus_of_szczepanow_bishop");
    // 2024: December 8 is the Second Sunday of Advent; the United States keep their patroness
    // on Monday December 9.
    let united_states = calendar("united-states");
    let monday = united_states.day(date(2024, 12, 9)).unwrap();
    assert_eq!(
        monday.celebration.id,
        "immaculate_conception_of_the_blessed_virgin_mary"
    );
    // Ireland 2035: St Joseph, anticipated from Holy Week to Saturday 17 March, outranks St
    // Patrick there, who goes to the first free day after the Easter Octave (the Annunciation
    // has the Monday).
    let ireland = calendar("ireland");
    let saturday = ireland.day(date(2035, 3, 17)).unwrap();
    assert_eq!(saturday.celebration.id, "joseph_spouse_of_mary");
    let patrick = saturday
        .sanctorale
        .iter()
        .find(|s| s.celebration.id == "patrick_of_ireland_bishop")
        .unwrap();
    assert_eq!(
        patrick.reason.as_deref(),
        Some(
            "transferred to 2035-04-03 (impeded by Saint Joseph, Spouse of the Blessed Virgin Mary)"
        )
    );
    // England and Wales move Saints Peter and Paul from a Monday to the Sunday before (2026).
    let england = calendar("england-and-wales");
    assert_eq!(
        england.day(date(2026, 6, 28)).unwrap().celebration.id,
        "peter_and_paul_apostles"
    );
    assert_eq!(
        Calendar::default()
            .day(date(2026, 6, 29))
            .unwrap()
            .celebration
            .id,
        "peter_and_paul_apostles"
    );
}

#[test]
fn each_calendar_has_its_conference_options_and_they_can_be_overridden() {
    let ascension = |id: &str, options: CalendarOptions| {
        Calendar::of(id, options)
            .unwrap()
            .year(2026)
            .unwrap()
            .iter()
            .find(|d| d.celebration.id == "ascension_of_the_lord")
            .unwrap()
            .date
    };
    for id in calendar_ids() {
        let options = Calendar::default_options(id).unwrap();
        let expected = if options.ascension_on_sunday {
            date(2026, 5, 17)
        } else {
            date(2026, 5, 14)
        };
        assert_eq!(ascension(id, options), expected, "{id}");
    }
    let poland = Calendar::default_options("poland").unwrap();
    assert!(poland.ascension_on_sunday && !poland.epiphany_on_sunday);
    let thursday = CalendarOptions {
        ascension_on_sunday: false,
        ..poland
    };
    assert_eq!(ascension("poland", thursday), date(2026, 5, 14));
    let united_states = Calendar::default_options("united-states").unwrap();
    assert!(united_states.epiphany_on_sunday && united_states.corpus_christi_on_sunday);
    let germany = Calendar::default_options("germany").unwrap();
    assert_eq!(germany, CalendarOptions::default());
    assert!(matches!(
        Calendar::of("atlantis", CalendarOptions::default()),
        Err(liturgy::LiturgyError::UnknownCalendar { .. })
    ));
}

/// The rank a data-file rank word gives.
fn rank_of(word: &str) -> Rank {
    match word.trim_start_matches("proper_") {
        "solemnity" => Rank::Solemnity,
        "feast" | "feast_of_the_lord" => Rank::Feast,
        "memorial" => Rank::Memorial,
        _ => Rank::OptionalMemorial,
    }
}

/// Every line of every proper calendar's data file is in the computed calendar of 2026 and
/// 2027, on its date (or noted there as moved) and with its rank.
#[test]
fn every_entry_of_the_data_files_is_found_on_its_date_with_its_rank() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/calendars");
    let mut found = 0;
    for id in calendar_ids().skip(1) {
        let text = std::fs::read_to_string(dir.join(format!("{id}.txt"))).unwrap();
        let calendar = calendar(id);
        for line in text
            .lines()
            .filter(|l| !l.starts_with(['#', '@']) && !l.is_empty())
        {
            let fields: Vec<&str> = line.split('|').collect();
            let (rule, entry, rank) = (fields[0], fields[1], rank_of(fields[2]));
            let since: i32 = fields[4].trim_end_matches('-').parse().unwrap();
            for year in [2026, 2027].into_iter().filter(|y| *y >= since) {
                let days = calendar.year(year).unwrap();
                let listed: Vec<_> = days
                    .iter()
                    .flat_map(|d| d.sanctorale.iter().map(move |s| (d.date, s)))
                    .filter(|(_, s)| s.celebration.id == entry)
                    .collect();
                assert!(!listed.is_empty(), "{id} {year}: {entry} missing");
                let (on, status) = listed[0];
                if let Some((month, day)) = rule
                    .split('/')
                    .next()
                    .and_then(|d| d.split_once('-'))
                    .and_then(|(m, d)| Some((m.parse::<u32>().ok()?, d.parse::<u32>().ok()?)))
                    .filter(|_| !rule.contains('/'))
                {
                    assert_eq!(on, date(year, month, day), "{id}: {entry}");
                }
                let reduced = matches!(
                    status.celebration.rank,
                    Rank::Commemoration | Rank::OptionalMemorial
                );
                assert!(
                    status.celebration.rank == rank || reduced,
                    "{id} {year}: {entry} is {:?}, the data says {rank:?}",
                    status.celebration.rank
                );
                found += 1;
            }
        }
    }
    assert!(found > 700, "only {found} entries found");
}

/// In every calendar, each solemnity is kept exactly once a year from 2020 to 2040 (moved when
/// impeded, never lost), and some entry of the calendar's own meets a higher day in those years
/// and says what became of it.
#[test]
fn every_calendar_keeps_each_solemnity_once_and_explains_what_it_moves() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/calendars");
    for id in calendar_ids().skip(1) {
        let text = std::fs::read_to_string(dir.join(format!("{id}.txt"))).unwrap();
        let own: Vec<(&str, bool)> = text
            .lines()
            .filter(|l| !l.starts_with(['#', '@']) && !l.is_empty())
            .map(|l| {
                let fields: Vec<&str> = l.split('|').collect();
                (fields[1], fields[2].ends_with("solemnity"))
            })
            .collect();
        let calendar = calendar(id);
        let mut explained = 0;
        for year in 2020..=2040 {
            let days = calendar.year(year).unwrap();
            for (entry, solemnity) in &own {
                let kept = days.iter().filter(|d| d.celebration.id == *entry).count();
                if *solemnity {
                    assert_eq!(kept, 1, "{id} {year}: {entry} kept {kept} times");
                }
                explained += days
                    .iter()
                    .flat_map(|d| &d.sanctorale)
                    .filter(|s| s.celebration.id == *entry && !s.celebrated)
                    .filter(|s| s.reason.as_deref().is_some_and(|r| !r.is_empty()))
                    .count();
            }
        }
        assert!(
            explained > 0,
            "{id}: none of its entries ever meets a higher day"
        );
    }
}
