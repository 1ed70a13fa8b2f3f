//! Text analysis per language: how words are cut, folded and stemmed for the index and for queries.

use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// Languages with their own analyser.
pub(crate) const ANALYSED_LANGUAGES: [&str; 7] = ["en", "fr", "de", "it", "es", "pt", "la"];

/// The analyser key shared by every other language: folding without stemming.
pub(crate) const GENERIC_KEY: &str = "xx";

/// The analyser key used for a document language.
pub(crate) fn analyser_key(language: &str) -> &'static str {
    ANALYSED_LANGUAGES
        .iter()
        .copied()
        .find(|key| *key == language)
        .unwrap_or(GENERIC_KEY)
}

/// The tokenizer name registered in the index for an analyser key.
pub(crate) fn tokenizer_name(key: &str) -> String {
    format!("corpus_{key}")
}

/// The name of the folding-only analyser used for authors and for title suggestions.
pub(crate) const PLAIN_TOKENIZER: &str = "corpus_plain";

fn stemmer_language(key: &str) -> Option<Language> {
    match key {
        "en" => Some(Language::English),
        "fr" => Some(Language::French),
        "de" => Some(Language::German),
        "it" => Some(Language::Italian),
        "es" => Some(Language::Spanish),
        "pt" => Some(Language::Portuguese),
        _ => None,
    }
}

/// The analyser that indexes text of the given key; queries use it too (for phrases).
pub(crate) fn index_analyser(key: &str) -> TextAnalyzer {
    let base = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter);
    match (key, stemmer_language(key)) {
        (_, Some(language)) => base.filter(Stemmer::new(language)).build(),
        ("la", None) => base.filter(LatinStemmer).build(),
        _ => base.build(),
    }
}

/// The analyser for the loose words of a query: like the index one, but common function words
/// ("what", "is", "the") are dropped so that questions rank by their meaningful words.
pub(crate) fn query_analyser(key: &str) -> TextAnalyzer {
    let base = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser);
    match (key, stemmer_language(key)) {
        ("en", Some(language)) => base
            .filter(StopWordFilter::remove(
                ENGLISH_STOP_WORDS.iter().map(|w| w.to_string()),
            ))
            .filter(AsciiFoldingFilter)
            .filter(Stemmer::new(language))
            .build(),
        (_, Some(language)) => match StopWordFilter::new(language) {
            Some(stop_words) => base
                .filter(stop_words)
                .filter(AsciiFoldingFilter)
                .filter(Stemmer::new(language))
                .build(),
            None => base
                .filter(AsciiFoldingFilter)
                .filter(Stemmer::new(language))
                .build(),
        },
        ("la", None) => base
            .filter(StopWordFilter::remove(
                LATIN_STOP_WORDS.iter().map(|w| w.to_string()),
            ))
            .filter(AsciiFoldingFilter)
            .filter(LatinStemmer)
            .build(),
        _ => base.filter(AsciiFoldingFilter).build(),
    }
}

/// Lower-case and ASCII folding only: for author names and for comparing titles.
pub(crate) fn plain_analyser() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The terms an analyser makes of a text, with their positions (phrase queries need positions).
pub(crate) fn analyse(analyser: &mut TextAnalyzer, text: &str) -> Vec<(usize, String)> {
    let mut terms = Vec::new();
    let mut stream = analyser.token_stream(text);
    while stream.advance() {
        let token = stream.token();
        terms.push((token.position, token.text.clone()));
    }
    terms
}

/// Lucene's English list plus the words of a question ("what does the Church teach about…").
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "me", "my",
    "no", "not", "of", "on", "or", "our", "should", "such", "tell", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "us", "was", "we", "what", "when", "where", "which",
    "who", "whom", "why", "will", "with", "would", "you",
];

const LATIN_STOP_WORDS: &[&str] = &[
    "a", "ab", "ac", "ad", "at", "atque", "aut", "autem", "cum", "de", "e", "enim", "est", "et",
    "ex", "in", "nam", "non", "per", "quae", "qui", "quod", "sed", "sunt", "ut", "vel",
];

