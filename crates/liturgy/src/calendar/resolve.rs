//! One civil year: the Proper of Time and the Proper of Saints put together under the General
//! Norms for the Liturgical Year and the Calendar (nn. 56–61): transfers of impeded
//! solemnities, omitted feasts, commemorations, and coinciding memorials.

use chrono::{Datelike, Days, NaiveDate};

use super::sanctorale::{EntryRank, SanctoraleEntry};
use super::temporale::{KeyDates, TemporalDay, temporal_day};
use super::{CalendarOptions, Celebration, LiturgicalDay, Rank, SanctoraleStatus};
use crate::LiturgyError;

/// Mary, Mother of the Church prevails over a coinciding obligatory memorial (CDW, 2018).
const MARY_MOTHER_OF_THE_CHURCH: &str = "mary_mother_of_the_church";
/// St Joseph falling in Holy Week is anticipated to the Saturday before Palm Sunday.
const JOSEPH: &str = "joseph_spouse_of_mary";

/// A Proper of Saints entry placed on a date, perhaps after a transfer.
#[derive(Debug, Clone, Copy)]
struct Placed {
    entry: &'static SanctoraleEntry,
    moved_from: Option<NaiveDate>,
}

/// Computes every day of `year`, January 1 first.
pub(super) fn compute_year(
    year: i32,
    options: CalendarOptions,
    entries: &'static [SanctoraleEntry],
) -> Result<Vec<LiturgicalDay>, LiturgyError> {
    let out_of_range = LiturgyError::YearOutOfRange { year };
    let dates = KeyDates::new(year, options).ok_or_else(|| out_of_range.clone())?;
    let first = NaiveDate::from_ymd_opt(year, 1, 1).ok_or_else(|| out_of_range.clone())?;
    let days: Vec<NaiveDate> = first
        .iter_days()
        .take_while(|date| date.year() == year)
        .collect();
    let temporal: Vec<TemporalDay> = days.iter().map(|&d| temporal_day(d, &dates)).collect();

    let mut placed: Vec<Vec<Placed>> = vec![Vec::new(); days.len()];
    for entry in entries.iter().filter(|e| e.applies_in(year)) {
        if let Some(date) = entry.date_in(&dates) {
            placed[date.ordinal0() as usize].push(Placed {
                entry,
                moved_from: None,
            });
        }
    }
    let notes = transfer_impeded_solemnities(&days, &temporal, &mut placed, &dates);

    Ok(days
        .iter()
        .zip(temporal)
        .zip(placed.into_iter().zip(notes))
        .map(|((&date, temporal), (placed, notes))| resolve_day(date, temporal, &placed, notes))
        .collect())
}

/// Moves each solemnity of the saints that meets a day of higher or equal rank, and returns,
/// for each date, the notes on what left it.
fn transfer_impeded_solemnities(
    days: &[NaiveDate],
    temporal: &[TemporalDay],
    placed: &mut [Vec<Placed>],
    dates: &KeyDates,
) -> Vec<Vec<SanctoraleStatus>> {
    let mut notes = vec![Vec::new(); days.len()];
    // Two passes: a solemnity anticipated (St Joseph before Palm Sunday) may land on a day
    // whose own solemnity was already looked at, and then impedes it.
    for origin in (0..days.len()).chain(0..days.len()) {
        let Some((position, impeding_name, impeding_precedence)) =
            impediment(&temporal[origin], &placed[origin])
        else {
            continue;
        };
        let moving = placed[origin].remove(position);
        let date = days[origin];
        let is_free = |index: usize, placed: &[Vec<Placed>]| {
            temporal[index].precedence >= 9
                && placed[index].iter().all(|p| p.entry.precedence() > 8)
        };
        let next_free =
            |placed: &[Vec<Placed>]| (origin + 1..days.len()).find(|&i| is_free(i, placed));
        let target = if moving.entry.id == JOSEPH
            && (dates.palm_sunday..=dates.holy_saturday).contains(&date)
        {
            dates
                .palm_sunday
                .checked_sub_days(Days::new(1))
                .map(|saturday| saturday.ordinal0() as usize)
        } else if impeding_precedence == moving.entry.precedence()
            && origin > 0
            && is_free(origin - 1, placed)
        {
            Some(origin - 1)
        } else {
            next_free(placed)
        };
        let cause = format!("impeded by {}", with_article(&impeding_name));
        let Some(target) = target else {
            notes[origin].push(status(moving.entry, false, Some(cause)));
            continue;
        };
        let verb = if target < origin {
            "anticipated"
        } else {
            "transferred"
        };
        notes[origin].push(status(
            moving.entry,
            false,
            Some(format!("{verb} to {} ({cause})", days[target])),
        ));
        placed[target].push(Placed {
            entry: moving.entry,
            moved_from: Some(date),
        });
    }
    notes
}

/// The first solemnity of the saints placed on a day that must leave it, with the name and
/// precedence of what impedes it: the day of the Proper of Time when it ranks as high or higher,
/// or another solemnity placed there that ranks higher.
fn impediment(temporal: &TemporalDay, placed: &[Placed]) -> Option<(usize, String, u8)> {
    placed.iter().enumerate().find_map(|(position, p)| {
        if p.entry.rank != EntryRank::Solemnity {
            return None;
        }
        if temporal.precedence <= p.entry.precedence() {
            return Some((position, temporal.name.clone(), temporal.precedence));
        }
        placed
            .iter()
            .filter(|q| q.entry.rank == EntryRank::Solemnity)
            .find(|q| q.entry.precedence() < p.entry.precedence())
            .map(|q| (position, q.entry.name.to_string(), q.entry.precedence()))
    })
}

