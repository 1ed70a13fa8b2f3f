//! The calendar against known dates, against its own invariants over 1970–2200, and (when the
//! shared reference folder is present) against romcal's output day by day; the proper calendars
//! (`proper_calendars`); the Lectionary tables (`lectionary`) and, with the same folder, their
//! agreement with two public lectionaries (`lectionary_reference`).
//!
//! Run the reference comparisons alone, with their figures:
//! `cargo test -p liturgy --test liturgy reference -- --nocapture`

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{Datelike, Days, NaiveDate, Weekday};
use liturgy::{
    Calendar, CalendarOptions, Color, LiturgicalDay, Rank, Season, SundayCycle, WeekdayCycle,
};

#[path = "liturgy/lectionary.rs"]
mod lectionary;
#[path = "liturgy/lectionary_reference.rs"]
mod lectionary_reference;
#[path = "liturgy/proper_calendars.rs"]
mod proper_calendars;

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn grc() -> Calendar {
    Calendar::default()
}

fn all_sunday_options() -> CalendarOptions {
    CalendarOptions {
        epiphany_on_sunday: true,
        ascension_on_sunday: true,
        corpus_christi_on_sunday: true,
    }
}

fn id_on(calendar: &Calendar, y: i32, m: u32, d: u32) -> String {
    calendar.day(date(y, m, d)).unwrap().celebration.id
}

fn status_of<'a>(day: &'a LiturgicalDay, id: &str) -> &'a liturgy::SanctoraleStatus {
    day.sanctorale
        .iter()
        .find(|s| s.celebration.id == id)
        .unwrap_or_else(|| panic!("{id} not listed on {}: {:#?}", day.date, day.sanctorale))
}

#[test]
fn easter_dates() {
    for (year, m, d) in [
        (2024, 3, 31),
        (2025, 4, 20),
        (2026, 4, 5),
        (2027, 3, 28),
        (2028, 4, 16),
        (2029, 4, 1),
        (2030, 4, 21),
        (2031, 4, 13),
        (2032, 3, 28),
        (2035, 3, 25),
        (2038, 4, 25),
        (2008, 3, 23),
        (2285, 3, 22),
    ] {
        assert_eq!(Calendar::easter(year).unwrap(), date(year, m, d), "{year}");
    }
    assert!(Calendar::easter(1969).is_err());
    assert!(Calendar::easter(10_000).is_err());
}

#[test]
fn movable_celebrations_of_2026() {
    let calendar = grc();
    for ((m, d), id) in [
        ((2, 18), "ash_wednesday"),
        ((3, 29), "palm_sunday_of_the_passion_of_the_lord"),
        ((4, 2), "thursday_of_the_lords_supper"),
        ((4, 3), "friday_of_the_passion_of_the_lord"),
        ((4, 4), "holy_saturday"),
        ((4, 5), "easter_sunday"),
        ((4, 6), "easter_monday"),
        ((4, 12), "divine_mercy_sunday"),
        ((5, 14), "ascension_of_the_lord"),
        ((5, 24), "pentecost_sunday"),
        ((5, 25), "mary_mother_of_the_church"),
        ((5, 31), "most_holy_trinity"),
        ((6, 4), "most_holy_body_and_blood_of_christ"),
        ((6, 12), "most_sacred_heart_of_jesus"),
        ((11, 22), "our_lord_jesus_christ_king_of_the_universe"),
        ((11, 29), "advent_1_sunday"),
        ((12, 17), "advent_december_17"),
        ((12, 25), "nativity_of_the_lord"),
        ((12, 27), "holy_family_of_jesus_mary_and_joseph"),
        ((1, 1), "mary_mother_of_god"),
        ((1, 4), "second_sunday_after_christmas"),
        ((1, 5), "christmas_time_january_5"),
        ((1, 6), "epiphany_of_the_lord"),
        ((1, 7), "wednesday_after_epiphany"),
        ((1, 11), "baptism_of_the_lord"),
        ((1, 12), "ordinary_time_1_monday"),
        ((1, 25), "sunday_of_the_word_of_god"),
    ] {
        assert_eq!(id_on(&calendar, 2026, m, d), id, "2026-{m:02}-{d:02}");
    }
    let baptism = calendar.day(date(2026, 1, 11)).unwrap().celebration;
    assert_eq!((baptism.rank, baptism.precedence), (Rank::Feast, 5));
    let word = calendar.day(date(2026, 1, 25)).unwrap();
    assert_eq!(word.temporal_id, "ordinary_time_3_sunday");
}

