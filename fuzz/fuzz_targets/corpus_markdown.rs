//! The Markdown importer reads user files with front matter and headings: it must return a
//! document or an issue, never panic, and whatever it returns must pass validation.
#![no_main]

use std::path::Path;

use corpus::import::parse_markdown;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(document) = parse_markdown(Path::new("fuzz.md"), text) {
        document
            .validate()
            .expect("an imported Markdown document is valid");
    }
});
