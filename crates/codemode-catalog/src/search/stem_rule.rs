//! The stemming rule, shared by the engine (`search::stem`) and the build script that pre-stems
//! the WordNet table, so both stem every word alike.

use rust_stemmers::Stemmer;

/// The stem of one lower-case word with `stemmer` (Snowball English): words with digits and
/// words of at most two bytes are kept as they are.
pub(crate) fn stem_with(stemmer: &Stemmer, word: &str) -> String {
    if word.len() <= 2 || word.bytes().any(|b| b.is_ascii_digit()) {
        return word.to_owned();
    }
    stemmer.stem(word).into_owned()
}