#[test]
fn seasons_weeks_colours_and_cycles() {
    let calendar = grc();
    let day = |y, m, d| calendar.day(date(y, m, d)).unwrap();
    let advent = day(2026, 12, 8);
    assert_eq!(advent.season, Season::Advent);
    assert_eq!(advent.week, Some(2));
    assert_eq!(advent.temporal_id, "advent_2_tuesday");
    assert_eq!(day(2026, 12, 13).celebration.color, Color::Rose);
    assert_eq!(day(2026, 3, 15).celebration.color, Color::Rose);
    assert_eq!(day(2026, 3, 29).celebration.color, Color::Red);
    assert_eq!(day(2026, 5, 24).celebration.color, Color::Red);
    assert_eq!(day(2026, 2, 18).celebration.color, Color::Violet);
    assert_eq!(day(2026, 7, 7).celebration.color, Color::Green);
    assert_eq!(day(2026, 4, 3).season, Season::PaschalTriduum);
    assert_eq!(day(2026, 2, 19).week, Some(0));
    assert_eq!(day(2026, 2, 19).temporal_id, "thursday_after_ash_wednesday");

    let tenth = day(2026, 6, 7);
    assert_eq!(tenth.celebration.id, "ordinary_time_10_sunday");
    assert_eq!(tenth.week, Some(10));
    assert_eq!(day(2026, 5, 25).temporal_id, "ordinary_time_8_monday");
    assert_eq!(day(2026, 11, 22).week, Some(34));

    let before = day(2026, 11, 28);
    assert_eq!(
        (before.sunday_cycle, before.weekday_cycle),
        (SundayCycle::A, WeekdayCycle::II)
    );
    let after = day(2026, 11, 29);
    assert_eq!(
        (after.sunday_cycle, after.weekday_cycle),
        (SundayCycle::B, WeekdayCycle::I)
    );
    assert_eq!(day(2027, 12, 1).sunday_cycle, SundayCycle::C);
}

#[test]
fn impeded_solemnities_are_transferred() {
    let calendar = grc();
    // Immaculate Conception on the Second Sunday of Advent.
    assert_eq!(id_on(&calendar, 2024, 12, 8), "advent_2_sunday");
    assert_eq!(
        id_on(&calendar, 2024, 12, 9),
        "immaculate_conception_of_the_blessed_virgin_mary"
    );
    let origin = calendar.day(date(2024, 12, 8)).unwrap();
    let note = status_of(&origin, "immaculate_conception_of_the_blessed_virgin_mary");
    assert!(!note.celebrated);
    assert!(
        note.reason
            .as_deref()
            .unwrap()
            .starts_with("transferred to 2024-12-09")
    );
    // St Joseph in Holy Week, then on a Sunday of Lent.
    assert_eq!(id_on(&calendar, 2035, 3, 17), "joseph_spouse_of_mary");
    assert_eq!(id_on(&calendar, 2035, 3, 19), "holy_monday");
    let anticipated = calendar.day(date(2035, 3, 17)).unwrap();
    assert_eq!(
        status_of(&anticipated, "joseph_spouse_of_mary")
            .reason
            .as_deref(),
        Some("anticipated from 2035-03-19")
    );
    assert_eq!(id_on(&calendar, 2008, 3, 15), "joseph_spouse_of_mary");
    assert_eq!(id_on(&calendar, 2028, 3, 20), "joseph_spouse_of_mary");
    // Annunciation in Holy Week or the Easter octave: Monday after Divine Mercy Sunday.
    assert_eq!(id_on(&calendar, 2024, 4, 8), "annunciation_of_the_lord");
    assert_eq!(id_on(&calendar, 2008, 3, 31), "annunciation_of_the_lord");
    assert_eq!(id_on(&calendar, 2035, 4, 2), "annunciation_of_the_lord");
    // John the Baptist meeting the Sacred Heart (2022, 2033, 2044) or Corpus Christi (2038).
    for year in [2022, 2033, 2038, 2044] {
        assert_eq!(
            id_on(&calendar, year, 6, 23),
            "nativity_of_john_the_baptist",
            "{year}"
        );
        let day = calendar.day(date(year, 6, 24)).unwrap();
        assert_ne!(day.celebration.id, "nativity_of_john_the_baptist");
        assert!(
            status_of(&day, "nativity_of_john_the_baptist")
                .reason
                .as_deref()
                .unwrap()
                .starts_with(&format!("anticipated to {year}-06-23"))
        );
    }
    assert_eq!(
        id_on(&calendar, 2028, 6, 24),
        "nativity_of_john_the_baptist"
    );
    assert_eq!(id_on(&calendar, 2030, 6, 29), "peter_and_paul_apostles");
    assert_eq!(id_on(&calendar, 2038, 7, 3), "thomas_apostle");
}

