//! The floors the load benchmark compares the server against: the least work an axum server on
//! the same runtime can do for the same request bodies.
//!
//! - `POST /json` parses the body with `serde_json`, copies the request's `id` and `messageId`
//!   into a task-shaped response (a task captured from the real server, so the size matches) and
//!   serialises it: the JSON floor.
//! - `POST /fixed` ignores the body and returns the captured response bytes: the HTTP floor.
//!
//! Usage: `bench-floor --bind 127.0.0.1:PORT --template response.json`; one line on stdout says
//! where it listens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

/// Why the floor server could not start.
#[derive(Debug, thiserror::Error)]
enum FloorError {
    /// The command line is not `--bind ADDR --template FILE`.
    #[error("usage: bench-floor --bind 127.0.0.1:PORT --template response.json ({0})")]
    Usage(String),
    /// The template could not be read.
    #[error("cannot read the template {path}: {source}")]
    ReadTemplate {
        /// The template path.
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// The template is not a JSON-RPC success response holding an object.
    #[error("the template is not a JSON-RPC response with a `result` object: {0}")]
    BadTemplate(String),
    /// The listener could not be bound or served.
    #[error("serve: {0}")]
    Serve(std::io::Error),
}

/// What every request shares: the captured response as a tree (for `/json`) and as bytes.
struct Template {
    tree: Value,
    bytes: Bytes,
}

struct Options {
    bind: SocketAddr,
    template: PathBuf,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, FloorError> {
    let mut bind = None;
    let mut template = None;
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| FloorError::Usage(format!("{flag} needs a value")))?;
        match flag.as_str() {
            "--bind" => {
                bind = Some(
                    value
                        .parse()
                        .map_err(|e| FloorError::Usage(format!("--bind {value}: {e}")))?,
                )
            }
            "--template" => template = Some(PathBuf::from(value)),
            other => return Err(FloorError::Usage(format!("unknown flag {other}"))),
        }
    }
    Ok(Options {
        bind: bind.ok_or_else(|| FloorError::Usage("--bind is required".into()))?,
        template: template.ok_or_else(|| FloorError::Usage("--template is required".into()))?,
    })
}

fn load_template(path: PathBuf) -> Result<Template, FloorError> {
    let raw = std::fs::read(&path).map_err(|source| FloorError::ReadTemplate {
        path: path.clone(),
        source,
    })?;
    let tree: Value =
        serde_json::from_slice(&raw).map_err(|e| FloorError::BadTemplate(e.to_string()))?;
    if !tree.get("result").is_some_and(Value::is_object) {
        return Err(FloorError::BadTemplate("no `result` object".into()));
    }
    Ok(Template {
        tree,
        bytes: Bytes::from(raw),
    })
}

fn json_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.into(),
    )
        .into_response()
}

/// The JSON floor: parse, build a task of the real size from the request, serialise.
async fn json_floor(State(template): State<Arc<Template>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(_) => return json_response(StatusCode::BAD_REQUEST, "{\"error\":\"not JSON\"}"),
    };
    let mut task = template.tree.clone();
    if let Some(id) = request.get("id") {
        task["id"] = id.clone();
    }
    if let Some(message_id) = request.pointer("/params/message/messageId")
        && let Some(first) = task.pointer_mut("/result/history/0/messageId")
    {
        *first = message_id.clone();
    }
    match serde_json::to_vec(&task) {
        Ok(bytes) => json_response(StatusCode::OK, bytes),
        Err(_) => json_response(StatusCode::INTERNAL_SERVER_ERROR, "{}"),
    }
}

/// The HTTP floor: the same response bytes without touching the body.
async fn fixed_floor(State(template): State<Arc<Template>>) -> Response {
    json_response(StatusCode::OK, template.bytes.clone())
}

async fn serve(options: Options, template: Template) -> Result<(), FloorError> {
    let app = Router::new()
        .route("/json", post(json_floor))
        .route("/fixed", post(fixed_floor))
        .with_state(Arc::new(template));
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .map_err(FloorError::Serve)?;
    let bound = listener.local_addr().map_err(FloorError::Serve)?;
    println!("bench-floor listening on http://{bound}");
    axum::serve(listener, app).await.map_err(FloorError::Serve)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let started = parse_options(std::env::args().skip(1)).and_then(|options| {
        let template = load_template(options.template.clone())?;
        Ok((options, template))
    });
    let result = match started {
        Ok((options, template)) => serve(options, template).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-floor: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn options_need_both_flags() {
        assert!(parse_options(args(&["--bind", "127.0.0.1:0"])).is_err());
        assert!(parse_options(args(&["--bind", "nowhere", "--template", "t.json"])).is_err());
        let options =
            parse_options(args(&["--bind", "127.0.0.1:9", "--template", "t.json"])).unwrap();
        assert_eq!(options.bind.port(), 9);
        assert_eq!(options.template, PathBuf::from("t.json"));
    }

    #[tokio::test]
    async fn json_floor_echoes_the_ids_into_a_task_of_the_template_size() {
        let dir = std::env::temp_dir().join(format!("bench-floor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        std::fs::write(
            &path,
            r#"{"jsonrpc":"2.0","id":"a","result":{"kind":"task","history":[{"messageId":"m-0"}]}}"#,
        )
        .unwrap();
        let template = Arc::new(load_template(path).unwrap());
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":"b","method":"message/send","params":{"message":{"messageId":"m-1"}}}"#,
        );
        let response = json_floor(State(Arc::clone(&template)), body).await;
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(reply["id"], "b");
        assert_eq!(reply["result"]["history"][0]["messageId"], "m-1");
        assert_eq!(bytes.len(), template.bytes.len());

        let bad = json_floor(State(template), Bytes::from_static(b"{")).await;
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
