//! The `liturgical_readings` skill: the Mass readings of a date or occasion.
//!
//! The calendar decides what is celebrated; the Lectionary tables give the citations; the Bible the
//! operator installed (if any) gives the text. Without an installed Bible the answer still lists
//! every citation and says how to install the text, so the skill works out of the box.

use std::path::Path;

use async_trait::async_trait;
use chrono::Datelike;
use liturgy::bible::Bible;
use liturgy::citation::Citation;
use liturgy::lectionary::{Lectionary, Mass, Reading, ReadingKind};
use liturgy::{Celebration, LiturgicalDay, Rank};
use serde_json::{Map, Value, json};

use crate::calendar::CalendarSource;
use crate::phrases::{Sentences, sentences};
use crate::{LiturgySettings, Skill, SkillError, SkillInfo, SkillOutput, SkillRequest, catalog};

/// The command an operator runs to install the Bible text; quoted in answers without it.
pub const INSTALL_BIBLE_COMMAND: &str = "magisterium-a2a data install-bible";

const WEEKDAYS_AFTER_EPIPHANY: [&str; 6] = [
    "monday_after_epiphany",
    "tuesday_after_epiphany",
    "wednesday_after_epiphany",
    "thursday_after_epiphany",
    "friday_after_epiphany",
    "saturday_after_epiphany",
];

/// Mass readings for any date, from the compiled-in Lectionary and the optional Bible text.
pub struct LiturgicalReadings {
    source: CalendarSource,
    lectionary: &'static Lectionary,
    bible: Option<Bible>,
}

impl LiturgicalReadings {
    /// Builds the skill for a deployment: its calendar options, and the Bible text installed in
    /// `data_dir` if there is one. Fails only when the compiled-in Lectionary or an installed
    /// Bible file is damaged, or the time zone is not an IANA name: faults the operator must hear
    /// about at start-up.
    pub fn new(settings: &LiturgySettings, data_dir: &Path) -> Result<Self, SkillError> {
        let lectionary = Lectionary::shipped()
            .map_err(|e| SkillError::Internal(format!("lectionary data: {e}")))?;
        let bible = Bible::open(data_dir)
            .map_err(|e| SkillError::Internal(format!("installed Bible text: {e}")))?;
        Ok(LiturgicalReadings {
            source: CalendarSource::new(settings)?,
            lectionary,
            bible,
        })
    }

    /// Whether Scripture texts accompany the citations.
    pub fn bible_text_installed(&self) -> bool {
        self.bible.is_some()
    }

    /// The readings of a liturgical day, as the artifact's text and data. `epiphany_on_sunday`
    /// is the option the day was computed with (it decides how the days after Epiphany read).
    pub fn readings_for(&self, day: &LiturgicalDay, epiphany_on_sunday: bool) -> SkillOutput {
        self.readings_in(day, epiphany_on_sunday, "en")
    }