#[test]
fn feasts_and_sundays() {
    let calendar = grc();
    // Feasts of the Lord replace the Sundays of Ordinary Time.
    assert_eq!(id_on(&calendar, 2023, 8, 6), "transfiguration_of_the_lord");
    assert_eq!(
        id_on(&calendar, 2025, 11, 9),
        "dedication_of_the_lateran_basilica"
    );
    assert_eq!(
        id_on(&calendar, 2025, 9, 14),
        "exaltation_of_the_holy_cross"
    );
    assert_eq!(id_on(&calendar, 2025, 2, 2), "presentation_of_the_lord");
    // Other feasts on a Sunday are omitted.
    let andrew = calendar.day(date(2025, 11, 30)).unwrap();
    assert_eq!(andrew.celebration.id, "advent_1_sunday");
    assert!(!status_of(&andrew, "andrew_apostle").celebrated);
    let luke = calendar.day(date(2026, 10, 18)).unwrap();
    assert_eq!(luke.celebration.id, "ordinary_time_29_sunday");
    assert_eq!(
        status_of(&luke, "luke_evangelist").reason.as_deref(),
        Some("impeded by the Twenty-ninth Sunday in Ordinary Time")
    );
    // All Souls is kept on a Sunday; solemnities replace Sundays of Ordinary Time.
    assert_eq!(
        id_on(&calendar, 2025, 11, 2),
        "commemoration_of_all_the_faithful_departed"
    );
    assert_eq!(id_on(&calendar, 2026, 11, 1), "all_saints");
    // Holy Family on Dec 30 when Christmas is a Sunday.
    assert_eq!(
        id_on(&calendar, 2022, 12, 30),
        "holy_family_of_jesus_mary_and_joseph"
    );
    assert_eq!(
        id_on(&calendar, 2021, 12, 26),
        "holy_family_of_jesus_mary_and_joseph"
    );
}

#[test]
fn memorials_vanish_become_commemorations_or_optional() {
    let calendar = grc();
    // On a Sunday: omitted.
    let sunday = calendar.day(date(2026, 6, 21)).unwrap();
    assert!(!status_of(&sunday, "aloysius_gonzaga_religious").celebrated);
    // In Lent: a commemoration, offered as an option.
    let lent = calendar.day(date(2026, 3, 7)).unwrap();
    assert_eq!(lent.celebration.id, "lent_2_saturday");
    let perpetua = status_of(
        &lent,
        "perpetua_of_carthage_and_felicity_of_carthage_martyrs",
    );
    assert!(perpetua.celebrated);
    assert_eq!(perpetua.celebration.rank, Rank::Commemoration);
    assert_eq!(
        perpetua.reason.as_deref(),
        Some("kept as a commemoration in Lent")
    );
    assert_eq!(lent.optional_memorials.len(), 1);
    // Dec 17–24 and the Christmas octave.
    let canisius = calendar.day(date(2026, 12, 21)).unwrap();
    assert_eq!(canisius.celebration.id, "advent_december_21");
    assert_eq!(canisius.optional_memorials[0].rank, Rank::Commemoration);
    let becket = calendar.day(date(2026, 12, 29)).unwrap();
    assert_eq!(becket.optional_memorials[0].id, "thomas_becket_bishop");
    // Holy Week and the Easter octave: dropped altogether.
    let octave = calendar.day(date(2027, 4, 2)).unwrap();
    assert!(octave.optional_memorials.is_empty());
    // Two obligatory memorials: both optional.
    let anthony = calendar.day(date(2026, 6, 13)).unwrap();
    assert_eq!(anthony.celebration.id, "ordinary_time_10_saturday");
    let mut ids: Vec<_> = anthony
        .optional_memorials
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["anthony_of_padua_priest", "immaculate_heart_of_mary"]);
    assert!(
        anthony
            .optional_memorials
            .iter()
            .all(|c| c.rank == Rank::OptionalMemorial)
    );
    assert!(
        status_of(&anthony, "anthony_of_padua_priest")
            .reason
            .as_deref()
            .unwrap()
            .starts_with("reduced to an optional memorial: coincides with")
    );
    // Mary, Mother of the Church prevails over another memorial.
    let justin = calendar.day(date(2020, 6, 1)).unwrap();
    assert_eq!(justin.celebration.id, "mary_mother_of_the_church");
    assert!(!status_of(&justin, "justin_martyr").celebrated);
    // An obligatory memorial outranks a plain weekday; optional ones stay options.
    assert_eq!(id_on(&calendar, 2026, 1, 28), "thomas_aquinas_priest");
    let weekday = calendar.day(date(2026, 1, 20)).unwrap();
    assert_eq!(weekday.celebration.rank, Rank::Weekday);
    assert_eq!(weekday.optional_memorials.len(), 2);
}

