//! The calendar skills' costs: computing a whole liturgical year, and answering one
//! `liturgical_readings` and one `saints_of_the_day` request end to end through the skill
//! (date resolution, calendar, lectionary, rendering). `cargo bench -p skills`.

use std::hint::black_box;

use chrono::{NaiveDate, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use liturgy::{Calendar, CalendarOptions};
use serde_json::{Map, Value};
use skills::readings::LiturgicalReadings;
use skills::saints::SaintsOfTheDay;
use skills::{LiturgySettings, Skill, SkillRequest};

fn request(date: &str) -> SkillRequest {
    let mut data = Map::new();
    data.insert("date".into(), Value::String(date.into()));
    SkillRequest {
        text: String::new(),
        data,
        history: Vec::new(),
        now: Utc::now(),
        accept_language: None,
    }
}

fn calendar(c: &mut Criterion) {
    c.bench_function("compute a whole year (fresh calendar)", |b| {
        b.iter(|| {
            let calendar = Calendar::new(CalendarOptions::default());
            black_box(calendar.year(black_box(2027)).expect("a year"))
        })
    });
    let calendar = Calendar::new(CalendarOptions::default());
    let date = NaiveDate::from_ymd_opt(2026, 12, 8).expect("a date");
    c.bench_function("one day from a cached year", |b| {
        b.iter(|| black_box(calendar.day(black_box(date)).expect("a day")))
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let data_dir = tempfile::tempdir().expect("a temp dir");
    let settings = LiturgySettings::default();
    let readings = LiturgicalReadings::new(&settings, data_dir.path()).expect("the skill");
    let saints = SaintsOfTheDay::new(&settings, data_dir.path()).expect("the skill");
    c.bench_function("liturgical_readings request (skill, end to end)", |b| {
        b.iter(|| {
            runtime
                .block_on(readings.run(request("2026-12-08")))
                .expect("readings")
        })
    });
    c.bench_function("saints_of_the_day request (skill, end to end)", |b| {
        b.iter(|| {
            runtime
                .block_on(saints.run(request("2026-12-08")))
                .expect("saints")
        })
    });
}

criterion_group!(benches, calendar);
criterion_main!(benches);
