//! Spawns the real application on a random loopback port, a real `redis-server` on a free port
//! in a temp dir, and a real JWKS server; talks HTTP to them.

use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use magisterium_a2a::app::{Application, skill_registry};
use magisterium_a2a::auth::{Plan, mint_hs256};
use magisterium_a2a::config::{Settings, StoreBackend};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use skills::{Bucket, Skill, SkillError, SkillInfo, SkillOutput, SkillRegistry, SkillRequest};
use tempfile::TempDir;
use tokio::sync::oneshot;

/// The HS256 secret every test app uses.
pub const SECRET: &str = "test-secret-0123456789abcdef0123456789";

/// A running server.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub settings: Settings,
    shutdown: Option<oneshot::Sender<()>>,
    _data: TempDir,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A response, split for assertions.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// `error.code`, or 0 on success.
    pub fn code(&self) -> i64 {
        self.body["error"]["code"].as_i64().unwrap_or(0)
    }

    /// The result object.
    pub fn result(&self) -> &Value {
        assert!(
            self.body.get("error").is_none(),
            "unexpected error: {}",
            self.body
        );
        &self.body["result"]
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The calls left, the `r=` of the `RateLimit` header.
    pub fn remaining(&self) -> u64 {
        let header = self.header("ratelimit").expect("a RateLimit header");
        header
            .split(';')
            .find_map(|part| part.strip_prefix("r="))
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no r= in {header}"))
    }
}

/// Settings for a test server: loopback port 0, fixed secret, memory store; served on the
/// threading `A2A__SERVER__THREADING` names (`per_core` or `shared`), so the suite runs under
/// either.
pub fn test_settings() -> Settings {
    let mut settings = Settings {
        profile: "test".into(),
        ..Settings::default()
    };
    settings.server.bind = "127.0.0.1:0".into();
    settings.auth.hs256_secret = Some(SECRET.into());
    if let Ok(threading) = std::env::var("A2A__SERVER__THREADING") {
        settings.server.threading = serde_json::from_value(Value::String(threading))
            .expect("A2A__SERVER__THREADING is per_core or shared");
    }
    settings
}

/// Skills used only by the tests, beside the five real ones: they make the success, panic and
/// slow paths reachable without depending on any data.
pub struct TestSkill {
    info: SkillInfo,
}

pub const ECHO: SkillInfo = SkillInfo {
    id: "test_echo",
    name: "Echo",
    description: "Echoes the text, data and history it was given.",
    tags: &["test"],
    examples: &["hello"],
    bucket: Bucket::Default,
};
pub const EXPENSIVE_ECHO: SkillInfo = SkillInfo {
    id: "test_expensive_echo",
    bucket: Bucket::Expensive,
    ..ECHO
};
pub const PANIC: SkillInfo = SkillInfo {
    id: "test_panic",
    bucket: Bucket::Expensive,
    ..ECHO
};
pub const SLOW: SkillInfo = SkillInfo {
    id: "test_slow",
    ..ECHO
};
pub const FAIL: SkillInfo = SkillInfo {
    id: "test_fail",
    ..ECHO
};

#[async_trait]
impl Skill for TestSkill {
    fn info(&self) -> &SkillInfo {
        &self.info
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        match self.info.id {
            "test_panic" => panic!("test skill panics on purpose"),
            "test_slow" => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Err(SkillError::Failed("too late".into()))
            }
            "test_fail" => Err(SkillError::Failed(format!("cannot do `{}`", request.text))),
            _ => {
                let mut data = Map::new();
                data.insert("text".into(), json!(request.text));
                data.insert("data".into(), Value::Object(request.data.clone()));
                data.insert(
                    "history".into(),
                    json!(
                        request
                            .history
                            .iter()
                            .map(|t| t.text.clone())
                            .collect::<Vec<_>>()
                    ),
                );
                Ok(SkillOutput {
                    artifact_name: "echo",
                    text: format!("echo: {}", request.text),
                    data,
                })
            }
        }
    }
}

/// The real registry plus the test skills.
pub fn registry(settings: &Settings) -> SkillRegistry {
    let mut registry = skill_registry(&settings.skill_settings()).expect("the skills load");
    for info in [ECHO, EXPENSIVE_ECHO, PANIC, SLOW, FAIL] {
        registry.register(Arc::new(TestSkill { info }));
    }
    registry
}

