//! The fixed sentences of the calendar skills' text in each language they answer in.

/// A fixed sentence of an answer's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phrase {
    /// Introduces an optional memorial or commemoration.
    MayAlsoBeKept,
    /// Introduces a celebration that gives way to another this year.
    NotCelebratedThisYear,
    /// Introduces the names of the Roman Martyrology.
    RomanMartyrology,
}

/// `(language, may also be kept, not celebrated this year, Roman Martyrology)`.
const TABLE: [(&str, &str, &str, &str); 9] = [
    (
        "en",
        "May also be kept",
        "Not celebrated this year",
        "Roman Martyrology",
    ),
    (
        "la",
        "Celebrari etiam potest",
        "Hoc anno non celebratur",
        "Martyrologium Romanum",
    ),
    (
        "pt",
        "Pode também celebrar-se",
        "Não se celebra este ano",
        "Martirológio Romano",
    ),
    (
        "pl",
        "Można też obchodzić",
        "W tym roku nie obchodzi się",
        "Martyrologium Rzymskie",
    ),
    (
        "fr",
        "Peut aussi être célébré",
        "Non célébré cette année",
        "Martyrologe romain",
    ),
    (
        "nl",
        "Kan ook gevierd worden",
        "Dit jaar niet gevierd",
        "Romeins martyrologium",
    ),
    (
        "de",
        "Kann auch gefeiert werden",
        "In diesem Jahr nicht gefeiert",
        "Römisches Martyrologium",
    ),
    (
        "es",
        "Puede celebrarse también",
        "No se celebra este año",
        "Martirologio romano",
    ),
    (
        "it",
        "Si può anche celebrare",
        "Non celebrato quest'anno",
        "Martirologio romano",
    ),
];

/// The sentence in `language` (one of `liturgy::names::LANGUAGES`), else in English.
pub fn phrase(language: &str, phrase: Phrase) -> &'static str {
    let row = TABLE
        .iter()
        .find(|row| row.0 == language)
        .unwrap_or(&TABLE[0]);
    match phrase {
        Phrase::MayAlsoBeKept => row.1,
        Phrase::NotCelebratedThisYear => row.2,
        Phrase::RomanMartyrology => row.3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_its_sentences() {
        for language in liturgy::names::LANGUAGES {
            assert!(TABLE.iter().any(|row| row.0 == language), "{language}");
        }
        assert_eq!(
            phrase("pl", Phrase::RomanMartyrology),
            "Martyrologium Rzymskie"
        );
        assert_eq!(phrase("xx", Phrase::MayAlsoBeKept), "May also be kept");
    }
}