/// Words ending in `-que` that are not a word plus the enclitic `-que` ("and").
const LATIN_QUE_WORDS: &[&str] = &[
    "atque",
    "quoque",
    "neque",
    "itaque",
    "absque",
    "apsque",
    "abusque",
    "adaeque",
    "adusque",
    "denique",
    "deque",
    "susque",
    "oblique",
    "peraeque",
    "plenisque",
    "quandoque",
    "quisque",
    "quaeque",
    "cuiusque",
    "cuiquam",
    "quemque",
    "quamque",
    "quaque",
    "quique",
    "quorumque",
    "quarumque",
    "quibusque",
    "quosque",
    "quasque",
    "quotusquisque",
    "quousque",
    "ubique",
    "undique",
    "usque",
    "uterque",
    "utique",
    "utroque",
    "utribique",
    "torque",
    "coque",
];

/// Noun and adjective endings, longest first; only one is removed.
const LATIN_ENDINGS: &[&str] = &[
    "ibus", "arum", "orum", "ius", "ae", "am", "as", "em", "es", "is", "os", "um", "us", "a", "e",
    "i", "o", "u",
];

/// A light Latin stemmer (after Schinke et al., 1996, noun rules only): `j`→`i`, `v`→`u`, strips the
/// enclitic `-que`, then one inflectional ending, keeping a stem of at least two letters. It makes
/// `caelum`, `caeli` and `caelorum` meet; it does not try to conflate verb forms.
pub(crate) fn stem_latin(word: &str) -> String {
    let mut word: String = word
        .chars()
        .map(|c| match c {
            'j' => 'i',
            'v' => 'u',
            other => other,
        })
        .collect();
    if word.ends_with("que") {
        if LATIN_QUE_WORDS.contains(&word.as_str()) {
            return word;
        }
        word.truncate(word.len() - 3);
    }
    for ending in LATIN_ENDINGS {
        if let Some(stem) = word.strip_suffix(ending)
            && stem.chars().count() >= 2
        {
            return stem.to_string();
        }
    }
    word
}

/// Token filter applying [`stem_latin`]; tokens must already be lower-cased and folded.
#[derive(Clone)]
pub(crate) struct LatinStemmer;

impl TokenFilter for LatinStemmer {
    type Tokenizer<T: Tokenizer> = LatinStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> LatinStemmerFilter<T> {
        LatinStemmerFilter { inner: tokenizer }
    }
}

/// The tokenizer wrapper produced by [`LatinStemmer`].
#[derive(Clone)]
pub(crate) struct LatinStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for LatinStemmerFilter<T> {
    type TokenStream<'a> = LatinStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        LatinStemmerStream {
            tail: self.inner.token_stream(text),
        }
    }
}

/// The token stream produced by [`LatinStemmer`].
pub(crate) struct LatinStemmerStream<T> {
    tail: T,
}

impl<T: TokenStream> TokenStream for LatinStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        token.text = stem_latin(&token.text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(key: &str, text: &str) -> Vec<String> {
        analyse(&mut index_analyser(key), text)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    #[test]
    fn english_stems_and_folds() {
        assert_eq!(terms("en", "Prayers"), terms("en", "prayer"));
        assert_eq!(terms("en", "Café"), vec!["cafe".to_string()]);
    }

    #[test]
    fn latin_meets_across_endings_and_ligatures() {
        assert_eq!(terms("la", "cælum"), terms("la", "caelum"));
        assert_eq!(terms("la", "caeli"), terms("la", "caelorum"));
        assert_eq!(stem_latin("populusque"), "popul");
        assert_eq!(stem_latin("atque"), "atque");
        assert_eq!(stem_latin("iustitia"), stem_latin("justitiae"));
    }

    #[test]
    fn query_analyser_drops_function_words() {
        let words: Vec<String> = analyse(&mut query_analyser("en"), "What is grace?")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(words, vec!["grace".to_string()]);
        assert_eq!(analyser_key("nl"), "xx");
        assert_eq!(analyser_key("fr"), "fr");
    }
}