#[test]
fn the_calendar_changes_with_the_decrees() {
    let calendar = grc();
    let monday_after_pentecost_2017 = calendar.day(date(2017, 6, 5)).unwrap();
    assert_eq!(
        monday_after_pentecost_2017.celebration.id,
        "boniface_of_mainz_bishop"
    );
    assert_eq!(monday_after_pentecost_2017.sanctorale.len(), 1);
    assert_eq!(id_on(&calendar, 2018, 5, 21), "mary_mother_of_the_church");
    let teresa = |year| {
        calendar
            .day(date(year, 9, 5))
            .unwrap()
            .sanctorale
            .iter()
            .any(|s| s.celebration.id == "teresa_of_calcutta_virgin")
    };
    assert!(!teresa(2024));
    assert!(teresa(2025));
    assert_eq!(id_on(&calendar, 2015, 7, 22), "mary_magdalene");
    assert_eq!(
        calendar.day(date(2015, 7, 22)).unwrap().celebration.rank,
        Rank::Memorial
    );
    assert_eq!(
        calendar.day(date(2016, 7, 22)).unwrap().celebration.rank,
        Rank::Feast
    );
    assert_eq!(id_on(&calendar, 2020, 7, 29), "martha_of_bethany");
    assert_eq!(
        id_on(&calendar, 2021, 7, 29),
        "martha_of_bethany_mary_of_bethany_and_lazarus_of_bethany"
    );
    let chantal = |y, m, d| {
        calendar
            .day(date(y, m, d))
            .unwrap()
            .optional_memorials
            .iter()
            .any(|c| c.id == "jane_frances_de_chantal_religious")
    };
    assert!(chantal(2001, 12, 12));
    assert!(!chantal(2002, 12, 12));
    assert!(chantal(2003, 8, 12));
}

#[test]
fn sunday_options() {
    let calendar = Calendar::new(all_sunday_options());
    assert_eq!(id_on(&calendar, 2024, 1, 7), "epiphany_of_the_lord");
    assert_eq!(id_on(&calendar, 2024, 1, 8), "baptism_of_the_lord");
    assert_eq!(id_on(&calendar, 2029, 1, 8), "baptism_of_the_lord");
    assert_eq!(id_on(&calendar, 2026, 1, 4), "epiphany_of_the_lord");
    assert_eq!(id_on(&calendar, 2026, 1, 11), "baptism_of_the_lord");
    assert_eq!(id_on(&calendar, 2026, 5, 17), "ascension_of_the_lord");
    let thursday = calendar.day(date(2026, 5, 14)).unwrap();
    assert_eq!(thursday.temporal_id, "easter_time_6_thursday");
    assert_eq!(thursday.celebration.id, "matthias_apostle");
    assert_eq!(
        id_on(&calendar, 2026, 6, 7),
        "most_holy_body_and_blood_of_christ"
    );
    // John the Baptist no longer meets Corpus Christi in 2038.
    assert_eq!(
        id_on(&calendar, 2038, 6, 24),
        "nativity_of_john_the_baptist"
    );
    assert_eq!(calendar.options(), all_sunday_options());
}

#[test]
fn years_outside_the_rite_are_refused() {
    assert!(grc().day(date(1969, 12, 31)).is_err());
    assert!(grc().day(date(10_000, 1, 1)).is_err());
    assert!(grc().day(date(9999, 12, 31)).is_ok());
}

