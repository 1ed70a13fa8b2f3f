//! RFC 8785 JSON Canonicalization Scheme (JCS): the one byte form of a JSON value that a card's
//! signature covers, so a verifier that parses the card and canonicalises it again gets the
//! bytes that were signed, whatever order or spacing the card was sent in.
//!
//! Members are ordered by the UTF-16 code units of their names, with no whitespace; strings
//! are escaped as ECMAScript's `JSON.stringify` escapes them (which is what `serde_json` writes:
//! `\"`, `\\`, the short forms `\b \f \n \r \t`, other control characters as lowercase
//! `\u00xx`, everything else as is); numbers as ECMAScript writes them. Cards hold integers only;
//! a fraction is written as ECMAScript would for magnitudes from 1e-6 up to 1e21, and any other
//! non-integer is refused rather than written in a form a verifier might not reproduce.

use std::cmp::Ordering;

use serde::ser::Error as _;
use serde_json::{Number, Value};

/// The JCS bytes of `value`, or an error for a number outside what is written exactly here.
pub fn canonical(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    write(value, &mut out)?;
    Ok(out)
}

fn write(value: &Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => {
            out.extend_from_slice(serde_json::to_string(value)?.as_bytes());
        }
        Value::Number(number) => out.extend_from_slice(number_text(number)?.as_bytes()),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|(a, _), (b, _)| utf16_order(a, b));
            out.push(b'{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(serde_json::to_string(name)?.as_bytes());
                out.push(b':');
                write(member, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// RFC 8785 §3.2.3: names compare as arrays of UTF-16 code units (which differs from the
/// order of Rust's `str` for characters above U+FFFF against U+E000..U+FFFF).
fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// ECMAScript's `Number.prototype.toString` for the numbers a card may hold.
fn number_text(number: &Number) -> Result<String, serde_json::Error> {
    if let Some(integer) = number.as_i64() {
        return Ok(integer.to_string());
    }
    if let Some(integer) = number.as_u64() {
        return Ok(integer.to_string());
    }
    let float = number
        .as_f64()
        .ok_or_else(|| serde_json::Error::custom("a number that is not a double"))?;
    let magnitude = float.abs();
    if float == 0.0 {
        return Ok("0".into());
    }
    if float.fract() == 0.0 && magnitude < 1e21 {
        return Ok(format!("{float:.0}"));
    }
    if (1e-6..1e21).contains(&magnitude) {
        // Rust's `Display` of a double is its shortest round-trip digits in positional form,
        // which is ECMAScript's form in this range.
        return Ok(format!("{float}"));
    }
    Err(serde_json::Error::custom(format!(
        "the number {float} is outside what the card canonicalisation writes"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: Value) -> String {
        String::from_utf8(canonical(&value).unwrap()).unwrap()
    }

    #[test]
    fn members_are_sorted_and_nothing_is_spaced() {
        assert_eq!(
            text(json!({"b": [1, {"z": null, "a": true}], "a": "x", "": 0})),
            r#"{"":0,"a":"x","b":[1,{"a":true,"z":null}]}"#
        );
    }

    #[test]
    fn names_sort_by_utf16_code_units() {
        // U+1F600 (a surrogate pair, 0xD83D…) sorts before U+FB01 (0xFB01) in UTF-16, after it
        // in UTF-8 and in code points.
        assert_eq!(
            text(json!({"\u{fb01}": 1, "\u{1f600}": 2})),
            "{\"\u{1f600}\":2,\"\u{fb01}\":1}"
        );
    }

    #[test]
    fn strings_are_escaped_as_ecmascript_does() {
        assert_eq!(
            text(json!("a\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é€")),
            "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}/é€\""
        );
    }

    #[test]
    fn numbers_are_written_as_ecmascript_does_or_refused() {
        assert_eq!(
            text(json!([0, -1, u64::MAX, 1.0, -0.0, 1.5, 0.000001, 1e20])),
            "[0,-1,18446744073709551615,1,0,1.5,0.000001,100000000000000000000]"
        );
        assert!(canonical(&json!(1e-7)).is_err());
        assert!(canonical(&json!(1.5e21)).is_err());
    }

    /// RFC 8785 §3.2.2's example, its numbers left out (they are outside what cards hold).
    #[test]
    fn the_rfc_example_canonicalises_as_published() {
        let input: Value = serde_json::from_str(
            r#"{ "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false] }"#,
        )
        .unwrap();
        assert_eq!(
            text(input),
            "{\"literals\":[null,true,false],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
    }
}
