//! The document model and the rules a document must follow before it may enter the corpus.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::CorpusError;

/// One text of the corpus (an encyclical, a catechism, a book of the Bible), cut into sections so
/// that search hits and citations can point at a paragraph rather than at a whole book.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Stable identifier, e.g. `mag:leo-xiii/rerum-novarum-1891`, `bible:dr/JHN`, `cat:baltimore-1`.
    pub id: String,
    /// Title as a reader would cite it.
    pub title: String,
    /// Author or issuer (a pope, a council, a translator), when one is known.
    #[serde(default)]
    pub author: Option<String>,
    /// Date of issue, `YYYY` or `YYYY-MM-DD`, when known.
    #[serde(default)]
    pub date: Option<String>,
    /// Kind of document (encyclical, catechism, scripture, …); search filters on it.
    #[serde(rename = "type")]
    pub doc_type: String,
    /// ISO 639-1 code of the text's language; it selects the stemming used to index it.
    pub language: String,
    /// A printed reference (e.g. `ASS 23 (1890-91) 641-670`) so readers can check the source.
    #[serde(default)]
    pub reference: Option<String>,
    /// Where the text can be read online.
    #[serde(default)]
    pub source_url: Option<String>,
    /// The text, in reading order.
    pub sections: Vec<Section>,
}

/// A citable unit of a document: a numbered paragraph, a question and answer, a verse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// Position within the document as people cite it (`20`, `3:16`, `q12`); unique per document.
    pub locus: String,
    /// A heading printed above the section, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// The text of the section.
    pub text: String,
}

const MAX_ID_LEN: usize = 200;
const MAX_LOCUS_LEN: usize = 100;

impl Document {
    /// Checks every rule of the corpus so that a bad record is refused before it touches the store.
    pub fn validate(&self) -> Result<(), CorpusError> {
        let invalid = |reason: String| CorpusError::InvalidDocument {
            id: self.id.clone(),
            reason,
        };
        validate_id(&self.id).map_err(invalid)?;
        if self.title.trim().is_empty() {
            return Err(invalid("the title is empty".into()));
        }
        if self.doc_type.trim().is_empty() {
            return Err(invalid("the type is empty".into()));
        }
        if !is_language_code(&self.language) {
            return Err(invalid(format!(
                "language `{}` is not an ISO 639-1 code (two lower-case letters, e.g. `en`, `la`)",
                self.language
            )));
        }
        if let Some(date) = &self.date {
            parse_year(date).ok_or_else(|| {
                invalid(format!(
                    "date `{date}` is not a valid `YYYY` or `YYYY-MM-DD` date"
                ))
            })?;
        }
        if self.sections.is_empty() {
            return Err(invalid("the document has no sections".into()));
        }
        let mut seen = HashSet::new();
        for (position, section) in self.sections.iter().enumerate() {
            validate_locus(&section.locus).map_err(|reason| {
                invalid(format!(
                    "section {} has a bad locus: {reason}",
                    position + 1
                ))
            })?;
            if !seen.insert(section.locus.as_str()) {
                return Err(invalid(format!(
                    "locus `{}` appears more than once",
                    section.locus
                )));
            }
            if section.text.trim().is_empty() {
                return Err(invalid(format!("section `{}` has no text", section.locus)));
            }
        }
        Ok(())
    }

    /// The year of the document, for year filters and for citations.
    pub fn year(&self) -> Option<i32> {
        self.date.as_deref().and_then(parse_year)
    }

    /// The section with this locus.
    pub fn section(&self, locus: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.locus == locus)
    }
}

/// Checks the id scheme: `prefix:rest`, with the stricter shapes of `mag:`, `bible:` and `cat:`.
pub fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the id is empty".into());
    }
    if id.len() > MAX_ID_LEN {
        return Err(format!("the id is longer than {MAX_ID_LEN} bytes"));
    }
    let Some((prefix, rest)) = id.split_once(':') else {
        return Err(format!(
            "id `{id}` has no `prefix:` (expected e.g. `mag:leo-xiii/rerum-novarum-1891`)"
        ));
    };
    let prefix_ok = prefix.starts_with(|c: char| c.is_ascii_lowercase())
        && prefix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !prefix_ok {
        return Err(format!(
            "id `{id}`: the prefix must be lower-case letters, digits and hyphens"
        ));
    }
    let rest_ok = rest.starts_with(|c: char| c.is_ascii_alphanumeric())
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | ':' | '-'));
    if !rest_ok {
        return Err(format!(
            "id `{id}`: after the prefix only letters, digits and `. _ / : -` are allowed"
        ));
    }
    let slug = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    match prefix {
        "mag" => {
            let ok = rest.split_once('/').is_some_and(|(issuer, title)| {
                slug(issuer)
                    && slug(title)
                    && title.rsplit_once('-').is_some_and(|(incipit, year)| {
                        !incipit.is_empty()
                            && year.len() == 4
                            && year.chars().all(|c| c.is_ascii_digit())
                    })
            });
            if !ok {
                return Err(format!(
                    "id `{id}` must be `mag:{{issuer}}/{{incipit-slug}}-{{year}}`, e.g. `mag:leo-xiii/rerum-novarum-1891`"
                ));
            }
        }
        "bible" => {
            let ok = rest.split_once('/').is_some_and(|(version, book)| {
                slug(version)
                    && book.len() == 3
                    && book
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            });
            if !ok {
                return Err(format!(
                    "id `{id}` must be `bible:{{version}}/{{USFM book code}}`, e.g. `bible:dr/JHN`"
                ));
            }
        }
        "cat" if !rest.split('/').all(slug) => {
            return Err(format!(
                "id `{id}` must be `cat:{{name}}` in lower case, e.g. `cat:baltimore-1`"
            ));
        }
        _ => {}
    }
    Ok(())
}