    /// [`Self::readings_for`] with the text's labels and sentences in `language`.
    fn readings_in(
        &self,
        day: &LiturgicalDay,
        epiphany_on_sunday: bool,
        language: &str,
    ) -> SkillOutput {
        let words = sentences(language);
        let lookup = Lookup {
            day,
            epiphany_on_sunday,
        };
        let (masses, note) = self.day_masses(&lookup);
        let optional: Vec<(&Celebration, Vec<Mass>)> = day
            .optional_memorials
            .iter()
            .map(|memorial| (memorial, self.masses_of(&memorial.id, &lookup)))
            .collect();
        let date = day.date;

        let mut data = Map::new();
        data.insert("date".into(), json!(date.to_string()));
        data.insert(
            "celebration".into(),
            celebration_json(&day.celebration, day),
        );
        data.insert(
            "cycle".into(),
            json!({"sunday": day.sunday_cycle.as_str(), "weekday": day.weekday_cycle.as_str()}),
        );
        data.insert(
            "masses".into(),
            Value::Array(masses.iter().map(|m| self.mass_json(m)).collect()),
        );
        if !optional.is_empty() {
            let memorials = optional
                .iter()
                .map(|(memorial, masses)| {
                    json!({
                        "id": memorial.id,
                        "name": memorial.name,
                        "rank": memorial.rank.as_str(),
                        "color": memorial.color.as_str(),
                        "masses": masses.iter().map(|m| self.mass_json(m)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            data.insert("optional_memorials".into(), Value::Array(memorials));
        }
        data.insert("readings_from".into(), json!(self.readings_source(day)));
        if let Some(note) = &note {
            data.insert("note".into(), json!(note));
        }
        data.insert(
            "bible_text_installed".into(),
            json!(self.bible_text_installed()),
        );

        SkillOutput {
            artifact_name: catalog::LITURGICAL_READINGS.id,
            text: self.render(day, &masses, note.as_deref(), &optional, words),
            data,
        }
    }

    /// Where the day's readings come from: `proper_of_time`; `proper` (the celebration's own);
    /// `proper_and_weekday` (a memorial's own readings over the weekday's); or
    /// `weekday_or_common` (the celebration has none of its own in the Lectionary data: the
    /// weekday's are given, and the Common of its kind may be used instead).
    fn readings_source(&self, day: &LiturgicalDay) -> &'static str {
        let celebration = &day.celebration;
        if celebration.id == day.temporal_id
            || !matches!(
                celebration.rank,
                Rank::Solemnity
                    | Rank::Feast
                    | Rank::Memorial
                    | Rank::OptionalMemorial
                    | Rank::Commemoration
            )
        {
            "proper_of_time"
        } else if !self.lectionary.has(&celebration.id) {
            "weekday_or_common"
        } else if matches!(
            celebration.rank,
            Rank::Memorial | Rank::OptionalMemorial | Rank::Commemoration
        ) {
            "proper_and_weekday"
        } else {
            "proper"
        }
    }

    /// The readings of the day a request resolved to, in its language and with its calendar.
    fn answer(&self, resolved: &crate::calendar::ResolvedDay<'_>) -> SkillOutput {
        let day = &resolved.day;
        let mut output = self.readings_in(
            day,
            resolved.calendar.options().epiphany_on_sunday,
            resolved.language,
        );
        resolved.describe(&mut output.data);
        if let Some(Value::Object(celebration)) = output.data.get_mut("celebration") {
            celebration.insert(
                "rank_name".into(),
                json!(resolved.rank_word(day.celebration.rank)),
            );
            celebration.insert(
                "color_name".into(),
                json!(resolved.color_word(day.celebration.color)),
            );
            celebration.insert(
                "season_name".into(),
                json!(resolved.season_word(day.season)),
            );
        }
        if resolved.names.is_some() {
            let season = match day.week {
                Some(week) => format!("{} {week}", resolved.season_word(day.season)),
                None => resolved.season_word(day.season),
            };
            let header = format!(
                "{}: {}\n{} · {} · {} · {}/{}\n",
                day.date,
                day.celebration.name,
                resolved.rank_word(day.celebration.rank),
                resolved.color_word(day.celebration.color),
                season,
                day.sunday_cycle.as_str(),
                day.weekday_cycle.as_str()
            );
            let body = output.text.splitn(3, '\n').nth(2).unwrap_or_default();
            output.text = format!("{header}{body}");
        }
        if let Some(note) = &resolved.language_note {
            output.text.push_str(&format!("\n{note}\n"));
        }
        output
    }

    /// The Masses of the day's celebration, with the days the Lectionary treats specially.
    fn day_masses(&self, lookup: &Lookup<'_>) -> (Vec<Mass>, Option<String>) {
        let day = lookup.day;
        match day.celebration.id.as_str() {
            "holy_saturday" => {
                let vigil = self
                    .masses_of("easter_sunday", lookup)
                    .into_iter()
                    .filter(|m| m.name.as_deref() == Some("vigil"))
                    .collect();
                let note = "No Mass is celebrated on Holy Saturday during the day. The Easter \
                            Vigil, held after nightfall, is the first Mass of Easter Sunday; its \
                            readings follow.";
                (vigil, Some(note.to_string()))
            }
            "holy_thursday" | "thursday_of_the_lords_supper" => {
                let mut masses = self.masses_of("holy_thursday", lookup);
                masses.extend(
                    self.masses_of("thursday_of_the_lords_supper", lookup)
                        .into_iter()
                        .map(|mut mass| {
                            mass.name.get_or_insert_with(|| "evening".to_string());
                            mass
                        }),
                );
                (masses, None)
            }
            _ => {
                let masses = self.masses_of(&day.celebration.id, lookup);
                (masses, None)
            }
        }
    }

    /// The readings of a celebration on this day. The day's celebration takes the weekday's
    /// readings where it has none of its own, and a memorial replaces only those it has proper;
    /// any other celebration (an optional memorial, another Mass of the day) gives only its own.
    fn masses_of(&self, id: &str, lookup: &Lookup<'_>) -> Vec<Mass> {
        let day = lookup.day;
        let sunday = day.sunday_cycle.as_str();
        let weekday = day.weekday_cycle.as_str();
        let temporal_id = temporal_lectionary_id(lookup);
        if id == day.temporal_id {
            return self.lectionary.masses(&temporal_id, sunday, weekday);
        }
        let proper = self.lectionary.masses(id, sunday, weekday);
        if id != day.celebration.id {
            return proper;
        }
        let temporal = self.lectionary.masses(&temporal_id, sunday, weekday);
        let is_memorial = matches!(
            day.celebration.rank,
            Rank::Memorial | Rank::OptionalMemorial | Rank::Commemoration
        );
        if proper.is_empty() {
            temporal
        } else if is_memorial {
            overlay(temporal, proper)
        } else {
            proper
        }
    }

    fn mass_json(&self, mass: &Mass) -> Value {
        json!({
            "id": mass.name,
            "name": mass_title(mass),
            "readings": mass.readings.iter().map(|r| self.reading_json(r)).collect::<Vec<_>>(),
        })
    }

    fn reading_json(&self, reading: &Reading) -> Value {
        let mut object = Map::new();
        object.insert("kind".into(), json!(reading.kind.as_str()));
        object.insert("label".into(), json!(reading.kind.label()));
        object.insert("citation".into(), json!(reading.citation));
        if !reading.alternatives.is_empty() {
            object.insert("alternatives".into(), json!(reading.alternatives));
        }
        if let Some(text) = self.text_of(&reading.citation) {
            object.insert("text".into(), json!(text));
        }
        Value::Object(object)
    }

    fn text_of(&self, citation: &str) -> Option<String> {
        let bible = self.bible.as_ref()?;
        bible.passage(&Citation::parse(citation).ok()?)
    }

    fn render(
        &self,
        day: &LiturgicalDay,
        masses: &[Mass],
        note: Option<&str>,
        optional: &[(&Celebration, Vec<Mass>)],
        words: &Sentences,
    ) -> String {
        let mut out = String::new();
        let celebration = &day.celebration;
        out.push_str(&format!(
            "{}: {}\n",
            day.date.format("%A, %-d %B %Y"),
            celebration.name
        ));
        let season = match day.week {
            Some(week) => format!("{}, week {week}", human(day.season.as_str())),
            None => human(day.season.as_str()),
        };
        out.push_str(&format!(
            "{} · {} · {} · Sunday cycle {}, weekday cycle {}\n",
            human(celebration.rank.as_str()),
            celebration.color.as_str(),
            season,
            day.sunday_cycle.as_str(),
            day.weekday_cycle.as_str()
        ));
        if let Some(note) = note {
            out.push_str(&format!("\n{note}\n"));
        }
        if masses.is_empty() {
            out.push_str(&format!("\n{}\n", words.no_readings));
        }
        for mass in masses {
            self.render_mass(&mut out, mass, masses.len() > 1, words);
        }
        let with_proper: Vec<_> = optional.iter().filter(|(_, m)| !m.is_empty()).collect();
        let without: Vec<&str> = optional
            .iter()
            .filter(|(_, m)| m.is_empty())
            .map(|(c, _)| c.name.as_str())
            .collect();
        for (memorial, masses) in &with_proper {
            out.push_str(&format!(
                "\n{}: {} ({}), {}:\n",
                words.optional,
                memorial.name,
                human(memorial.rank.as_str()),
                words.proper_readings
            ));
            for mass in masses {
                self.render_mass(&mut out, mass, masses.len() > 1, words);
            }
        }
        if !without.is_empty() {
            out.push_str(&format!(
                "\n{}: {} ({}).\n",
                words.optional,
                without.join("; "),
                words.day_or_commons
            ));
        }
        match &self.bible {
            Some(bible) => out.push_str(&format!(
                "\nScripture text: {} (public domain), which numbers the Psalms as the Vulgate does \
                 and may differ in wording and verse division from the Lectionary.\n",
                bible.name()
            )),
            None => out.push_str(&format!(
                "\nThe Bible text is not installed, so only the citations are shown. To include the \
                 texts, the operator can run `{INSTALL_BIBLE_COMMAND}` and restart the server.\n"
            )),
        }
        out
    }

    fn render_mass(&self, out: &mut String, mass: &Mass, show_title: bool, words: &Sentences) {
        out.push('\n');
        if show_title || mass.name.is_some() {
            out.push_str(&format!("{}\n", mass_title(mass)));
        }
        for reading in &mass.readings {
            out.push_str(&format!(
                "{}: {}",
                label(reading.kind, words),
                reading.citation
            ));
            if !reading.alternatives.is_empty() {
                out.push_str(&format!(" (or {})", reading.alternatives.join("; or ")));
            }
            out.push('\n');
            if let Some(text) = self.text_of(&reading.citation) {
                out.push_str(&format!("    {text}\n"));
            }
        }
    }
}

/// A reading's label in the words of a language.
fn label(kind: ReadingKind, words: &Sentences) -> String {
    match kind {
        ReadingKind::FirstReading => words.first_reading.into(),
        ReadingKind::ResponsorialPsalm
        | ReadingKind::VigilPsalm1
        | ReadingKind::EpistlePsalm
        | ReadingKind::VigilReading(_, true) => words.psalm.into(),
        ReadingKind::VigilReading(n, false) => format!("{} {n}", words.reading),
        ReadingKind::SecondReading => words.second_reading.into(),
        ReadingKind::Epistle => words.epistle.into(),
        ReadingKind::GospelAcclamation => words.acclamation.into(),
        ReadingKind::Gospel => words.gospel.into(),
    }
}

/// A day being answered, with the calendar option that shapes its weekday readings.
struct Lookup<'a> {
    day: &'a LiturgicalDay,
    epiphany_on_sunday: bool,
}

/// The Proper of Time id under which the Lectionary files this date's weekday readings. The
/// weekdays after Epiphany go by date (Jan 7 takes Monday's readings, Jan 8 Tuesday's…) where
/// Epiphany is kept on January 6.
fn temporal_lectionary_id(lookup: &Lookup<'_>) -> String {
    let day = lookup.day;
    let id = day.temporal_id.as_str();
    if id.ends_with("_after_epiphany") && !lookup.epiphany_on_sunday && day.date.month() == 1 {
        let slot = (day.date.day() as usize)
            .checked_sub(7)
            .and_then(|i| WEEKDAYS_AFTER_EPIPHANY.get(i));
        if let Some(slot) = slot {
            return (*slot).to_string();
        }
    }
    id.to_string()
}

/// Replaces the weekday's readings with a memorial's proper ones, kind by kind.
fn overlay(weekday: Vec<Mass>, proper: Vec<Mass>) -> Vec<Mass> {
    let Some(mut base) = weekday.into_iter().next() else {
        return proper;
    };
    for reading in proper.into_iter().flat_map(|m| m.readings) {
        base.readings.retain(|r| r.kind != reading.kind);
        base.readings.push(reading);
    }
    base.readings.sort_by_key(|r| r.kind);
    vec![base]
}

fn mass_title(mass: &Mass) -> String {
    match mass.name.as_deref() {
        Some("evening") => "Evening Mass of the Lord's Supper".to_string(),
        _ => mass.title(),
    }
}

fn celebration_json(celebration: &Celebration, day: &LiturgicalDay) -> Value {
    let mut object = Map::new();
    object.insert("id".into(), json!(celebration.id));
    object.insert("name".into(), json!(celebration.name));
    object.insert("rank".into(), json!(celebration.rank.as_str()));
    object.insert("color".into(), json!(celebration.color.as_str()));
    object.insert("season".into(), json!(day.season.as_str()));
    if let Some(week) = day.week {
        object.insert("week".into(), json!(week));
    }
    Value::Object(object)
}

/// `ordinary_time` → `Ordinary time`, for the text rendering.
fn human(wire: &str) -> String {
    let spaced = wire.replace('_', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => spaced,
    }
}

#[async_trait]
impl Skill for LiturgicalReadings {
    fn info(&self) -> &SkillInfo {
        &catalog::LITURGICAL_READINGS
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        let resolved = self.source.resolve(&request)?;
        Ok(self.answer(&resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use liturgy::lectionary::ReadingKind;

    trait At {
        fn at(&self, date: &str) -> SkillOutput;
    }

    impl At for LiturgicalReadings {
        /// The readings of an ISO date under the General Roman Calendar's own options.
        fn at(&self, date: &str) -> SkillOutput {
            let day = liturgy::Calendar::default()
                .day(date.parse().unwrap())
                .unwrap();
            self.readings_for(&day, false)
        }
    }

    fn skill(dir: &Path) -> LiturgicalReadings {
        LiturgicalReadings::new(&LiturgySettings::default(), dir).unwrap()
    }

    fn masses(output: &SkillOutput) -> &Vec<Value> {
        output.data["masses"].as_array().unwrap()
    }

    fn reading<'a>(mass: &'a Value, kind: &str) -> Option<&'a Value> {
        mass["readings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kind"] == kind)
    }

    #[test]
    fn christmas_has_four_masses_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-12-25");
        let ids: Vec<&str> = masses(&output)
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, vec!["vigil", "night", "dawn", "day"]);
        assert_eq!(output.data["cycle"]["sunday"], "B");
        assert_eq!(output.data["celebration"]["id"], "nativity_of_the_lord");
        let night = &masses(&output)[1];
        assert_eq!(reading(night, "gospel").unwrap()["citation"], "Lk 2:1-14");
        assert!(output.text.contains("Mass during the Night"));
        assert_eq!(output.artifact_name, "liturgical_readings");
    }

    #[test]
    fn sunday_cycle_selects_the_gospel() {
        let dir = tempfile::tempdir().unwrap();
        let skill = skill(dir.path());
        let year_a = skill.at("2026-03-22");
        assert_eq!(year_a.data["cycle"]["sunday"], "A");
        let gospel = reading(&masses(&year_a)[0], "gospel").unwrap();
        assert_eq!(gospel["citation"], "Jn 11:1-45");
        assert_eq!(gospel["alternatives"][0], "Jn 11:3-7, 17, 20-27, 33b-45");
        let year_b = skill.at("2027-03-14");
        assert_eq!(
            reading(&masses(&year_b)[0], "gospel").unwrap()["citation"],
            "Jn 12:20-33"
        );
    }

    #[test]
    fn holy_saturday_points_to_the_vigil_and_easter_has_two_masses() {
        let dir = tempfile::tempdir().unwrap();
        let skill = skill(dir.path());
        let saturday = skill.at("2026-04-04");
        assert!(
            saturday.data["note"]
                .as_str()
                .unwrap()
                .contains("Easter Vigil")
        );
        let vigil = &masses(&saturday)[0];
        assert_eq!(vigil["id"], "vigil");
        assert_eq!(
            reading(vigil, "reading_7").unwrap()["citation"],
            "Ez 36:16-17a, 18-28"
        );
        assert_eq!(reading(vigil, "gospel").unwrap()["citation"], "Mt 28:1-10");
        let easter = skill.at("2026-04-05");
        let ids: Vec<&Value> = masses(&easter).iter().map(|m| &m["id"]).collect();
        assert_eq!(ids, vec!["vigil", "day"]);
    }

    #[test]
    fn holy_thursday_lists_the_chrism_mass_and_the_lords_supper() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-04-02");
        let ids: Vec<&Value> = masses(&output).iter().map(|m| &m["id"]).collect();
        assert_eq!(ids, vec!["chrism", "evening"]);
        assert!(output.text.contains("Evening Mass of the Lord's Supper"));
    }

