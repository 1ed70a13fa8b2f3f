//! The citation parser reads lectionary data and user-supplied references: it must never panic,
//! and a parsed citation must parse again to itself from its own text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use liturgy::citation::Citation;

fuzz_target!(|text: &str| {
    if let Ok(citation) = Citation::parse(text) {
        let again = Citation::parse(citation.text()).expect("a citation's own text parses");
        assert_eq!(citation, again);
        let _ = citation.douay_rheims_spans();
    }
});
