//! Per-core serving threads (`server.threading = "per_core"`): connections served on threads of
//! their own, each with a single-threaded runtime, and a stop that still answers every request
//! already sent and then ends those threads.

use std::time::Duration;

use futures::future::join_all;
use magisterium_a2a::app::Application;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Threading;
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use crate::helpers::{http_client, raw_send, registry, send_body, test_settings, unanswered, uuid};

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

#[tokio::test]
async fn per_core_threads_serve_concurrent_connections_and_drain_on_stop() {
    let data = TempDir::new().expect("temp dir");
    let mut settings = test_settings();
    settings.data.dir = data.path().to_path_buf();
    settings.server.threading = Threading::PerCore;
    settings.server.serving_threads = 2;
    let app = Application::build_with_skills(settings.clone(), registry(&settings))
        .await
        .expect("the server starts");
    let address = app.local_addr().to_string();
    let base = format!("http://{address}");
    let token = magisterium_a2a::auth::mint_hs256(
        &settings.auth,
        crate::helpers::SECRET,
        "per-core",
        Plan::Enterprise,
        Duration::from_secs(600),
    )
    .expect("token");
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(app.run_until(async {
        let _ = stopped.await;
    }));

    // 16 clients of their own (16 connections), 3 calls each on its keep-alive connection,
    // all at once.
    let calls = (0..16).map(|_| {
        let client = http_client();
        let (base, token) = (base.clone(), token.clone());
        async move {
            let mut answered = 0;
            for _ in 0..3 {
                let reply = client
                    .post(format!("{base}/api/v1/a2a"))
                    .bearer_auth(&token)
                    .json(&send_body("test_echo", "hello", &uuid()))
                    .send()
                    .await
                    .expect("request");
                assert_eq!(reply.status(), 200);
                let body: serde_json::Value = reply.json().await.expect("JSON");
                assert_eq!(body["result"]["status"]["state"], "completed", "{body}");
                answered += 1;
            }
            answered
        }
    });
    let answered: usize = join_all(calls).await.into_iter().sum();
    assert_eq!(answered, 48);
    let names = thread_names();
    for name in ["a2a-serve-0", "a2a-serve-1"] {
        assert!(
            names.iter().any(|n| n == name),
            "no serving thread {name} among {names:?}"
        );
    }

    // Requests sent before the stop are all answered, then the server ends.
    let mut streams = Vec::new();
    for _ in 0..16 {
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(raw_send(&address, &token).as_bytes())
            .await
            .unwrap();
        streams.push(stream);
    }
    stop.send(()).expect("the server is running");
    let unanswered = unanswered(streams).await;
    assert!(
        unanswered.is_empty(),
        "{} of 16 requests sent before the stop were not answered: {unanswered:#?}",
        unanswered.len()
    );
    let ended = tokio::time::timeout(Duration::from_secs(20), served)
        .await
        .expect("the server ends once its connections are done, its serving threads stopped")
        .expect("the serving task did not panic");
    assert!(ended.is_ok(), "{ended:?}");
    assert!(
        tokio::net::TcpStream::connect(&address).await.is_err(),
        "the listener is closed after the stop"
    );
}