/// Starts a server with `customize` applied to the test settings.
pub async fn spawn_app(customize: impl FnOnce(&mut Settings)) -> TestApp {
    let data = TempDir::new().expect("temp dir");
    let mut settings = test_settings();
    settings.data.dir = data.path().to_path_buf();
    customize(&mut settings);
    let skills = registry(&settings);
    let app = Application::build_with_skills(settings.clone(), skills)
        .await
        .expect("the test server starts");
    let base = format!("http://{}", app.local_addr());
    let (tx, rx) = oneshot::channel();
    tokio::spawn(app.run_until(async {
        let _ = rx.await;
    }));
    TestApp {
        base,
        client: http_client(),
        settings,
        shutdown: Some(tx),
        _data: data,
    }
}

impl TestApp {
    /// Starts the server's shutdown (what SIGTERM does), as a replica being stopped.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    /// A token for `sub` on `plan`, signed with the app's secret and claims.
    pub fn token(&self, sub: &str, plan: Plan) -> String {
        mint_hs256(
            &self.settings.auth,
            SECRET,
            sub,
            plan,
            Duration::from_secs(600),
        )
        .expect("token")
    }

    /// POSTs raw bytes with headers.
    pub async fn post_raw(
        &self,
        token: Option<&str>,
        content_type: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        self.post_raw_to("/api/v1/a2a", token, content_type, body)
            .await
    }

    /// POSTs raw bytes with headers to `path`.
    pub async fn post_raw_to(
        &self,
        path: &str,
        token: Option<&str>,
        content_type: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        let mut request = self.client.post(format!("{}{path}", self.base)).body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        into_reply(request.send().await.expect("request")).await
    }

    /// POSTs a JSON-RPC body.
    pub async fn rpc(&self, token: Option<&str>, body: &Value) -> Reply {
        self.post_raw(token, Some("application/json"), body.to_string())
            .await
    }

    /// `message/send` of one text part to a skill, with a fresh message id.
    pub async fn send(&self, token: &str, skill: &str, text: &str) -> Reply {
        self.rpc(Some(token), &send_body(skill, text, &uuid()))
            .await
    }

    /// A GET.
    pub async fn get(&self, path: &str) -> Reply {
        into_reply(
            self.client
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .expect("request"),
        )
        .await
    }
}

/// Sends `request` and reads its answer.
pub async fn reply(request: reqwest::RequestBuilder) -> Reply {
    into_reply(request.send().await.expect("request")).await
}

/// The events of a Server-Sent Events body, each `data:` line read as JSON.
pub fn sse_events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).expect("each event is JSON"))
        .collect()
}

/// The answer as JSON; a stream of one event (a streaming method's failure) as that event.
async fn into_reply(response: reqwest::Response) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let streamed = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let events: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .collect();
    let body = match events.as_slice() {
        [event] if streamed => serde_json::from_str(event.trim()),
        _ => serde_json::from_str(&text),
    }
    .unwrap_or(Value::String(text));
    Reply {
        status,
        headers,
        body,
    }
}

/// An HTTP client for the tests. The server's TLS provider is installed first: the HTTP client
/// refuses to start without one, even for plain-HTTP loopback calls.
pub fn http_client() -> reqwest::Client {
    magisterium_a2a::app::install_tls_provider();
    reqwest::Client::new()
}

/// A fresh id.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A `message/send` request body.
pub fn send_body(skill: &str, text: &str, message_id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": message_id, "role": "user",
        "parts": [{"kind": "text", "text": text}], "metadata": {"skillId": skill}}}})
}

/// A JSON-RPC request body.
pub fn call(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params})
}

