//! Both calendar skills answer for every date from 1970 to 2200: a completed task with the
//! date asked for and at least one Mass or celebration, never a failure or a panic.

use chrono::{Datelike, NaiveDate, Utc};
use serde_json::{Map, Value};
use skills::readings::LiturgicalReadings;
use skills::saints::SaintsOfTheDay;
use skills::{LiturgySettings, Skill, SkillRequest};

fn request(date: NaiveDate) -> SkillRequest {
    let mut data = Map::new();
    data.insert("date".into(), Value::String(date.to_string()));
    SkillRequest {
        text: String::new(),
        data,
        history: Vec::new(),
        now: Utc::now(),
        accept_language: None,
    }
}

#[tokio::test]
async fn calendar_skills_answer_every_day_from_1970_to_2200() {
    let data_dir = tempfile::tempdir().unwrap();
    let settings = LiturgySettings::default();
    let readings = LiturgicalReadings::new(&settings, data_dir.path()).unwrap();
    let saints = SaintsOfTheDay::new(&settings, data_dir.path()).unwrap();
    let mut date = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let last = NaiveDate::from_ymd_opt(2200, 12, 31).unwrap();
    let mut days = 0;
    while date <= last {
        let out = readings
            .run(request(date))
            .await
            .unwrap_or_else(|e| panic!("readings for {date}: {e}"));
        assert_eq!(out.data["date"], date.to_string());
        let masses = out.data["masses"].as_array().expect("masses");
        assert!(!masses.is_empty(), "{date}: no Mass");
        let is_holy_saturday = out.data["celebration"]["id"] == "holy_saturday";
        if !is_holy_saturday {
            let has_gospel = masses.iter().any(|m| {
                m["readings"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r["kind"] == "gospel"))
            });
            assert!(has_gospel, "{date}: no gospel in {:?}", out.data);
        }
        let out = saints
            .run(request(date))
            .await
            .unwrap_or_else(|e| panic!("saints for {date}: {e}"));
        assert!(
            !out.data["celebrations"].as_array().unwrap().is_empty(),
            "{date}: no celebration"
        );
        days += 1;
        date = date.succ_opt().unwrap();
    }
    assert_eq!(days, 84_371);
    assert_eq!(date.year(), 2201);
}