/// The day's celebration and the fate of each saint placed on it.
fn resolve_day(
    date: NaiveDate,
    temporal: TemporalDay,
    placed: &[Placed],
    notes: Vec<SanctoraleStatus>,
) -> LiturgicalDay {
    let obligatory: Vec<&Placed> = placed
        .iter()
        .filter(|p| p.entry.rank == EntryRank::Memorial)
        .collect();
    let prevailing = obligatory
        .iter()
        .find(|p| p.entry.id == MARY_MOTHER_OF_THE_CHURCH)
        .filter(|_| obligatory.len() > 1)
        .map(|p| p.entry);
    let reduced = obligatory.len() > 1 && prevailing.is_none();
    let suppressed = |entry: &SanctoraleEntry| {
        prevailing.is_some_and(|p| p.id != entry.id && entry.rank == EntryRank::Memorial)
    };
    let precedence = |entry: &SanctoraleEntry| match entry.rank {
        EntryRank::Memorial if reduced => EntryRank::OptionalMemorial.precedence(),
        _ => entry.precedence(),
    };

    let principal_saint = placed
        .iter()
        .filter(|p| !suppressed(p.entry))
        .min_by_key(|p| precedence(p.entry))
        .filter(|p| {
            let level = precedence(p.entry);
            level < temporal.precedence && level <= EntryRank::Memorial.precedence() + 1
        });

    let celebration = match principal_saint {
        Some(saint) => celebration_of(saint.entry, saint.entry.rank.rank()),
        None => Celebration {
            id: temporal.celebration_id.unwrap_or(&temporal.id).to_string(),
            name: temporal.name.clone(),
            rank: temporal.rank,
            precedence: temporal.precedence,
            color: temporal.color,
        },
    };

    let mut optional_memorials = Vec::new();
    let mut sanctorale = Vec::new();
    for saint in placed {
        let entry = saint.entry;
        let moved = saint.moved_from.map(|from| {
            let verb = if from > date {
                "anticipated"
            } else {
                "transferred"
            };
            format!("{verb} from {from}")
        });
        if principal_saint.is_some_and(|p| p.entry.id == entry.id) {
            sanctorale.push(status(entry, true, moved));
            continue;
        }
        let level = precedence(entry);
        let impeded = format!("impeded by {}", with_article(&celebration.name));
        if suppressed(entry) {
            let reason = format!(
                "omitted: {} prevails over a coinciding memorial",
                with_article(&celebration.name)
            );
            sanctorale.push(status(entry, false, Some(reason)));
        } else if level <= 8 || principal_saint.is_some() {
            sanctorale.push(status(entry, false, Some(impeded)));
        } else if temporal.precedence == 9 {
            let season = if date.month() == 12 && date.day() >= 25 {
                "within the Octave of Christmas"
            } else if date.month() == 12 {
                "in the last days of Advent"
            } else {
                "in Lent"
            };
            let kept = celebration_of(entry, Rank::Commemoration);
            optional_memorials.push(kept.clone());
            sanctorale.push(SanctoraleStatus {
                celebration: kept,
                celebrated: true,
                reason: Some(format!("kept as a commemoration {season}")),
            });
        } else if temporal.precedence == 13 {
            let kept = celebration_of(entry, Rank::OptionalMemorial);
            optional_memorials.push(kept.clone());
            let reason = if reduced && entry.rank == EntryRank::Memorial {
                let others: Vec<String> = obligatory
                    .iter()
                    .filter(|p| p.entry.id != entry.id)
                    .map(|p| with_article(p.entry.name))
                    .collect();
                Some(format!(
                    "reduced to an optional memorial: coincides with {}",
                    others.join(" and ")
                ))
            } else {
                moved
            };
            sanctorale.push(SanctoraleStatus {
                celebration: kept,
                celebrated: true,
                reason,
            });
        } else {
            sanctorale.push(status(entry, false, Some(impeded)));
        }
    }
    sanctorale.extend(notes);

    LiturgicalDay {
        date,
        celebration,
        optional_memorials,
        season: temporal.season,
        week: temporal.week,
        sunday_cycle: temporal.sunday_cycle,
        weekday_cycle: temporal.weekday_cycle,
        temporal_id: temporal.id,
        sanctorale,
    }
}

fn celebration_of(entry: &SanctoraleEntry, rank: Rank) -> Celebration {
    let precedence = match rank {
        Rank::Commemoration | Rank::OptionalMemorial => EntryRank::OptionalMemorial.precedence(),
        _ => entry.precedence(),
    };
    Celebration {
        id: entry.id.to_string(),
        name: entry.name.to_string(),
        rank,
        precedence,
        color: entry.color,
    }
}

fn status(entry: &SanctoraleEntry, celebrated: bool, reason: Option<String>) -> SanctoraleStatus {
    SanctoraleStatus {
        celebration: celebration_of(entry, entry.rank.rank()),
        celebrated,
        reason,
    }
}

/// A celebration's name as it reads after "impeded by": "the Second Sunday of Advent",
/// "the Immaculate Conception…", "Saint Mark, Evangelist".
fn with_article(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("The ") {
        format!("the {rest}")
    } else if [
        "Saint",
        "Our ",
        "All ",
        "Solemnity",
        "Easter",
        "Pentecost",
        "Ash ",
        "Palm ",
    ]
    .iter()
    .any(|prefix| name.starts_with(prefix))
    {
        name.to_string()
    } else {
        format!("the {name}")
    }
}