/// Every day from 1970 to 2200: one named principal celebration, a sane precedence, cycles
/// that change only on the First Sunday of Advent, Easter between March 22 and April 25.
#[test]
fn invariants_from_1970_to_2200() {
    let calendar = grc();
    let started = std::time::Instant::now();
    let mut previous: Option<LiturgicalDay> = None;
    for year in 1970..=2200 {
        let easter = Calendar::easter(year).unwrap();
        assert!(
            easter >= date(year, 3, 22) && easter <= date(year, 4, 25),
            "{easter}"
        );
        assert_eq!(easter.weekday(), Weekday::Sun);
        let days = calendar.year(year).unwrap();
        assert_eq!(
            days.len(),
            if date(year, 12, 31).ordinal() == 366 {
                366
            } else {
                365
            }
        );
        for day in days.iter() {
            let principal = &day.celebration;
            assert!(
                !principal.name.is_empty() && !principal.id.is_empty(),
                "{}",
                day.date
            );
            assert!((1..=13).contains(&principal.precedence), "{}", day.date);
            assert!(!day.temporal_id.is_empty());
            let principal_listed = day
                .sanctorale
                .iter()
                .filter(|s| s.celebrated && s.celebration.id == principal.id)
                .count();
            assert!(principal_listed <= 1, "{}", day.date);
            if day.date.weekday() == Weekday::Sun {
                assert!(principal.precedence <= 6, "{}: {:?}", day.date, principal);
            }
            if let Some(previous) = &previous {
                let changed = (previous.sunday_cycle, previous.weekday_cycle)
                    != (day.sunday_cycle, day.weekday_cycle);
                let advent_1 = day.temporal_id == "advent_1_sunday";
                assert_eq!(changed, advent_1, "{}", day.date);
                assert_eq!(previous.date.checked_add_days(Days::new(1)), Some(day.date));
            }
            previous = Some(day.clone());
        }
        for solemnity in [
            "joseph_spouse_of_mary",
            "annunciation_of_the_lord",
            "nativity_of_john_the_baptist",
            "peter_and_paul_apostles",
            "assumption_of_the_blessed_virgin_mary",
            "all_saints",
            "immaculate_conception_of_the_blessed_virgin_mary",
        ] {
            let kept = days
                .iter()
                .filter(|d| d.celebration.id == solemnity)
                .count();
            assert_eq!(kept, 1, "{solemnity} kept {kept} times in {year}");
        }
    }
    println!("1970–2200 walked in {:?}", started.elapsed());
}

#[test]
fn computing_a_year_is_fast() {
    let started = std::time::Instant::now();
    for year in 2000..2100 {
        Calendar::default().year(year).unwrap();
    }
    let per_year = started.elapsed() / 100;
    println!("one year computed in {per_year:?}");
    assert!(per_year.as_millis() < 200, "{per_year:?}");
}

// ---------------------------------------------------------------------------------------------
// Comparison with romcal (the shared reference folder, when present).

/// `<repo>/../shared/reference/romcal`.
fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/romcal")
}

/// Dates where romcal is known to be wrong (shared/reference/romcal/known-romcal-bugs.md), with
/// the reason; the engine's answer on them is asserted by the tests above instead.
const KNOWN_REFERENCE_ERRORS: &[(&str, &str)] = &[
    // A1: romcal drops St Joseph in 2035; he belongs on the Saturday before Palm Sunday.
    (
        "2035-03-17",
        "St Joseph anticipated (GNLY 60; CDW 2006 practice)",
    ),
    // A3/A7: romcal drops John the Baptist when he meets the Sacred Heart or Corpus Christi;
    // the CDW responsum for 2022 moves him to June 23.
    (
        "2022-06-23",
        "John the Baptist anticipated (CDW 2020 responsum)",
    ),
    ("2033-06-23", "John the Baptist anticipated (as in 2022)"),
    ("2038-06-23", "John the Baptist anticipated (as in 2022)"),
    // A4–A6: romcal lets the Immaculate Heart displace a solemnity or a feast.
    (
        "2028-06-24",
        "John the Baptist outranks the Immaculate Heart",
    ),
    ("2030-06-29", "Peter and Paul outrank the Immaculate Heart"),
    ("2038-07-03", "St Thomas outranks the Immaculate Heart"),
    // romcal has no history: it applies the 2021 decree (Martha, Mary and Lazarus) to 2020.
    (
        "2020-07-29",
        "Saint Martha alone until the decree of 26 January 2021",
    ),
    // B9: Immaculate Heart with another obligatory memorial: both optional (CDW 1998).
    ("2025-06-28", "two obligatory memorials become optional"),
    ("2026-06-13", "two obligatory memorials become optional"),
    ("2027-06-05", "two obligatory memorials become optional"),
    ("2031-06-21", "two obligatory memorials become optional"),
    ("2032-06-05", "two obligatory memorials become optional"),
    ("2036-06-21", "two obligatory memorials become optional"),
    ("2037-06-13", "two obligatory memorials become optional"),
];