/// A raw HTTP/1.1 `message/send` to the echo skill, closing the connection after the answer.
pub fn raw_send(address: &str, token: &str) -> String {
    let body = send_body("test_echo", "hello", &uuid()).to_string();
    format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Reads every stream to its end; returns the ones not answered with 200 and a result.
pub async fn unanswered(streams: Vec<tokio::net::TcpStream>) -> Vec<String> {
    use tokio::io::AsyncReadExt;
    let mut unanswered = Vec::new();
    for (n, mut stream) in streams.into_iter().enumerate() {
        let mut response = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            stream.read_to_end(&mut response),
        )
        .await;
        let response = String::from_utf8_lossy(&response);
        let answered = matches!(read, Ok(Ok(_)))
            && response.starts_with("HTTP/1.1 200")
            && response.contains("\"result\"");
        if !answered {
            unanswered.push(format!("request {n}: {read:?} {response:?}"));
        }
    }
    unanswered
}

/// A `redis-server` of our own, on a free loopback port, killed on drop.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    dir: TempDir,
    extra: Vec<String>,
}

impl RedisServer {
    /// Starts one and waits until it answers. A missing binary is a loud failure.
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// Starts one with extra arguments (e.g. append-only persistence).
    pub fn start_with(extra: &[&str]) -> RedisServer {
        let dir = TempDir::new().expect("temp dir");
        let port = free_port();
        Self::spawn(dir, port, extra)
    }

    pub fn spawn(dir: TempDir, port: u16, extra: &[&str]) -> RedisServer {
        let child = Self::launch(dir.path(), port, extra);
        let server = RedisServer {
            child,
            port,
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        server.wait_ready();
        server
    }

    /// Kills the server the hard way (no shutdown save) and starts it again on the same port
    /// and data folder, as a crash and a restart would.
    pub fn crash_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let extra: Vec<&str> = self.extra.iter().map(String::as_str).collect();
        self.child = Self::launch(self.dir.path(), self.port, &extra);
        self.wait_ready();
    }

    /// Stops the server, keeping its port and folder for [`RedisServer::restart`].
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a stopped server again.
    pub fn restart(&mut self) {
        let extra: Vec<&str> = self.extra.iter().map(String::as_str).collect();
        self.child = Self::launch(self.dir.path(), self.port, &extra);
        self.wait_ready();
    }

