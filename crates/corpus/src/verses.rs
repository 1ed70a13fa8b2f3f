//! Famous verses as readers know them. The corpus's Bible is the Douay-Rheims, whose wording
//! often differs from the one people quote ("The Lord ruleth me" for "The Lord is my
//! shepherd"), so a query quoting a well-known modern wording also looks for the Douay-Rheims
//! words of the same verse.
//!
//! The modern wordings are those of public-domain translations: the King James Version (KJV)
//! and the World English Bible (WEB); each entry names its source and the verse (Douay-Rheims
//! numbering).

/// (modern wording, its source, the Douay-Rheims verse, a distinctive run of its words).
const WELL_KNOWN: &[(&str, &str, &str, &str)] = &[
    (
        "the lord is my shepherd",
        "KJV Ps 23:1",
        "Ps 22:1",
        "the lord ruleth me",
    ),
    (
        "let there be light",
        "KJV Gen 1:3",
        "Gen 1:3",
        "be light made",
    ),
    (
        "love is patient and is kind",
        "WEB 1 Cor 13:4",
        "1 Cor 13:4",
        "charity is patient is kind",
    ),
    (
        "charity suffereth long and is kind",
        "KJV 1 Cor 13:4",
        "1 Cor 13:4",
        "charity is patient is kind",
    ),
    (
        "the greatest of these is love",
        "WEB 1 Cor 13:13",
        "1 Cor 13:13",
        "the greatest of these is charity",
    ),
    (
        "be still and know that i am god",
        "KJV Ps 46:10",
        "Ps 45:11",
        "be still and see that i am god",
    ),
    (
        "the word became flesh",
        "WEB John 1:14",
        "John 1:14",
        "the word was made flesh",
    ),
    (
        "the word was made flesh",
        "KJV John 1:14",
        "John 1:14",
        "the word was made flesh",
    ),
    (
        "i am the way the truth and the life",
        "KJV John 14:6",
        "John 14:6",
        "i am the way and the truth and the life",
    ),
    (
        "do this in remembrance of me",
        "KJV Luke 22:19",
        "Luke 22:19",
        "do this for a commemoration of me",
    ),
    (
        "do this in memory of me",
        "WEB Luke 22:19",
        "Luke 22:19",
        "do this for a commemoration of me",
    ),
    (
        "thou art peter and upon this rock",
        "KJV Matt 16:18",
        "Matt 16:18",
        "thou art peter and upon this rock",
    ),
    (
        "you are peter and on this rock",
        "WEB Matt 16:18",
        "Matt 16:18",
        "thou art peter and upon this rock",
    ),
    (
        "my soul magnifies the lord",
        "WEB Luke 1:46",
        "Luke 1:46",
        "my soul doth magnify the lord",
    ),
    (
        "hail full of grace",
        "Luke 1:28",
        "Luke 1:28",
        "hail full of grace",
    ),
    (
        "highly favoured the lord is with thee",
        "KJV Luke 1:28",
        "Luke 1:28",
        "hail full of grace the lord is with thee",
    ),
    (
        "be it unto me according to thy word",
        "KJV Luke 1:38",
        "Luke 1:38",
        "be it done to me according to thy word",
    ),
    (
        "let it be done to me according to your word",
        "WEB Luke 1:38",
        "Luke 1:38",
        "be it done to me according to thy word",
    ),
    (
        "the truth shall make you free",
        "KJV John 8:32",
        "John 8:32",
        "the truth shall make you free",
    ),
    (
        "the truth will make you free",
        "WEB John 8:32",
        "John 8:32",
        "the truth shall make you free",
    ),
    (
        "i can do all things through christ",
        "KJV Phil 4:13",
        "Phil 4:13",
        "i can do all things in him who strengtheneth me",
    ),
    (
        "go ye therefore and teach all nations",
        "KJV Matt 28:19",
        "Matt 28:19",
        "going therefore teach ye all nations",
    ),
    (
        "go and make disciples of all nations",
        "WEB Matt 28:19",
        "Matt 28:19",
        "going therefore teach ye all nations",
    ),
    (
        "love thy neighbour as thyself",
        "KJV Matt 22:39",
        "Matt 22:39",
        "thou shalt love thy neighbour as thyself",
    ),
    (
        "love your neighbor as yourself",
        "WEB Matt 22:39",
        "Matt 22:39",
        "thou shalt love thy neighbour as thyself",
    ),
    (
        "father forgive them for they know not what they do",
        "KJV Luke 23:34",
        "Luke 23:34",
        "father forgive them for they know not what they do",
    ),
    (
        "it is finished",
        "KJV John 19:30",
        "John 19:30",
        "it is consummated",
    ),
    (
        "behold the lamb of god",
        "KJV John 1:29",
        "John 1:29",
        "behold the lamb of god",
    ),
    (
        "blessed are the poor in spirit",
        "KJV Matt 5:3",
        "Matt 5:3",
        "blessed are the poor in spirit",
    ),
    (
        "for god so loved the world",
        "KJV John 3:16",
        "John 3:16",
        "for god so loved the world",
    ),
    (
        "in the beginning was the word",
        "KJV John 1:1",
        "John 1:1",
        "in the beginning was the word",
    ),
    (
        "in the beginning god created the heaven and the earth",
        "KJV Gen 1:1",
        "Gen 1:1",
        "in the beginning god created heaven and earth",
    ),
    (
        "the wages of sin is death",
        "KJV Rom 6:23",
        "Rom 6:23",
        "the wages of sin is death",
    ),
    (
        "ask and it shall be given you",
        "KJV Matt 7:7",
        "Matt 7:7",
        "ask and it shall be given you",
    ),
    (
        "ask and it will be given you",
        "WEB Matt 7:7",
        "Matt 7:7",
        "ask and it shall be given you",
    ),
    (
        "here am i send me",
        "KJV Isa 6:8",
        "Isa 6:8",
        "lo here am i send me",
    ),
    (
        "the lord bless thee and keep thee",
        "KJV Num 6:24",
        "Num 6:24",
        "the lord bless thee and keep thee",
    ),
    (
        "thy word is a lamp unto my feet",
        "KJV Ps 119:105",
        "Ps 118:105",
        "thy word is a lamp to my feet",
    ),
    (
        "your word is a lamp to my feet",
        "WEB Ps 119:105",
        "Ps 118:105",
        "thy word is a lamp to my feet",
    ),
    (
        "our father which art in heaven",
        "KJV Matt 6:9",
        "Matt 6:9",
        "our father who art in heaven",
    ),
    (
        "our father who art in heaven",
        "Matt 6:9",
        "Matt 6:9",
        "our father who art in heaven",
    ),
    (
        "whatsoever ye have done unto one of the least of these",
        "KJV Matt 25:40",
        "Matt 25:40",
        "as long as you did it to one of these my least brethren",
    ),
    (
        "the least of these my brethren",
        "KJV Matt 25:40",
        "Matt 25:40",
        "as long as you did it to one of these my least brethren",
    ),
    (
        "love your enemies",
        "KJV Matt 5:44",
        "Matt 5:44",
        "love your enemies",
    ),
    (
        "i am the resurrection and the life",
        "KJV John 11:25",
        "John 11:25",
        "i am the resurrection and the life",
    ),
    (
        "i am the bread of life",
        "KJV John 6:35",
        "John 6:35",
        "i am the bread of life",
    ),
    (
        "come unto me all ye that labour",
        "KJV Matt 11:28",
        "Matt 11:28",
        "come to me all you that labor",
    ),
    (
        "come to me all you who labor",
        "WEB Matt 11:28",
        "Matt 11:28",
        "come to me all you that labor",
    ),
];

