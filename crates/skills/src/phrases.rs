//! The fixed sentences and labels of the calendar skills' text in each language they answer in.

/// The words of one language.
#[derive(Debug)]
pub struct Sentences {
    language: &'static str,
    /// Introduces an optional memorial or commemoration kept instead of the day.
    pub may_also_be_kept: &'static str,
    /// Introduces a celebration that gives way to another this year.
    pub not_celebrated: &'static str,
    /// Introduces the names of the Roman Martyrology.
    pub martyrology: &'static str,
    /// Introduces an optional celebration in the readings.
    pub optional: &'static str,
    /// Follows an optional celebration that has readings of its own.
    pub proper_readings: &'static str,
    /// Follows optional celebrations without readings of their own.
    pub day_or_commons: &'static str,
    /// Said when the Lectionary data has nothing for the day.
    pub no_readings: &'static str,
    /// The first reading.
    pub first_reading: &'static str,
    /// The responsorial psalm.
    pub psalm: &'static str,
    /// The second reading.
    pub second_reading: &'static str,
    /// The epistle of the Easter Vigil.
    pub epistle: &'static str,
    /// The acclamation before the Gospel.
    pub acclamation: &'static str,
    /// The Gospel.
    pub gospel: &'static str,
    /// A numbered reading of the Easter Vigil.
    pub reading: &'static str,
}

