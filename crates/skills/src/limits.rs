//! Caps on the free text a skill accepts. Every word of a query becomes term queries over
//! several fields and analysers, and the text is copied into the stored task, so the work and
//! the storage of one call stay bounded. A text over its cap is refused as invalid params
//! naming the limit ([`SkillError::InvalidInput`]).

use crate::SkillError;

/// Longest `document_search` query, in characters (as the hosted Search API).
pub const MAX_QUERY_CHARS: usize = 1024;
/// Longest `catholic_qa` question, in characters.
pub const MAX_QUESTION_CHARS: usize = 2000;
/// Longest document id or locus `document_fetch` accepts, in characters.
pub const MAX_ID_CHARS: usize = 512;
/// Longest search filter value (type, author, language), in characters.
pub const MAX_FILTER_CHARS: usize = 128;
/// Longest date query of the liturgical skills (`tomorrow`, `next Sunday`, `Christmas 2027`),
/// in characters.
pub const MAX_DATE_QUERY_CHARS: usize = 256;

/// `Ok` if `value` is at most `limit` characters; otherwise the refusal naming `what` and
/// the limit.
pub fn check(what: &str, value: &str, limit: usize) -> Result<(), SkillError> {
    let length = value.chars().count();
    if length <= limit {
        return Ok(());
    }
    Err(SkillError::InvalidInput(format!(
        "{what} is {length} characters long, over the limit of {limit} characters"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_limit() {
        assert!(check("the query", &"a".repeat(MAX_QUERY_CHARS), MAX_QUERY_CHARS).is_ok());
        let error = check("the query", &"é".repeat(1025), MAX_QUERY_CHARS).unwrap_err();
        assert!(matches!(&error, SkillError::InvalidInput(_)));
        assert_eq!(
            error.to_string(),
            "the query is 1025 characters long, over the limit of 1024 characters"
        );
    }
}