    #[test]
    fn weekdays_after_epiphany_follow_the_date() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-01-07");
        let first = reading(&masses(&output)[0], "first_reading").unwrap();
        assert_eq!(first["citation"], "1Jn 3:22-4:6");
    }

    #[test]
    fn a_memorial_without_proper_readings_takes_the_weekday() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-12-17");
        assert_eq!(
            reading(&masses(&output)[0], "gospel").unwrap()["citation"],
            "Mt 1:1-17"
        );
        let day = liturgy::Calendar::default()
            .day("2026-01-02".parse().unwrap())
            .unwrap();
        let skill = skill(dir.path());
        if !skill.lectionary.has(&day.celebration.id) {
            let output = skill.at("2026-01-02");
            assert_eq!(
                reading(&masses(&output)[0], "first_reading").unwrap()["citation"],
                "1Jn 2:22-28"
            );
        }
    }

    #[test]
    fn a_memorial_replaces_only_the_readings_it_has_proper() {
        let reading = |kind, citation: &str| Reading {
            kind,
            citation: citation.to_string(),
            alternatives: Vec::new(),
        };
        let weekday = vec![Mass {
            name: None,
            readings: vec![
                reading(ReadingKind::FirstReading, "Heb 1:1-6"),
                reading(ReadingKind::ResponsorialPsalm, "Ps 97:1, 2b, 6, 7c, 9"),
                reading(ReadingKind::Gospel, "Mk 1:14-20"),
            ],
        }];
        let proper = vec![Mass {
            name: None,
            readings: vec![reading(ReadingKind::FirstReading, "2Tm 1:1-8")],
        }];
        let merged = overlay(weekday, proper);
        let citations: Vec<&str> = merged[0]
            .readings
            .iter()
            .map(|r| r.citation.as_str())
            .collect();
        assert_eq!(
            citations,
            vec!["2Tm 1:1-8", "Ps 97:1, 2b, 6, 7c, 9", "Mk 1:14-20"]
        );
    }

    #[test]
    fn optional_memorials_follow_the_day() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-01-07");
        let memorials = output.data["optional_memorials"].as_array().unwrap();
        assert!(
            memorials
                .iter()
                .any(|m| m["id"] == "raymond_of_penyafort_priest")
        );
        let day_part = output.text.find("First Reading").unwrap();
        let optional_part = output.text.find("Optional:").unwrap();
        assert!(day_part < optional_part);
    }

    #[test]
    fn without_a_bible_the_text_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let output = skill(dir.path()).at("2026-12-17");
        assert_eq!(output.data["bible_text_installed"], false);
        assert!(output.text.contains(INSTALL_BIBLE_COMMAND));
        assert!(
            reading(&masses(&output)[0], "gospel")
                .unwrap()
                .get("text")
                .is_none()
        );
    }

    #[test]
    fn with_a_bible_the_readings_carry_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("fixture.json");
        std::fs::write(
            &json,
            r#"{"version":{"name":"Fixture"},"verses":{
                "GEN.49.2":{"order":1,"text":"Two."},
                "GEN.49.8":{"order":2,"text":"Eight."},
                "GEN.49.10":{"order":3,"text":"Ten."},
                "MAT.1.1":{"order":4,"text":"Book of the generation."},
                "MAT.1.17":{"order":5,"text":"Fourteen generations."}}}"#,
        )
        .unwrap();
        liturgy::bible::install_from_json(&json, dir.path()).unwrap();
        let output = skill(dir.path()).at("2026-12-17");
        assert_eq!(output.data["bible_text_installed"], true);
        let mass = &masses(&output)[0];
        assert_eq!(
            reading(mass, "first_reading").unwrap()["text"],
            "Two. … Eight. Ten."
        );
        assert_eq!(
            reading(mass, "gospel").unwrap()["text"],
            "Book of the generation. Fourteen generations."
        );
        assert!(output.text.contains("Fourteen generations."));
        assert!(!output.text.contains(INSTALL_BIBLE_COMMAND));
    }

    #[tokio::test]
    async fn national_celebrations_say_where_their_readings_come_from() {
        let dir = tempfile::tempdir().unwrap();
        let skill = skill(dir.path());
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        let ask = |data: Value| {
            let mut request = SkillRequest::from_text("", now);
            request.data = data.as_object().cloned().unwrap();
            request
        };
        let aparecida = skill
            .run(ask(
                json!({"date": "2027-10-12", "calendar": "brazil", "language": "pt"}),
            ))
            .await
            .unwrap();
        assert_eq!(aparecida.data["calendar"], "brazil");
        assert_eq!(aparecida.data["celebration"]["id"], "our_lady_of_aparecida");
        assert_eq!(aparecida.data["celebration"]["rank_name"], "solenidade");
        assert_eq!(aparecida.data["readings_from"], "weekday_or_common");
        assert!(!masses(&aparecida).is_empty());
        assert!(aparecida.text.contains("Aparecida"), "{}", aparecida.text);
        assert!(
            aparecida.text.contains("\nEvangelho: "),
            "{}",
            aparecida.text
        );
        assert!(!aparecida.text.contains("Gospel"), "{}", aparecida.text);
        let immaculate = skill.run(ask(json!({"date": "2026-12-08"}))).await.unwrap();
        assert_eq!(immaculate.data["readings_from"], "proper");
        assert_eq!(immaculate.data["language"], "en");
        let weekday = skill.run(ask(json!({"date": "2026-12-15"}))).await.unwrap();
        assert_eq!(weekday.data["readings_from"], "proper_of_time");
    }

    #[tokio::test]
    async fn run_reads_dates_from_text_and_data() {
        let dir = tempfile::tempdir().unwrap();
        let skill = skill(dir.path());
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        let output = skill
            .run(SkillRequest::from_text("Christmas", now))
            .await
            .unwrap();
        assert_eq!(output.data["date"], "2026-12-25");
        let mut request = SkillRequest::from_text("", now);
        request.data.insert("date".into(), json!("2026-12-08"));
        let output = skill.run(request).await.unwrap();
        assert_eq!(output.data["date"], "2026-12-08");
        let failure = skill
            .run(SkillRequest::from_text("what colour is the sky", now))
            .await
            .unwrap_err();
        assert!(matches!(failure, SkillError::Failed(message) if message.contains("2026-12-08")));
    }
}
