//! Each skill served as an agent of its own beside the whole agent: its own card at its own
//! base URL (`{base}/.well-known/agent-card.json` works), its own JSON-RPC endpoint (both
//! wires) and HTTP+JSON binding where a message without `skillId` goes to that skill, over the
//! same owner, limits, tasks and store; the main card says where each one is.

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{TestApp, call, reply, spawn_app, uuid};

/// A `message/send` of one text part with no `metadata` at all, as frameworks send it.
fn plain_send(text: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": {
            "kind": "message",
            "messageId": uuid(),
            "role": "user",
            "parts": [{"kind": "text", "text": text}]
        }}
    })
}

async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> crate::helpers::Reply {
    app.post_raw_to(path, token, Some("application/json"), body.to_string())
        .await
}

#[tokio::test]
async fn every_skill_has_a_card_of_its_own_that_the_main_card_points_to() {
    let app = spawn_app(|_| {}).await;
    let main = app.get("/.well-known/agent-card.json").await;
    let skills = main.body["skills"].as_array().unwrap().clone();
    assert!(!skills.is_empty());
    let listed = &main.body["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"].as_str().unwrap().contains("skill-agents"))
        .expect("the main card lists the skills' agents")["params"]["agents"];
    for skill in &skills {
        let id = skill["id"].as_str().unwrap();
        let base = format!("{}/agents/{id}", app.base);
        assert!(
            skill["description"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{base}/")),
            "the skill entry says where its agent is: {skill}"
        );
        assert_eq!(listed[id], format!("{base}/"), "{listed}");
        for card_path in [
            format!("/agents/{id}/.well-known/agent-card.json"),
            format!("/agents/{id}/.well-known/agent.json"),
            format!("/agents/{id}"),
        ] {
            let card = app.get(&card_path).await;
            assert_eq!(card.status, 200, "{card_path}");
            let own = &card.body["skills"];
            assert_eq!(own.as_array().unwrap().len(), 1, "{card_path}: {own}");
            assert_eq!(own[0]["id"], id);
            assert_eq!(own[0]["examples"], skill["examples"]);
            assert_eq!(card.body["url"], base.as_str());
            assert_eq!(card.body["description"], own[0]["description"]);
            assert!(
                card.body["name"]
                    .as_str()
                    .unwrap()
                    .contains(skill["name"].as_str().unwrap()),
                "{}",
                card.body["name"]
            );
            assert_eq!(card.body["securitySchemes"], main.body["securitySchemes"]);
        }
        let strict = app
            .client
            .get(format!("{base}/.well-known/agent-card.json"))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        assert_eq!(strict["supportedInterfaces"][0]["url"], base.as_str());
        assert!(strict.get("url").is_none(), "the strict 1.0 form");
    }
    assert_eq!(
        app.get("/agents/no_such_skill/.well-known/agent-card.json")
            .await
            .status,
        404
    );
}

/// The agent URL the main card gives for each skill (its entry's description and the extension)
/// finds that skill's card however a client joins the card path to it: the A2A JavaScript SDK
/// (and Google ADK for JavaScript through it) resolves the relative `.well-known/agent-card.json`
/// against the URL, which replaces the URL's last segment unless it ends with a slash; the
/// Python SDK strips any trailing slash and appends `/.well-known/agent-card.json`.
#[tokio::test]
async fn the_agent_urls_of_the_main_card_find_the_skills_card_however_the_path_is_joined() {
    let app = spawn_app(|_| {}).await;
    let main = app.get("/.well-known/agent-card.json").await;
    let listed = main.body["capabilities"]["extensions"][0]["params"]["agents"]
        .as_object()
        .expect("the main card lists the skills' agents")
        .clone();
    assert!(!listed.is_empty());
    for skill in main.body["skills"].as_array().unwrap() {
        let id = skill["id"].as_str().unwrap();
        let agent = listed[id].as_str().unwrap();
        assert!(
            skill["description"].as_str().unwrap().ends_with(agent),
            "the skill entry gives the same URL: {skill}"
        );
        let resolved = reqwest::Url::parse(agent)
            .unwrap()
            .join(".well-known/agent-card.json")
            .unwrap()
            .to_string();
        let appended = format!(
            "{}/.well-known/agent-card.json",
            agent.trim_end_matches('/')
        );
        for url in [resolved, appended] {
            let answer = app.client.get(&url).send().await.unwrap();
            assert_eq!(answer.status(), 200, "{url}");
            let card: Value = answer.json().await.unwrap();
            assert_eq!(card["skills"][0]["id"], id, "{url}");
        }
    }
}