/// Lower-cased words of a text, punctuation dropped: how wordings are compared.
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn contains_run(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// The Douay-Rheims words of every well-known verse the query quotes: the query contains the
/// whole modern wording, or at least four of its words in a row.
/// (Public so that an answer can tell the verse a question quotes from verses sharing a word.)
pub fn douay_wordings(query: &str) -> Vec<&'static str> {
    const SHORTEST_RUN: usize = 4;
    let query_words = plain_words(query);
    let mut wordings: Vec<&'static str> = Vec::new();
    for (modern, _, _, douay) in WELL_KNOWN {
        let modern_words = plain_words(modern);
        let quoted = contains_run(&query_words, &modern_words)
            || (query_words.len() >= SHORTEST_RUN && contains_run(&modern_words, &query_words));
        if quoted && !wordings.contains(douay) {
            wordings.push(douay);
        }
    }
    wordings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_wordings_lead_to_the_douay_words() {
        assert_eq!(
            douay_wordings("The Lord is my shepherd"),
            ["the lord ruleth me"]
        );
        assert_eq!(douay_wordings("“Let there be light”"), ["be light made"]);
        assert_eq!(
            douay_wordings("love is patient and is"),
            ["charity is patient is kind"]
        );
        assert!(douay_wordings("What is grace?").is_empty());
        assert!(douay_wordings("the lord").is_empty());
    }
}
