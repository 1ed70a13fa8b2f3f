//! Modern wordings and the words of the starter corpus's texts. The catechisms (1885–1923) and
//! the Douay-Rheims say "Holy Ghost", "the Commandments of God", "Extreme Unction" and
//! "Matrimony", and answer "Is stealing a sin?" under "the seventh Commandment"; a reader asks in
//! today's words. A query holding a modern wording also searches the older words, and a
//! question's topic words include them.
//!
//! The table is small and written by hand from the texts themselves: each older wording is one
//! the starter corpus uses for the same thing (a catechism question, or the commandment that
//! names the sin). A moral question in today's words reaches the commandment that governs it
//! and the catechism's own words for the act ("abortion" → "procure abortion", the words of
//! the Roman Catechism on Matrimony, and "the fifth Commandment … forbids all wilful murder");
//! such an entry does not keep the modern word, which the old texts use in another sense
//! ("as an abortive that is cast forth", "the best designs may prove abortive"). An entry that
//! lists the modern word among its older wordings keeps it ("divorce" is the texts' word too).

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
    (
        "divorce",
        &["divorce", "put away his wife", "put away her husband"],
    ),
    (
        "divorced",
        &["divorce", "put away his wife", "put away her husband"],
    ),
    (
        "gossip",
        &["backbiting", "detraction", "eighth commandment"],
    ),
    ("ordain", &["ordain", "holy orders"]),
    ("ordain a priest", &["holy orders", "ordain"]),
    ("ordain priests", &["holy orders", "ordain"]),
    ("last supper", &["last supper", "supper"]),
    ("drunk", &["drunk", "drunkenness"]),
    ("baptize", &["baptize", "administer baptism"]),
    ("mary", &["mary", "blessed virgin", "mother of god"]),
];

/// (act named in today's words, the catechisms' words for it and the commandment governing it).
/// The old texts name these acts only there, or use the modern word in another sense, so an
/// answer reads them in the catechisms alone.
const MORAL_WORDINGS: &[(&str, &[&str])] = &[
    (
        "abortion",
        &["procure abortion", "wilful murder", "thou shalt not kill"],
    ),
    (
        "abortions",
        &["procure abortion", "wilful murder", "thou shalt not kill"],
    ),
    ("euthanasia", &["wilful murder", "thou shalt not kill"]),
    ("assisted suicide", &["suicide", "thou shalt not kill"]),
    ("contraception", &["prevent conception"]),
    ("birth control", &["prevent conception"]),
];

/// (doctrine named in today's words, the catechisms' words for what it is about). An answer
/// reads a passage in these words too ("the Real Presence" is what "What is the Holy
/// Eucharist?" answers), but a search does not rank by them: the passages naming the doctrine
/// itself come first there.
const ANSWER_WORDINGS: &[(&str, &[&str])] = &[(
    "real presence",
    &["real presence", "holy eucharist", "eucharist"],
)];

/// What kind of entry a wording is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordingKind {
    /// The texts' words for the same thing: searched and read alike.
    Same,
    /// A moral act, named in the texts only by the catechisms' words for it and the
    /// commandment governing it: searched, and read in the catechisms alone.
    Moral,
    /// A doctrine, whose catechism wordings an answer reads but a search does not rank by.
    AnswerOnly,
}

/// Every entry of the three tables, with its kind.
fn entries() -> impl Iterator<Item = (&'static str, &'static [&'static str], WordingKind)> {
    let table = |entries: &'static [(&'static str, &'static [&'static str])], kind| {
        entries
            .iter()
            .map(move |(modern, older)| (*modern, *older, kind))
    };
    table(WORDINGS, WordingKind::Same)
        .chain(table(MORAL_WORDINGS, WordingKind::Moral))
        .chain(table(ANSWER_WORDINGS, WordingKind::AnswerOnly))
}

/// Lower-cased words of a text, punctuation dropped (inner apostrophes kept).
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .map(|w| w.trim_matches(['\'', '’']).replace('’', "'").to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The older wordings of every modern wording the query holds, in the query's order, each
/// once. The query is read as [`query_words`] reads it: a wording inside a longer one that
/// matched ("deadly sins" in "seven deadly sins", "mary" in "hail mary") adds nothing of its own.
pub fn older_wordings(query: &str) -> Vec<&'static str> {
    let mut older: Vec<&'static str> = Vec::new();
    for word in query_words(query) {
        if word.kind == WordingKind::AnswerOnly {
            continue;
        }
        for wording in word.older {
            if !older.contains(wording) {
                older.push(wording);
            }
        }
    }
    older
}

