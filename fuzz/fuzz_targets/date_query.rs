//! The text-date parser reads whatever a user typed: it must answer a date or an error, never
//! panic, for any text and any "today" the calendar covers.
#![no_main]

use std::sync::LazyLock;

use chrono::{Days, NaiveDate};
use libfuzzer_sys::fuzz_target;
use liturgy::Calendar;
use liturgy::dates::parse_date_query;

static CALENDAR: LazyLock<Calendar> = LazyLock::new(Calendar::default);

/// Days from 1970-01-01 to 2200-12-31: the range "today" is drawn from.
const TODAY_SPAN_DAYS: u64 = 84_371;

fuzz_target!(|data: &[u8]| {
    let Some((head, text)) = data.split_first_chunk::<4>() else {
        return;
    };
    let offset = u64::from(u32::from_le_bytes(*head)) % TODAY_SPAN_DAYS;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date");
    let today = epoch + Days::new(offset);
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let _ = parse_date_query(text, today, &CALENDAR);
});
