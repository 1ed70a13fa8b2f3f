//! One JSON Lines record as the corpus importer reads it: parse, then validate. Neither step may
//! panic, and a valid document must survive the round trip the store makes.
#![no_main]

use corpus::Document;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for line in text.lines() {
        let Ok(document) = serde_json::from_str::<Document>(line) else {
            continue;
        };
        if document.validate().is_ok() {
            let written = serde_json::to_string(&document).expect("a document serialises");
            let again: Document = serde_json::from_str(&written).expect("it parses again");
            assert_eq!(document, again, "a document changes in a round trip");
        }
    }
});