/// One compared field that differs.
fn differences(ours: &LiturgicalDay, theirs: &[serde_json::Value]) -> Vec<String> {
    let mut found = Vec::new();
    // romcal lists Holy Thursday's daytime first; this engine's day is the evening Mass.
    let reference = theirs
        .iter()
        .find(|c| c["id"] == ours.celebration.id.as_str())
        .unwrap_or(&theirs[0]);
    let text = |key: &str| reference[key].as_str().unwrap_or_default().to_string();
    if text("id") != ours.celebration.id {
        found.push(format!("id {} ≠ {}", ours.celebration.id, text("id")));
        return found;
    }
    // B8: romcal ranks the Baptism of the Lord a solemnity; it is a feast of the Lord.
    let rank_is_known_error = ours.celebration.id == "baptism_of_the_lord";
    if text("rank").to_lowercase() != ours.celebration.rank.as_str() && !rank_is_known_error {
        found.push(format!(
            "rank {} ≠ {}",
            ours.celebration.rank.as_str(),
            text("rank")
        ));
    }
    // romcal gives no colour for Holy Saturday (no Mass); this engine says violet.
    if let Some(color) = reference["colors"].as_array().and_then(|c| c.first()) {
        let color = color
            .as_str()
            .unwrap_or_default()
            .replace("PURPLE", "VIOLET")
            .to_lowercase();
        if color != ours.celebration.color.as_str() {
            found.push(format!(
                "colour {} ≠ {color}",
                ours.celebration.color.as_str()
            ));
        }
    }
    let seasons: Vec<String> = reference["seasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .map(|s| {
            s.trim_end_matches("_TIME")
                .to_lowercase()
                .replace("ordinary", "ordinary_time")
        })
        .collect();
    if !seasons.iter().any(|s| s == ours.season.as_str()) {
        found.push(format!("season {} ∉ {seasons:?}", ours.season.as_str()));
    }
    let cycle = text("sundayCycle").replace("YEAR_", "");
    if cycle != ours.sunday_cycle.as_str() {
        found.push(format!(
            "sunday cycle {} ≠ {cycle}",
            ours.sunday_cycle.as_str()
        ));
    }
    let weekday_cycle = match text("weekdayCycle").as_str() {
        "YEAR_1" => "I",
        "YEAR_2" => "II",
        _ => "?",
    };
    if weekday_cycle != ours.weekday_cycle.as_str() {
        found.push(format!(
            "weekday cycle {} ≠ {weekday_cycle}",
            ours.weekday_cycle.as_str()
        ));
    }
    // Weeks are compared where the lectionary counts them; romcal also numbers the weeks of
    // Christmas Time and of the Triduum, which this engine leaves empty on purpose.
    if let (Some(week), Some(theirs)) = (ours.week, reference["weekOfSeason"].as_u64())
        && u64::from(week) != theirs
    {
        found.push(format!("week {week} ≠ {theirs}"));
    }
    found
}

/// romcal has no history: it offers saints inscribed by later decrees in earlier years too.
/// Each id with the first year the decree applies.
const INSCRIBED_LATER: &[(&str, i32)] = &[
    ("gregory_of_narek_abbot", 2021),
    ("john_of_avila_priest", 2021),
    ("hildegard_of_bingen_abbess", 2021),
    ("teresa_of_calcutta_virgin", 2025),
];

/// The optional celebrations both sides offer on a date, when they differ.
fn optional_difference(ours: &LiturgicalDay, theirs: &[serde_json::Value]) -> Option<String> {
    let not_yet_inscribed = |id: &str| {
        INSCRIBED_LATER
            .iter()
            .any(|(later, since)| *later == id && ours.date.year() < *since)
    };
    let mut reference: Vec<&str> = theirs
        .iter()
        .skip(1)
        .filter(|c| c["isOptional"].as_bool() == Some(true))
        .filter_map(|c| c["id"].as_str())
        .filter(|id| !not_yet_inscribed(id))
        .collect();
    let mut offered: Vec<&str> = ours
        .optional_memorials
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    reference.sort_unstable();
    offered.sort_unstable();
    (reference != offered).then(|| format!("options {offered:?} ≠ {reference:?}"))
}

#[derive(Default)]
struct Tally {
    days: usize,
    agreeing: usize,
    known: usize,
    options_agreeing: usize,
    known_dates_seen: Vec<String>,
    unexpected: Vec<String>,
}

fn compare_file(calendar: &Calendar, file: &PathBuf, tally: &mut Tally) {
    let text = std::fs::read_to_string(file).unwrap();
    let reference: BTreeMap<String, Vec<serde_json::Value>> = serde_json::from_str(&text).unwrap();
    for (key, celebrations) in reference {
        let day = calendar.day(key.parse().unwrap()).unwrap();
        tally.days += 1;
        let mut found = differences(&day, &celebrations);
        match optional_difference(&day, &celebrations) {
            None => tally.options_agreeing += 1,
            Some(options) => found.push(options),
        }
        if found.is_empty() {
            tally.agreeing += 1;
        } else if KNOWN_REFERENCE_ERRORS.iter().any(|(date, _)| *date == key) {
            tally.known += 1;
            tally.known_dates_seen.push(key);
        } else {
            tally
                .unexpected
                .push(format!("{key}: {}", found.join("; ")));
        }
    }
}