const TABLE: [Sentences; 9] = [
    Sentences {
        language: "en",
        may_also_be_kept: "May also be kept",
        not_celebrated: "Not celebrated this year",
        martyrology: "Roman Martyrology",
        optional: "Optional",
        proper_readings: "proper readings",
        day_or_commons: "the readings of the day, or of the Commons",
        no_readings: "No readings are recorded for this day.",
        first_reading: "First Reading",
        psalm: "Responsorial Psalm",
        second_reading: "Second Reading",
        epistle: "Epistle",
        acclamation: "Gospel Acclamation",
        gospel: "Gospel",
        reading: "Reading",
    },
    Sentences {
        language: "la",
        may_also_be_kept: "Celebrari etiam potest",
        not_celebrated: "Hoc anno non celebratur",
        martyrology: "Martyrologium Romanum",
        optional: "Ad libitum",
        proper_readings: "lectiones propriae",
        day_or_commons: "lectiones feriae vel de Communi",
        no_readings: "Nullae lectiones huic diei notantur.",
        first_reading: "Lectio prima",
        psalm: "Psalmus responsorius",
        second_reading: "Lectio altera",
        epistle: "Epistola",
        acclamation: "Acclamatio ante Evangelium",
        gospel: "Evangelium",
        reading: "Lectio",
    },
    Sentences {
        language: "pt",
        may_also_be_kept: "Pode também celebrar-se",
        not_celebrated: "Não se celebra este ano",
        martyrology: "Martirológio Romano",
        optional: "Facultativa",
        proper_readings: "leituras próprias",
        day_or_commons: "as leituras do dia, ou do Comum",
        no_readings: "Não há leituras registadas para este dia.",
        first_reading: "Primeira Leitura",
        psalm: "Salmo Responsorial",
        second_reading: "Segunda Leitura",
        epistle: "Epístola",
        acclamation: "Aclamação ao Evangelho",
        gospel: "Evangelho",
        reading: "Leitura",
    },
    Sentences {
        language: "pl",
        may_also_be_kept: "Można też obchodzić",
        not_celebrated: "W tym roku nie obchodzi się",
        martyrology: "Martyrologium Rzymskie",
        optional: "Dowolnie",
        proper_readings: "czytania własne",
        day_or_commons: "czytania z dnia albo z tekstów wspólnych",
        no_readings: "Dla tego dnia nie zapisano czytań.",
        first_reading: "Pierwsze czytanie",
        psalm: "Psalm responsoryjny",
        second_reading: "Drugie czytanie",
        epistle: "Epistoła",
        acclamation: "Śpiew przed Ewangelią",
        gospel: "Ewangelia",
        reading: "Czytanie",
    },
    Sentences {
        language: "fr",
        may_also_be_kept: "Peut aussi être célébré",
        not_celebrated: "Non célébré cette année",
        martyrology: "Martyrologe romain",
        optional: "Facultatif",
        proper_readings: "lectures propres",
        day_or_commons: "les lectures du jour, ou du commun",
        no_readings: "Aucune lecture n'est enregistrée pour ce jour.",
        first_reading: "Première lecture",
        psalm: "Psaume",
        second_reading: "Deuxième lecture",
        epistle: "Épître",
        acclamation: "Acclamation de l'Évangile",
        gospel: "Évangile",
        reading: "Lecture",
    },
    Sentences {
        language: "nl",
        may_also_be_kept: "Kan ook gevierd worden",
        not_celebrated: "Dit jaar niet gevierd",
        martyrology: "Romeins martyrologium",
        optional: "Facultatief",
        proper_readings: "eigen lezingen",
        day_or_commons: "de lezingen van de dag, of uit het gemeenschappelijke",
        no_readings: "Voor deze dag zijn geen lezingen vastgelegd.",
        first_reading: "Eerste lezing",
        psalm: "Tussenzang",
        second_reading: "Tweede lezing",
        epistle: "Epistel",
        acclamation: "Vers voor het evangelie",
        gospel: "Evangelie",
        reading: "Lezing",
    },
    Sentences {
        language: "de",
        may_also_be_kept: "Kann auch gefeiert werden",
        not_celebrated: "In diesem Jahr nicht gefeiert",
        martyrology: "Römisches Martyrologium",
        optional: "Nicht geboten",
        proper_readings: "eigene Lesungen",
        day_or_commons: "die Lesungen vom Tag oder aus den Commune-Texten",
        no_readings: "Für diesen Tag sind keine Lesungen verzeichnet.",
        first_reading: "Erste Lesung",
        psalm: "Antwortpsalm",
        second_reading: "Zweite Lesung",
        epistle: "Epistel",
        acclamation: "Ruf vor dem Evangelium",
        gospel: "Evangelium",
        reading: "Lesung",
    },
    Sentences {
        language: "es",
        may_also_be_kept: "Puede celebrarse también",
        not_celebrated: "No se celebra este año",
        martyrology: "Martirologio romano",
        optional: "Libre",
        proper_readings: "lecturas propias",
        day_or_commons: "las lecturas del día, o del común",
        no_readings: "No hay lecturas registradas para este día.",
        first_reading: "Primera lectura",
        psalm: "Salmo responsorial",
        second_reading: "Segunda lectura",
        epistle: "Epístola",
        acclamation: "Aclamación antes del Evangelio",
        gospel: "Evangelio",
        reading: "Lectura",
    },
    Sentences {
        language: "it",
        may_also_be_kept: "Si può anche celebrare",
        not_celebrated: "Non celebrato quest'anno",
        martyrology: "Martirologio romano",
        optional: "Facoltativa",
        proper_readings: "letture proprie",
        day_or_commons: "le letture del giorno, o del comune",
        no_readings: "Nessuna lettura è registrata per questo giorno.",
        first_reading: "Prima lettura",
        psalm: "Salmo responsoriale",
        second_reading: "Seconda lettura",
        epistle: "Epistola",
        acclamation: "Canto al Vangelo",
        gospel: "Vangelo",
        reading: "Lettura",
    },
];

/// The words of `language` (one of `liturgy::names::LANGUAGES`), else English.
pub fn sentences(language: &str) -> &'static Sentences {
    TABLE
        .iter()
        .find(|row| row.language == language)
        .unwrap_or(&TABLE[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_its_sentences() {
        for language in liturgy::names::LANGUAGES {
            assert_eq!(sentences(language).language, language);
        }
        assert_eq!(sentences("pl").martyrology, "Martyrologium Rzymskie");
        assert_eq!(sentences("xx").may_also_be_kept, "May also be kept");
    }
}