/// A word of a query as the texts would say it: the word itself, or a modern wording (one or
/// more words) with the older wordings the texts use for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryWord {
    /// The word, or the words of the modern wording, lower-cased, as the query has them.
    pub text: String,
    /// The older wordings of a modern wording (empty for a plain word).
    pub older: &'static [&'static str],
    /// What kind of wording it is (`Same` for a plain word).
    pub kind: WordingKind,
}

/// The query read left to right: each modern wording of the table (the longest one starting at
/// a word, so "seven deadly sins" before "deadly sins") is one [`QueryWord`] with its older
/// wordings, every other word a plain one. Read once: an older wording holding the modern word
/// ("divorce") is not read again.
pub fn query_words(query: &str) -> Vec<QueryWord> {
    let words = plain_words(query);
    let mut read = Vec::with_capacity(words.len());
    let mut at = 0;
    while at < words.len() {
        let longest = entries()
            .map(|(modern, older, kind)| (plain_words(modern), older, kind))
            .filter(|(modern, _, _)| words[at..].starts_with(modern))
            .max_by_key(|(modern, _, _)| modern.len());
        match longest {
            Some((modern, older, kind)) => {
                read.push(QueryWord {
                    text: modern.join(" "),
                    older,
                    kind,
                });
                at += modern.len();
            }
            None => {
                read.push(QueryWord {
                    text: words[at].clone(),
                    older: &[],
                    kind: WordingKind::Same,
                });
                at += 1;
            }
        }
    }
    read
}

/// The query with each modern wording replaced by the older words ("Who is the Holy Spirit?"
/// → "who is the holy ghost"): lower-cased plain words, for comparing a question's topic words
/// with the questions of a catechism. A query with no modern wording is returned unchanged.
pub fn in_older_words(query: &str) -> String {
    let read = query_words(query);
    let replaced =
        |word: &QueryWord| !word.older.is_empty() && word.kind != WordingKind::AnswerOnly;
    if !read.iter().any(replaced) {
        return query.to_string();
    }
    read.iter()
        .map(|word| {
            if !replaced(word) {
                word.text.clone()
            } else {
                word.older.join(" ")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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
        assert_eq!(
            in_older_words("Is divorce allowed?"),
            "is divorce put away his wife put away her husband allowed"
        );
    }

    #[test]
    fn a_moral_question_reaches_the_commandment_and_not_the_other_sense() {
        let read = query_words("Is abortion a sin?");
        let abortion = read.iter().find(|w| w.text == "abortion").unwrap();
        assert_eq!(abortion.kind, WordingKind::Moral);
        assert!(abortion.older.contains(&"thou shalt not kill"));
        assert!(
            !abortion.older.contains(&"abortion"),
            "the old texts' \"abortive\" is another sense"
        );
        let read = query_words("What are the seven deadly sins?");
        assert!(read.iter().any(|w| w.text == "seven deadly sins"));
        assert!(!read.iter().any(|w| w.text == "deadly sins"));
    }

    #[test]
    fn a_doctrines_catechism_wording_is_read_but_not_searched() {
        let read = query_words("What is the Real Presence?");
        let presence = read.iter().find(|w| w.text == "real presence").unwrap();
        assert_eq!(presence.kind, WordingKind::AnswerOnly);
        assert!(presence.older.contains(&"holy eucharist"));
        assert!(older_wordings("What is the Real Presence?").is_empty());
        assert_eq!(
            in_older_words("What is the Real Presence?"),
            "What is the Real Presence?"
        );
    }

    #[test]
    fn every_entry_is_lower_case_plain_words() {
        for (modern, older, _) in entries() {
            assert_eq!(plain_words(modern).join(" "), modern);
            assert!(!older.is_empty(), "{modern}");
            for wording in older {
                assert_eq!(plain_words(wording).join(" "), *wording, "{modern}");
            }
        }
    }
}
