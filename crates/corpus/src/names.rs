//! Persons named in a query: "Saint Joseph", "St. Peter", "St Thérèse". The title says who is
//! meant but not what the question is about, so it is not searched as a topic word (every
//! passage on "the saints" would match it); the name is searched as a name, and the written
//! form "St. Joseph" counts as a phrase.

/// Words that title a saint when a capitalised name follows them.
const TITLES: [&str; 6] = ["saint", "st", "sts", "saints", "ste", "san"];
/// Titles that name one saint even when the name is typed in lower case ("saint joseph").
const SINGULAR_TITLES: [&str; 2] = ["saint", "st"];
/// Words after "saint" that are not a name ("saint and martyr", "a saint is…").
const NOT_NAMES: [&str; 14] = [
    "and", "of", "the", "is", "was", "who", "in", "a", "to", "for", "or", "as", "be", "are",
];

/// A query with the saints' titles taken out, and the names they titled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedQuery {
    /// The query without the titles ("Who was Joseph?").
    pub text: String,
    /// The names that followed a title, as written ("Joseph").
    pub names: Vec<String>,
}

/// Finds "Saint Name" (also `St.`, `St`, `Sts.`) in a query: a title word followed by a word
/// that starts with a capital letter. A title not followed by a name ("the saints") stays.
pub fn saint_names(query: &str) -> NamedQuery {
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(words.len());
    let mut names = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let word = words[index];
        let bare = word.trim_end_matches('.').to_lowercase();
        let next = words.get(index + 1).copied();
        let names_someone = next.is_some_and(|n| {
            n.starts_with(char::is_uppercase)
                || (SINGULAR_TITLES.contains(&bare.as_str())
                    && n.starts_with(char::is_alphabetic)
                    && !NOT_NAMES.contains(&n.to_lowercase().as_str()))
        });
        if TITLES.contains(&bare.as_str())
            && names_someone
            && let Some(name) = next
        {
            let name = name.trim_matches(|c: char| !c.is_alphanumeric());
            if !name.is_empty() {
                names.push(name.to_string());
            }
            index += 1;
            continue;
        }
        kept.push(word);
        index += 1;
    }
    NamedQuery {
        text: kept.join(" "),
        names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_go_and_names_are_kept() {
        let named = saint_names("Who was Saint Joseph?");
        assert_eq!(named.text, "Who was Joseph?");
        assert_eq!(named.names, ["Joseph"]);
        let named = saint_names("Tell me about St. Thérèse and St Paul.");
        assert_eq!(named.text, "Tell me about Thérèse and Paul.");
        assert_eq!(named.names, ["Thérèse", "Paul"]);
        assert_eq!(saint_names("who was saint joseph").names, ["joseph"]);
    }

    #[test]
    fn saints_without_a_name_stay_a_topic() {
        let named = saint_names("Why do Catholics pray to saints?");
        assert_eq!(named.text, "Why do Catholics pray to saints?");
        assert!(named.names.is_empty());
        assert_eq!(
            saint_names("the communion of saints").text,
            "the communion of saints"
        );
        assert!(
            saint_names("what makes a saint and martyr")
                .names
                .is_empty()
        );
    }
}