#[test]
fn reference_comparison_with_romcal() {
    let dir = reference_dir();
    if !dir.is_dir() {
        println!(
            "reference folder {} absent: comparison skipped",
            dir.display()
        );
        return;
    }
    let mut report = Vec::new();
    let mut unexpected = Vec::new();
    let mut known_dates_seen = Vec::new();
    for (label, options, years, prefix) in [
        (
            "default options",
            CalendarOptions::default(),
            2020..=2040,
            "grc",
        ),
        (
            "all Sunday options",
            all_sunday_options(),
            2024..=2030,
            "grc-sunday",
        ),
    ] {
        let calendar = Calendar::new(options);
        let mut tally = Tally::default();
        for year in years {
            compare_file(
                &calendar,
                &dir.join(format!("{prefix}-{year}.json")),
                &mut tally,
            );
        }
        report.push(format!(
            "{label}: {} days, {} agree on every field ({:.2}%), {} agree on the optional \
             memorials ({:.2}%), {} on the known-error list, {} unexpected",
            tally.days,
            tally.agreeing,
            100.0 * tally.agreeing as f64 / tally.days as f64,
            tally.options_agreeing,
            100.0 * tally.options_agreeing as f64 / tally.days as f64,
            tally.known,
            tally.unexpected.len()
        ));
        unexpected.extend(tally.unexpected);
        known_dates_seen.extend(tally.known_dates_seen);
    }
    println!("romcal comparison:\n  {}", report.join("\n  "));
    for line in &unexpected {
        println!("  differs: {line}");
    }
    assert!(
        unexpected.is_empty(),
        "{} unexpected differences",
        unexpected.len()
    );
    for (date, reason) in KNOWN_REFERENCE_ERRORS {
        assert!(
            known_dates_seen.iter().any(|seen| seen == date),
            "{date} ({reason}) is on the known-error list but agrees: the list is stale"
        );
    }
}

/// The project's Proper of Saints against romcal's definitions: the same 220 ids for a current
/// year, each on its date with its rank and colour.
#[test]
fn reference_sanctorale_matches_romcal_definitions() {
    let file = reference_dir().join("grc-definitions.json");
    if !file.is_file() {
        println!(
            "reference file {} absent: comparison skipped",
            file.display()
        );
        return;
    }
    let definitions: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let days = grc().year(2026).unwrap();
    let mut ours: BTreeMap<&str, (&LiturgicalDay, &liturgy::SanctoraleStatus)> = BTreeMap::new();
    for day in days.iter() {
        for status in &day.sanctorale {
            ours.insert(status.celebration.id.as_str(), (day, status));
        }
    }
    let mut mismatches = Vec::new();
    for definition in &definitions {
        let id = definition["id"].as_str().unwrap();
        let Some((day, status)) = ours.remove(id) else {
            mismatches.push(format!("{id}: missing in 2026"));
            continue;
        };
        if let (Some(month), Some(dom)) =
            (definition["month"].as_u64(), definition["date"].as_u64())
            && (u64::from(day.date.month()), u64::from(day.date.day())) != (month, dom)
        {
            mismatches.push(format!("{id}: on {} instead of {month}-{dom}", day.date));
        }
        let reduced = status.celebration.rank == Rank::Commemoration
            || status
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with("reduced"));
        let rank = definition["rank"].as_str().unwrap().to_lowercase();
        if !reduced && rank != status.celebration.rank.as_str() {
            mismatches.push(format!(
                "{id}: rank {} ≠ {rank}",
                status.celebration.rank.as_str()
            ));
        }
        let color = definition["colors"][0]
            .as_str()
            .unwrap()
            .replace("PURPLE", "VIOLET");
        if color.to_lowercase() != status.celebration.color.as_str() {
            mismatches.push(format!(
                "{id}: colour {} ≠ {color}",
                status.celebration.color.as_str()
            ));
        }
    }
    mismatches.extend(ours.keys().map(|id| format!("{id}: not in romcal")));
    println!(
        "sanctorale: {} romcal definitions checked",
        definitions.len()
    );
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

/// The calendar's invariants on random dates, years and territory options across 1970–2200,
/// checked against rules stated independently of the engine (the Advent and cycle arithmetic).
mod properties {
    use chrono::{Datelike, Days, NaiveDate, Weekday};
    use liturgy::{Calendar, CalendarOptions, SundayCycle, WeekdayCycle, calendar_ids};
    use proptest::prelude::*;

