//! Celebrations, ranks, colours and seasons named in the languages of `data/names/` (derived
//! from romcal's locales; Dutch is the project's own); English is the engine's own and needs
//! no table.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::{Color, Rank, Season};

/// The languages answers can be given in, English first (BCP 47 primary subtags).
pub const LANGUAGES: [&str; 9] = ["en", "la", "pt", "pl", "fr", "nl", "de", "es", "it"];

const FILES: [(&str, &str); 8] = [
    ("la", include_str!("../data/names/la.txt")),
    ("pt", include_str!("../data/names/pt.txt")),
    ("pl", include_str!("../data/names/pl.txt")),
    ("fr", include_str!("../data/names/fr.txt")),
    ("nl", include_str!("../data/names/nl.txt")),
    ("de", include_str!("../data/names/de.txt")),
    ("es", include_str!("../data/names/es.txt")),
    ("it", include_str!("../data/names/it.txt")),
];

/// "commemoration" is not a rank in romcal's locales: the engine's own words.
const COMMEMORATION: [(&str, &str); 8] = [
    ("la", "commemoratio"),
    ("pt", "comemoração"),
    ("pl", "wspomnienie (komemoracja)"),
    ("fr", "commémoraison"),
    ("nl", "commemoratie"),
    ("de", "Kommemoration"),
    ("es", "conmemoración"),
    ("it", "commemorazione"),
];

/// The supported language a BCP 47 tag asks for (`pt-BR` → `pt`, `EN` → `en`), if any.
pub fn supported(tag: &str) -> Option<&'static str> {
    let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
    LANGUAGES.into_iter().find(|language| *language == primary)
}

/// The first supported language of an `Accept-Language` header, by quality (`q`), else none.
pub fn from_accept_language(header: &str) -> Option<&'static str> {
    let mut ranges: Vec<(f32, &str)> = header
        .split(',')
        .take(32)
        .filter_map(|part| {
            let mut pieces = part.split(';');
            let tag = pieces.next()?.trim();
            let quality = pieces
                .find_map(|p| p.trim().strip_prefix("q=")?.parse::<f32>().ok())
                .unwrap_or(1.0);
            (quality > 0.0).then_some((quality, tag))
        })
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranges.into_iter().find_map(|(_, tag)| supported(tag))
}

/// The names of one language; `None` from [`Names::of`] for English, whose names the calendar
/// already carries.
#[derive(Debug)]
pub struct Names {
    language: &'static str,
    table: HashMap<&'static str, &'static str>,
}

impl Names {
    /// The table of a supported language other than English.
    pub fn of(language: &str) -> Option<&'static Names> {
        static TABLES: [OnceLock<Names>; FILES.len()] = [const { OnceLock::new() }; FILES.len()];
        let index = FILES.iter().position(|(code, _)| *code == language)?;
        let (language, text) = FILES[index];
        Some(TABLES[index].get_or_init(|| {
            Names {
                language,
                table: text
                    .lines()
                    .filter(|line| !line.starts_with('#'))
                    .filter_map(|line| line.split_once('|'))
                    .collect(),
            }
        }))
    }

    /// The language of the table.
    pub fn language(&self) -> &'static str {
        self.language
    }

    /// A celebration's name: the nearest calendar of `lineage` (as [`crate::Calendar::lineage`]
    /// gives it) that names it, else the General Roman Calendar's.
    pub fn celebration(&self, lineage: &[&str], id: &str) -> Option<&'static str> {
        lineage
            .iter()
            .filter(|calendar| **calendar != crate::GENERAL_ROMAN)
            .find_map(|calendar| self.table.get(format!("{calendar}:{id}").as_str()))
            .or_else(|| self.table.get(id))
            .copied()
    }

    /// A rank's name, e.g. `uroczystość`.
    pub fn rank(&self, rank: Rank) -> Option<&'static str> {
        if rank == Rank::Commemoration {
            return COMMEMORATION
                .iter()
                .find(|(code, _)| *code == self.language)
                .map(|(_, word)| *word);
        }
        self.word("rank", rank.as_str())
    }

    /// A colour's name.
    pub fn color(&self, color: Color) -> Option<&'static str> {
        self.word("color", color.as_str())
    }

    /// A season's name.
    pub fn season(&self, season: Season) -> Option<&'static str> {
        self.word("season", season.as_str())
    }

    fn word(&self, kind: &str, key: &str) -> Option<&'static str> {
        self.table.get(format!("@{kind}.{key}").as_str()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_headers_choose_a_supported_language() {
        assert_eq!(supported("pt-BR"), Some("pt"));
        assert_eq!(supported("PL"), Some("pl"));
        assert_eq!(supported("nl-BE"), Some("nl"));
        assert_eq!(supported("sv"), None);
        assert_eq!(
            from_accept_language("sv-SE, de;q=0.8, en;q=0.5"),
            Some("de")
        );
        assert_eq!(from_accept_language("fr;q=0.2, it;q=0.9"), Some("it"));
        assert_eq!(from_accept_language("sv, fi"), None);
        assert_eq!(from_accept_language("de;q=0, es"), Some("es"));
    }

    #[test]
    fn every_language_names_ranks_colours_seasons_and_celebrations() {
        for language in LANGUAGES.into_iter().skip(1) {
            let names = Names::of(language).unwrap();
            for rank in [
                Rank::Solemnity,
                Rank::Feast,
                Rank::Memorial,
                Rank::OptionalMemorial,
                Rank::Commemoration,
                Rank::Sunday,
                Rank::Weekday,
            ] {
                assert!(names.rank(rank).is_some(), "{language}: {rank:?}");
            }
            for color in [
                Color::White,
                Color::Red,
                Color::Green,
                Color::Violet,
                Color::Rose,
                Color::Black,
            ] {
                assert!(names.color(color).is_some(), "{language}: {color:?}");
            }
            assert!(names.season(Season::OrdinaryTime).is_some(), "{language}");
            assert!(
                names
                    .celebration(&["general-roman"], "easter_sunday")
                    .is_some(),
                "{language}"
            );
            assert!(
                names
                    .celebration(&["general-roman"], "ordinary_time_10_wednesday")
                    .is_some(),
                "{language}"
            );
        }
        let polish = Names::of("pl").unwrap();
        assert_eq!(polish.rank(Rank::Solemnity), Some("uroczystość"));
        assert_eq!(polish.color(Color::Violet), Some("fioletowy"));
        let queen = polish.celebration(
            &["poland", "europe", "general-roman"],
            "our_lady_queen_of_poland",
        );
        assert!(queen.unwrap().contains("Królowej Polski"), "{queen:?}");
        assert_eq!(
            Names::of("de")
                .unwrap()
                .celebration(&["general-roman"], "easter_sunday"),
            Some("Ostersonntag der Auferstehung des Herrn")
        );
        let dutch = Names::of("nl").unwrap();
        let lineage = ["netherlands", "europe", "general-roman"];
        assert_eq!(
            dutch.celebration(&lineage, "willibrord_of_utrecht_bishop"),
            Some("Heilige Willibrord, bisschop, patroon van Nederland")
        );
        assert_eq!(dutch.rank(Rank::Solemnity), Some("hoogfeest"));
        assert!(Names::of("en").is_none());
    }
}