fn validate_locus(locus: &str) -> Result<(), String> {
    if locus.is_empty() {
        return Err("it is empty".into());
    }
    if locus.len() > MAX_LOCUS_LEN {
        return Err(format!("it is longer than {MAX_LOCUS_LEN} bytes"));
    }
    if locus
        .chars()
        .any(|c| c == '#' || c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "`{locus}` contains `#`, a space or a control character"
        ));
    }
    Ok(())
}

fn is_language_code(code: &str) -> bool {
    code.len() == 2 && code.chars().all(|c| c.is_ascii_lowercase())
}

/// The year of a `YYYY` or `YYYY-MM-DD` date, or `None` when the date is malformed or impossible.
pub(crate) fn parse_year(date: &str) -> Option<i32> {
    let digits = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_digit());
    let mut parts = date.split('-');
    let year_text = parts.next()?;
    if !digits(year_text, 4) {
        return None;
    }
    let year: i32 = year_text.parse().ok()?;
    match (parts.next(), parts.next(), parts.next()) {
        (None, None, None) => Some(year),
        (Some(m), Some(d), None) if digits(m, 2) && digits(d, 2) => {
            let month: u32 = m.parse().ok()?;
            let day: u32 = d.parse().ok()?;
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            let days_in_month = match month {
                1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
                4 | 6 | 9 | 11 => 30,
                2 if leap => 29,
                2 => 28,
                _ => return None,
            };
            (1..=days_in_month).contains(&day).then_some(year)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Document {
        Document {
            id: "mag:leo-xiii/rerum-novarum-1891".into(),
            title: "Rerum Novarum".into(),
            author: Some("Leo XIII".into()),
            date: Some("1891-05-15".into()),
            doc_type: "encyclical".into(),
            language: "en".into(),
            reference: None,
            source_url: None,
            sections: vec![Section {
                locus: "1".into(),
                heading: None,
                text: "Some text.".into(),
            }],
        }
    }

    #[test]
    fn accepts_the_id_shapes_of_the_scheme() {
        for id in [
            "mag:leo-xiii/rerum-novarum-1891",
            "mag:vatican-ii/gaudium-et-spes-1965",
            "bible:dr/JHN",
            "bible:dr/1SA",
            "cat:baltimore-1",
            "mr-1914:0101",
        ] {
            assert_eq!(validate_id(id), Ok(()), "{id}");
        }
        for id in [
            "",
            "rerum-novarum",
            "mag:leo-xiii/rerum-novarum",
            "mag:Leo/rerum-novarum-1891",
            "bible:dr/John",
            "cat:Baltimore",
            "x:has space",
            "x:a#b",
            "X:abc",
        ] {
            assert!(validate_id(id).is_err(), "{id}");
        }
    }

    #[test]
    fn dates_must_exist() {
        assert_eq!(parse_year("1891"), Some(1891));
        assert_eq!(parse_year("2024-02-29"), Some(2024));
        assert_eq!(parse_year("2023-02-29"), None);
        assert_eq!(parse_year("1891-13-01"), None);
        assert_eq!(parse_year("91"), None);
        assert_eq!(parse_year("1891-5-15"), None);
    }

    #[test]
    fn validation_names_the_broken_rule() {
        assert!(sample().validate().is_ok());
        let mut doc = sample();
        doc.sections.push(doc.sections[0].clone());
        let err = doc.validate().unwrap_err().to_string();
        assert!(err.contains("more than once"), "{err}");

        let mut doc = sample();
        doc.language = "eng".into();
        assert!(
            doc.validate()
                .unwrap_err()
                .to_string()
                .contains("ISO 639-1")
        );

        let mut doc = sample();
        doc.sections.clear();
        assert!(
            doc.validate()
                .unwrap_err()
                .to_string()
                .contains("no sections")
        );

        let mut doc = sample();
        doc.sections[0].text = "  ".into();
        assert!(doc.validate().unwrap_err().to_string().contains("no text"));

        let mut doc = sample();
        doc.title = String::new();
        assert!(doc.validate().unwrap_err().to_string().contains("title"));
    }

    #[test]
    fn serialises_doc_type_as_type() {
        let json = serde_json::to_value(sample()).unwrap();
        assert_eq!(json["type"], "encyclical");
        assert!(json.get("doc_type").is_none());
        assert!(json["sections"][0].get("heading").is_none());
        let back: Document = serde_json::from_value(json).unwrap();
        assert_eq!(back, sample());
    }
}