    fn launch(dir: &std::path::Path, port: u16, extra: &[&str]) -> Child {
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(extra)
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start `redis-server` ({e}). The Redis tests need it: install it with `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS), or run scripts/test, which installs it"
                )
            })
    }

    fn wait_ready(&self) {
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("redis-server on port {} did not start", self.port);
    }

    /// The URL to give the server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Redis Cluster on loopback, made with `redis-cli --cluster create`.
pub struct RedisCluster {
    /// Its servers, primaries and replicas in the order `redis-cli` was given them.
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Three primaries, no replicas.
    pub fn start() -> RedisCluster {
        RedisCluster::start_with(3, 0, &["--cluster-node-timeout", "2000"])
    }

    /// `primaries` primaries with `replicas` replicas each, every server started with `extra`
    /// arguments beside cluster mode; returns once every node says `cluster_state:ok`.
    pub fn start_with(primaries: usize, replicas: usize, extra: &[&str]) -> RedisCluster {
        let mut arguments = vec![
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
        ];
        arguments.extend_from_slice(extra);
        let nodes: Vec<RedisServer> = (0..primaries * (1 + replicas))
            .map(|_| {
                let dir = TempDir::new().expect("temp dir");
                RedisServer::spawn(dir, free_cluster_port(), &arguments)
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli (package redis-tools) runs");
        assert!(status.success(), "redis-cli --cluster create failed");
        for _ in 0..300 {
            let ok = nodes.iter().all(|n| {
                Command::new("redis-cli")
                    .args(["-p", &n.port.to_string(), "cluster", "info"])
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
            });
            if ok {
                return RedisCluster { nodes };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the Redis cluster did not become ready");
    }

    /// Seed URLs for the server, comma-separated.
    pub fn url(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A free port whose cluster bus port (+10000) is free and valid too.
pub fn free_cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port < 50_000 && StdListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Settings customiser for the Redis store.
pub fn with_redis(url: String) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_url = Some(url);
    }
}

/// One command `redis-server` executed, as its `MONITOR` feed shows it.
#[derive(Debug, Clone)]
pub struct MonitoredCommand {
    /// A script called it (`[0 lua]`), rather than a client sending it.
    pub from_script: bool,
    /// The command's name (upper case) and arguments.
    pub words: Vec<String>,
}

impl MonitoredCommand {
    /// The command's name, upper case.
    pub fn name(&self) -> &str {
        &self.words[0]
    }

    /// Whether an argument contains `text`.
    pub fn touches(&self, text: &str) -> bool {
        self.words[1..].iter().any(|word| word.contains(text))
    }
}

/// Everything a `redis-server` executes, read from its `MONITOR` feed: which commands each
/// round trip of the server under test made, and which a script made inside one.
pub struct RedisMonitor {
    commands: Arc<std::sync::Mutex<Vec<MonitoredCommand>>>,
    url: String,
}

impl RedisMonitor {
    /// Starts watching (the feed starts once Redis answered `OK`).
    pub async fn start(redis: &RedisServer) -> RedisMonitor {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", redis.port))
            .await
            .expect("redis-server answers");
        stream.write_all(b"MONITOR\r\n").await.expect("MONITOR");
        let mut lines = BufReader::new(stream).lines();
        let ok = lines.next_line().await.expect("the feed reads");
        assert_eq!(ok.as_deref(), Some("+OK"));
        let commands = Arc::new(std::sync::Mutex::new(Vec::new()));
        let feed = Arc::clone(&commands);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(command) = parse_monitor_line(&line) {
                    feed.lock().unwrap().push(command);
                }
            }
        });
        RedisMonitor {
            commands,
            url: redis.url(),
        }
    }

    /// The commands executed since the last call: a marker (`ECHO`) is sent last, and Redis runs
    /// commands one at a time, so every command before it is in the feed once it is.
    pub async fn take(&self) -> Vec<MonitoredCommand> {
        let marker = format!("marker-{}", uuid());
        let client = redis::Client::open(self.url.as_str()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        let _: String = redis::cmd("ECHO")
            .arg(&marker)
            .query_async(&mut connection)
            .await
            .unwrap();
        for _ in 0..500 {
            {
                let mut commands = self.commands.lock().unwrap();
                if let Some(at) = commands
                    .iter()
                    .position(|c| c.name() == "ECHO" && c.words.get(1) == Some(&marker))
                {
                    let taken: Vec<MonitoredCommand> = commands.drain(..=at).collect();
                    return taken[..at].to_vec();
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the MONITOR feed never showed the marker");
    }
}

/// `+1700000000.000000 [0 127.0.0.1:5555] "GET" "key"` → the command; `None` for other lines.
fn parse_monitor_line(line: &str) -> Option<MonitoredCommand> {
    let rest = line.strip_prefix('+')?;
    let (source, arguments) = rest.split_once("] ")?;
    let from_script = source.ends_with(" lua");
    let mut words = Vec::new();
    let mut chars = arguments.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut word = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => word.extend(chars.next()),
                c => word.push(c),
            }
        }
        words.push(word);
    }
    let name = words.first_mut()?;
    *name = name.to_uppercase();
    Some(MonitoredCommand { from_script, words })
}

/// `INFO commandstats`: the calls of each command so far (scripts' own calls included).
pub async fn command_calls(redis: &RedisServer) -> std::collections::HashMap<String, u64> {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut connection)
        .await
        .unwrap();
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}

/// The keys matching `pattern`.
pub async fn redis_keys(redis: &RedisServer, pattern: &str) -> Vec<String> {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("KEYS")
        .arg(pattern)
        .query_async(&mut connection)
        .await
        .unwrap()
}

/// A data folder whose corpus holds `documents` (one JSON object each, the import format),
/// imported with the real binary's `corpus import`, as an operator would.
pub fn data_with_corpus(documents: &[Value]) -> TempDir {
    let data = tempfile::tempdir().unwrap();
    let input = data.path().join("docs.jsonl");
    let lines: String = documents.iter().map(|doc| format!("{doc}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args(["--config-dir", "/nonexistent", "corpus", "import"])
        .arg(&input)
        .env("A2A__DATA__DIR", data.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    data
}

/// Stops a server started as a child process and gives back everything it wrote to stderr.
pub async fn stop_and_read_stderr(mut child: tokio::process::Child) -> String {
    use tokio::io::AsyncReadExt;
    child.start_kill().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    child.wait().await.unwrap();
    stderr
}
