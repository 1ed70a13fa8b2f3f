//! Modern wordings and the words of the starter corpus's texts. The catechisms (1885–1923) and
//! the Douay-Rheims say "Holy Ghost", "the Commandments of God", "Extreme Unction" and
//! "Matrimony", and answer "Is stealing a sin?" under "the seventh Commandment"; a reader asks in
//! today's words. A query holding a modern wording also searches the older words, and a
//! question's topic words include them.
//!
//! The table is small and written by hand from the texts themselves: each older wording is one
//! the starter corpus uses for the same thing (a catechism question, or the commandment that
//! names the sin).

/// (modern wording, the older wordings the texts use for it).
const WORDINGS: &[(&str, &[&str])] = &[
    ("holy spirit", &["holy ghost"]),
    ("ten commandments", &["commandments of god"]),
    ("hail mary", &["angelical salutation"]),
    ("our father", &["lord's prayer"]),
    ("anointing of the sick", &["extreme unction"]),
    ("last rites", &["extreme unction", "viaticum"]),
    ("reconciliation", &["penance"]),
    ("marriage", &["matrimony"]),
    ("priesthood", &["holy orders"]),
    ("ordination", &["holy orders"]),
    ("seven deadly sins", &["capital sins"]),
    ("deadly sins", &["capital sins"]),
    ("holy days", &["holydays"]),
    ("holy day", &["holyday"]),
    ("miss mass", &["not to hear mass"]),
    ("missing mass", &["not to hear mass"]),
    ("skip mass", &["not to hear mass"]),
    ("virgin mary", &["blessed virgin"]),
    ("second coming", &["general judgment"]),
    ("last judgment", &["general judgment"]),
    ("stealing", &["steal", "seventh commandment"]),
    ("theft", &["steal", "seventh commandment"]),
    ("lying", &["lies", "eighth commandment"]),
    ("murder", &["kill", "fifth commandment"]),
    ("killing", &["kill", "fifth commandment"]),
    ("adultery", &["sixth commandment"]),
];

/// Lower-cased words of a text, punctuation dropped (inner apostrophes kept).
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .map(|w| w.trim_matches(['\'', '’']).replace('’', "'").to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Where the words of `needle` stand in a row in `haystack`, if they do.
fn find_run(haystack: &[String], needle: &[String]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The older wordings of every modern wording the query holds, in table order, each once.
/// A wording inside a longer one that matched ("deadly sins" in "seven deadly sins") adds
/// nothing of its own.
pub fn older_wordings(query: &str) -> Vec<&'static str> {
    let words = plain_words(query);
    let mut older: Vec<&'static str> = Vec::new();
    for (modern, wordings) in WORDINGS {
        if find_run(&words, &plain_words(modern)).is_some() {
            for wording in *wordings {
                if !older.contains(wording) {
                    older.push(wording);
                }
            }
        }
    }
    older
}

/// The query with each modern wording replaced by the older words ("Who is the Holy Spirit?"
/// → "who is the holy ghost"): lower-cased plain words, for comparing a question's topic words
/// with the questions of a catechism. A query with no modern wording is returned unchanged.
pub fn in_older_words(query: &str) -> String {
    let mut words = plain_words(query);
    let mut changed = false;
    for (modern, wordings) in WORDINGS {
        let modern = plain_words(modern);
        while let Some(start) = find_run(&words, &modern) {
            let replacement: Vec<String> = wordings.iter().flat_map(|w| plain_words(w)).collect();
            words.splice(start..start + modern.len(), replacement);
            changed = true;
        }
    }
    if changed {
        words.join(" ")
    } else {
        query.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_wordings_find_the_words_of_the_old_texts() {
        assert_eq!(older_wordings("Who is the Holy Spirit?"), ["holy ghost"]);
        assert_eq!(
            older_wordings("What are the Ten Commandments?"),
            ["commandments of god"]
        );
        assert_eq!(
            older_wordings("Is stealing a sin?"),
            ["steal", "seventh commandment"]
        );
        assert_eq!(
            older_wordings("What are the seven deadly sins?"),
            ["capital sins"]
        );
        assert_eq!(
            older_wordings("Pray the Hail Mary and the Our Father"),
            ["angelical salutation", "lord's prayer"]
        );
        // Words must stand together, whole: "spirit" alone, "holy" alone, "mass" alone.
        assert!(older_wordings("the spirit is holy").is_empty());
        assert!(older_wordings("What is the Mass?").is_empty());
        assert!(older_wordings("Where was the marriage feast?").contains(&"matrimony"));
        assert!(older_wordings("").is_empty());
    }

    #[test]
    fn a_question_can_be_read_in_the_old_words() {
        assert_eq!(
            in_older_words("Who is the Holy Spirit?"),
            "who is the holy ghost"
        );
        assert_eq!(
            in_older_words("Is it a sin to miss Mass on Sunday?"),
            "is it a sin to not to hear mass on sunday"
        );
        assert_eq!(
            in_older_words("Lying and stealing"),
            "lies eighth commandment and steal seventh commandment"
        );
        assert_eq!(in_older_words("What is grace?"), "What is grace?");
    }

    #[test]
    fn every_entry_is_lower_case_plain_words() {
        for (modern, older) in WORDINGS {
            assert_eq!(plain_words(modern).join(" "), *modern);
            assert!(!older.is_empty(), "{modern}");
            for wording in *older {
                assert_eq!(plain_words(wording).join(" "), *wording, "{modern}");
                assert!(
                    find_run(&plain_words(wording), &plain_words(modern)).is_none(),
                    "{modern} would be replaced forever"
                );
            }
        }
    }
}
