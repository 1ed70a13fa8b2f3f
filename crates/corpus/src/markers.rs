//! Footnote markers in source texts (`[1]`, `[12, 13]`, `¹`): they point at notes the corpus
//! does not carry, and in a quotation they would pass for the answer's own `[n]` citations.

/// Superscript digits used as note calls.
const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// The text without its footnote markers: `[` digits (with `,`, `-`, `–` or spaces between
/// numbers) `]`, and superscript digits. The space before a removed marker goes with it, so
/// "faith, \[1\] and" becomes "faith, and" and "Word.\[2\]" becomes "Word.".
pub fn strip_footnote_markers(text: &str) -> String {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(['[', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹', '⁰'])
    {
        let (before, from) = rest.split_at(open);
        result.push_str(before);
        let marker_len = marker_length(from);
        if marker_len == 0 {
            let c = from.chars().next().map_or(1, char::len_utf8);
            result.push_str(&from[..c]);
            rest = &from[c..];
            continue;
        }
        let after = &from[marker_len..];
        if result.ends_with(' ') && (after.starts_with(' ') || after.is_empty()) {
            result.pop();
        }
        rest = after;
    }
    result.push_str(rest);
    result
}

/// The byte length of the footnote marker `text` starts with, or 0 when it starts with none.
fn marker_length(text: &str) -> usize {
    if text.starts_with(SUPERSCRIPTS) {
        return text
            .char_indices()
            .find(|(_, c)| !SUPERSCRIPTS.contains(c))
            .map_or(text.len(), |(i, _)| i);
    }
    let Some(inner) = text.strip_prefix('[') else {
        return 0;
    };
    let Some(close) = inner.find(']') else {
        return 0;
    };
    let content = &inner[..close];
    let is_marker = content.starts_with(|c: char| c.is_ascii_digit())
        && content.len() <= 12
        && content
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '-' | '–' | ' '));
    if is_marker { close + 2 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_go_and_the_text_stays() {
        assert_eq!(
            strip_footnote_markers("Thy charity, [1] and towards all the saints. [12]"),
            "Thy charity, and towards all the saints."
        );
        assert_eq!(strip_footnote_markers("the Word.[2] He"), "the Word. He");
        assert_eq!(strip_footnote_markers("grace¹² abounds"), "grace abounds");
        assert_eq!(strip_footnote_markers("notes [3, 4] here"), "notes here");
        assert_eq!(
            strip_footnote_markers("kept: [sic] and [a] and [ and [1x]"),
            "kept: [sic] and [a] and [ and [1x]"
        );
    }
}