    fn any_calendar() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(calendar_ids().collect::<Vec<_>>())
    }

    /// Days from 1970-01-01 to 2200-12-30, so that the next day is still in range.
    const SPAN_DAYS: u64 = 84_370;

    fn any_date() -> impl Strategy<Value = NaiveDate> {
        (0..SPAN_DAYS)
            .prop_map(|offset| NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + Days::new(offset))
    }

    fn any_options() -> impl Strategy<Value = CalendarOptions> {
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(epiphany, ascension, corpus)| {
            CalendarOptions {
                epiphany_on_sunday: epiphany,
                ascension_on_sunday: ascension,
                corpus_christi_on_sunday: corpus,
            }
        })
    }

    /// The First Sunday of Advent of a civil year: the Sunday from November 27 to December 3.
    fn first_sunday_of_advent(year: i32) -> NaiveDate {
        let december_3 = NaiveDate::from_ymd_opt(year, 12, 3).unwrap();
        let back = u64::from(december_3.weekday().num_days_from_sunday());
        december_3 - Days::new(back)
    }

    /// The liturgical year a date belongs to, named after the civil year in which it ends.
    fn liturgical_year(date: NaiveDate) -> i32 {
        if date >= first_sunday_of_advent(date.year()) {
            date.year() + 1
        } else {
            date.year()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// One principal celebration, named, of a valid precedence, listed at most once among
        /// the saints kept that day, and never offered again as an option beside itself.
        #[test]
        fn exactly_one_principal_celebration(
            date in any_date(),
            options in any_options(),
            id in any_calendar(),
        ) {
            let calendar = Calendar::of(id, options).unwrap();
            let day = calendar.day(date).unwrap();
            prop_assert_eq!(day.date, date);
            let principal = &day.celebration;
            prop_assert!(!principal.id.is_empty() && !principal.name.is_empty());
            prop_assert!((1..=13).contains(&principal.precedence));
            let kept_as_principal = day
                .sanctorale
                .iter()
                .filter(|s| s.celebrated && s.celebration.id == principal.id)
                .count();
            prop_assert!(kept_as_principal <= 1);
            prop_assert!(day.optional_memorials.iter().all(|m| m.id != principal.id));
            if date.weekday() == Weekday::Sun {
                prop_assert!(principal.precedence <= 6, "{}: {:?}", date, principal);
            }
            let from_year = &calendar.year(date.year()).unwrap()[date.ordinal0() as usize];
            prop_assert_eq!(&day, from_year);
        }

        /// Easter is a Sunday from March 22 to April 25, and the calendar keeps it that day.
        #[test]
        fn easter_between_march_22_and_april_25(
            year in 1970..=2200i32,
            options in any_options(),
            id in any_calendar(),
        ) {
            let easter = Calendar::easter(year).unwrap();
            prop_assert!(easter >= NaiveDate::from_ymd_opt(year, 3, 22).unwrap());
            prop_assert!(easter <= NaiveDate::from_ymd_opt(year, 4, 25).unwrap());
            prop_assert_eq!(easter.weekday(), Weekday::Sun);
            let day = Calendar::of(id, options).unwrap().day(easter).unwrap();
            prop_assert_eq!(day.celebration.id.as_str(), "easter_sunday");
        }

        /// The cycles follow the liturgical year (A, B, C from years ≡ 1, 2, 0 mod 3; I in odd
        /// years), so from one day to the next they change exactly at the First Sunday of Advent.
        #[test]
        fn cycles_change_only_at_advent(
            date in any_date(),
            options in any_options(),
            id in any_calendar(),
        ) {
            let calendar = Calendar::of(id, options).unwrap();
            let next = date + Days::new(1);
            let (today, tomorrow) = (calendar.day(date).unwrap(), calendar.day(next).unwrap());
            let year = liturgical_year(date);
            let expected_sunday = match year.rem_euclid(3) {
                1 => SundayCycle::A,
                2 => SundayCycle::B,
                _ => SundayCycle::C,
            };
            let expected_weekday = if year % 2 == 1 { WeekdayCycle::I } else { WeekdayCycle::II };
            prop_assert_eq!(today.sunday_cycle, expected_sunday, "{}", date);
            prop_assert_eq!(today.weekday_cycle, expected_weekday, "{}", date);
            let changed = (today.sunday_cycle, today.weekday_cycle)
                != (tomorrow.sunday_cycle, tomorrow.weekday_cycle);
            let advent_begins = next == first_sunday_of_advent(next.year());
            prop_assert_eq!(changed, advent_begins, "{} → {}", date, next);
            prop_assert_eq!(advent_begins, tomorrow.temporal_id == "advent_1_sunday");
        }
    }
}