#[tokio::test]
async fn a_message_without_skill_id_goes_to_the_agents_skill_and_its_task_is_shared() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("per-skill", Plan::Pro);
    let answered = post(
        &app,
        "/agents/liturgical_readings",
        Some(&token),
        &plain_send("2026-12-08"),
    )
    .await;
    assert_eq!(answered.status, 200);
    let task = answered.result().clone();
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(task["metadata"]["skillId"], "liturgical_readings");
    assert_eq!(task["artifacts"][0]["name"], "liturgical_readings");

    let id = task["id"].as_str().unwrap();
    let through_main = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": id})))
        .await;
    assert_eq!(
        through_main.result()["id"],
        id,
        "made through one, read through the other"
    );
    let through_other = post(
        &app,
        "/agents/saints_of_the_day/",
        Some(&token),
        &call("tasks/get", json!({"id": id})),
    )
    .await;
    assert_eq!(through_other.result()["id"], id);

    let on_main = app.rpc(Some(&token), &plain_send("2026-12-08")).await;
    assert_eq!(on_main.result()["metadata"]["skillId"], "catholic_qa");
    let other_user = app.token("someone-else", Plan::Pro);
    let hidden = post(
        &app,
        "/agents/liturgical_readings",
        Some(&other_user),
        &call("tasks/get", json!({"id": id})),
    )
    .await;
    assert_eq!(hidden.code(), -32001, "another owner's task is not found");
}

#[tokio::test]
async fn a_skills_agent_asks_for_the_same_token_and_refuses_an_unknown_skill() {
    let app = spawn_app(|_| {}).await;
    let refused = post(
        &app,
        "/agents/saints_of_the_day",
        None,
        &plain_send("today"),
    )
    .await;
    assert_eq!(refused.status, 401);
    assert!(refused.header("www-authenticate").is_some());
    let token = app.token("per-skill", Plan::Pro);
    let unknown = post(
        &app,
        "/agents/no_such_skill",
        Some(&token),
        &plain_send("x"),
    )
    .await;
    assert_eq!(unknown.status, 404);
}

#[tokio::test]
async fn a_skill_path_that_is_not_utf8_or_is_huge_is_a_json_404() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("odd-paths", Plan::Pro);
    let huge = format!("/agents/{}", "a".repeat(4_000));
    for path in ["/agents/%FF", "/agents/%C3%28", huge.as_str()] {
        let sent = post(&app, path, Some(&token), &plain_send("hi")).await;
        let card = app
            .get(&format!("{path}/.well-known/agent-card.json"))
            .await;
        for (what, reply) in [("POST", sent), ("GET card", card)] {
            assert_eq!(reply.status, 404, "{what} {path}: {}", reply.body);
            let error = reply.body["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("/agents/test_echo") && error.len() < 1_000,
                "{what} {path}: a JSON error naming the skills' agents: {}",
                reply.body
            );
        }
    }
}

/// A skill's agent on every binding: 1.0 JSON-RPC at its endpoint and HTTP+JSON below it, a
/// message without `skillId` going to its skill, the task shared with the whole agent.
#[tokio::test]
async fn a_skills_agent_serves_the_1_0_wire_and_the_http_json_binding() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("per-skill-bindings", Plan::Pro);
    let message =
        || json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "2026-12-08"}]});
    let v1 = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
        "params": {"message": message()}});
    let answered = reply(
        app.client
            .post(format!("{}/agents/liturgical_readings", app.base))
            .bearer_auth(&token)
            .header("A2A-Version", "1.0")
            .json(&v1),
    )
    .await;
    let task = &answered.result()["task"];
    assert_eq!(task["metadata"]["skillId"], "liturgical_readings", "{task}");

    let rest = |path: &str| format!("{}/agents/saints_of_the_day/rest{path}", app.base);
    let sent = reply(
        app.client
            .post(rest("/message:send"))
            .bearer_auth(&token)
            .header("content-type", "application/a2a+json")
            .body(json!({"message": message()}).to_string()),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let task = &sent.body["task"];
    assert_eq!(task["metadata"]["skillId"], "saints_of_the_day", "{task}");
    let id = task["id"].as_str().unwrap();
    let through_main = reply(
        app.client
            .get(format!("{}/api/v1/a2a/rest/tasks/{id}", app.base))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(
        through_main.body["id"], id,
        "made through one, read through the other"
    );

    let card = reply(
        app.client
            .get(rest("/extendedAgentCard"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(card.status, 200, "{}", card.body);
    let skills = card.body["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0]["id"], "saints_of_the_day");

    let unknown = reply(
        app.client
            .get(format!("{}/agents/no_such_skill/rest/tasks", app.base))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(unknown.status, 404);
}
