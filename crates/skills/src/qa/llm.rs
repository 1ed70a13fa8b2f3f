//! The answering backend: any OpenAI-compatible `POST {base_url}/chat/completions` endpoint
//! (a hosted service, vLLM, llama.cpp's server, Ollama).
//!
//! The client never lets the backend's own words reach a user: whatever goes wrong (down, slow,
//! overloaded, malformed reply) becomes a [`BackendFailure`], whose user message names the kind
//! of failure only. Error bodies may hold keys, URLs or stack traces, so they go to the log,
//! shortened and with the api key masked, and nowhere else.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::Instrument;

use super::sse::{SseError, SseEvent, SseReader};
use crate::shown_url::shown_url;

/// How the server reaches its answering model (`[llm]` in the config, `A2A__LLM__*` in the
/// environment). Without a `base_url` `catholic_qa` answers extractively, so a fresh install
/// works with no model at all.
///
/// `Debug` masks the api key and any credentials in the URL, so the settings can be logged.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// The API root, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. `None`
    /// (or an empty string) selects the extractive mode.
    pub base_url: Option<String>,
    /// The model name the backend expects; required when `base_url` is set.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when set; local servers usually need none.
    pub api_key: Option<String>,
    /// Longest wait for one attempt, connection included, in seconds.
    pub timeout_secs: u64,
    /// Extra attempts after a 429, a 5xx or a failed connection.
    pub max_retries: u32,
    /// Pause before the first retry, in milliseconds; each further retry doubles it, up to
    /// eight seconds. A backend's own `Retry-After` (up to ten seconds) wins. Lower it for a
    /// local model that recovers at once, raise it for a hosted one that rate-limits.
    pub retry_base_delay_ms: u64,
    /// Budget for the whole prompt (instructions, passages, history, question), estimated at
    /// four characters a token, so that small local models are not overrun.
    pub max_context_tokens: usize,
    /// Longest answer the backend may write (`max_tokens`).
    pub max_answer_tokens: u32,
    /// Sampling temperature; low values keep answers close to the passages.
    pub temperature: f32,
    /// Speaks HTTP/2 to the backend from the first byte (cleartext "prior knowledge" on an
    /// `http://` URL, HTTP/2 alone offered on `https://`), so that every answer in flight
    /// shares one connection instead of holding an HTTP/1.1 connection (and its buffers) each.
    /// Off by default: most local model servers speak HTTP/1.1 only, and over `https://` the
    /// client already takes HTTP/2 whenever the backend offers it. Turn it on only for a
    /// backend (or a proxy in front of it) that accepts HTTP/2 without negotiation, and that
    /// allows as many streams on a connection as answers run at once: answers beyond its
    /// limit wait for a place.
    pub http2: bool,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            base_url: None,
            model: String::new(),
            api_key: None,
            timeout_secs: 30,
            max_retries: 2,
            retry_base_delay_ms: 500,
            max_context_tokens: 6000,
            max_answer_tokens: 800,
            temperature: 0.2,
            http2: false,
        }
    }
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url.as_deref().map(shown_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout_secs", &self.timeout_secs)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay_ms", &self.retry_base_delay_ms)
            .field("max_context_tokens", &self.max_context_tokens)
            .field("max_answer_tokens", &self.max_answer_tokens)
            .field("temperature", &self.temperature)
            .field("http2", &self.http2)
            .finish()
    }
}

impl LlmSettings {
    /// The configured base URL, with an empty string read as "not configured" (so that
    /// `A2A__LLM__BASE_URL=` switches the backend off).
    pub fn configured_base_url(&self) -> Option<&str> {
        self.base_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }
}

/// How often the shared HTTP/2 connection to the backend is pinged, idle or not.
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(20);

/// How long a ping may go unanswered before the connection is dropped: answers still waiting
/// for their head are retried, answers being read end as cut off.
const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest `Retry-After` the client is willing to sleep through: beyond it, the user is better
/// served by a prompt "try again later" than by a request that hangs.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// Longest backoff step, and so the largest `retry_base_delay_ms` accepted.
const BACKOFF_CAP: Duration = Duration::from_secs(8);
/// Largest reply body read: a chat completion is a few kilobytes, anything far bigger is broken.
const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;
/// Longest line, or event, of a streamed reply: one piece of an answer is a few hundred bytes;
/// a backend that sends its whole answer as one event stays far below this.
const MAX_STREAM_LINE_BYTES: usize = 256 * 1024;
/// How much of an error body the log keeps.
const LOGGED_BODY_CHARS: usize = 300;

/// Who said one message of the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    System,
    User,
    Assistant,
}

/// One message of the chat sent to the backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatMessage {
    pub role: Role,
    pub content: String,
}

/// What the backend answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Completion {
    /// The answer text, markers as the model wrote them.
    pub content: String,
    /// The model that answered, as the backend names it (falls back to the configured name).
    pub model: String,
}

/// Why the backend gave no usable answer. Only the kind is ever shown to users.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BackendFailure {
    /// No reply within the timeout.
    Timeout,
    /// No connection could be made (down, wrong host or port).
    Unreachable,
    /// 429 after every retry.
    Busy,
    /// 5xx after every retry.
    ServerError,
    /// 401 or 403: the operator's key is wrong or missing.
    Credentials,
    /// Another 4xx: the backend refused the request (unknown model, prompt too long).
    Refused,
    /// A 2xx reply that is not a chat completion.
    Malformed,
    /// A chat completion with no text.
    Empty,
    /// A streamed reply that ended before the answer did (no `[DONE]`, no finish reason).
    Cut,
    /// A streamed reply that reported an error in place of the rest of the answer.
    Aborted,
}

impl BackendFailure {
    /// The text of the `failed` task: says the answering service is unavailable and what kind
    /// of failure it was, and nothing the backend said.
    pub(crate) fn user_message(&self, timeout_secs: u64) -> String {
        let reason = match self {
            BackendFailure::Timeout if timeout_secs == 1 => {
                "it did not answer within 1 second".to_string()
            }
            BackendFailure::Timeout => {
                format!("it did not answer within {timeout_secs} seconds")
            }
            BackendFailure::Unreachable => "it could not be reached".to_string(),
            BackendFailure::Busy => "it is overloaded".to_string(),
            BackendFailure::ServerError => "it reported an internal error".to_string(),
            BackendFailure::Credentials => {
                "it refused this server's credentials, so the operator should check the [llm] api_key"
                    .to_string()
            }
            BackendFailure::Refused => {
                "it refused the request, so the operator should check the [llm] model".to_string()
            }
            BackendFailure::Malformed => "its reply could not be read".to_string(),
            BackendFailure::Empty => "it returned an empty answer".to_string(),
            BackendFailure::Cut => "its answer was cut off before the end".to_string(),
            BackendFailure::Aborted => {
                "it stopped with an error while writing the answer".to_string()
            }
        };
        format!(
            "The answering service is unavailable right now: {reason}. Try again later, or use document_search to read the passages directly."
        )
    }
}

/// One attempt's outcome when it failed.
enum AttemptFailure {
    /// Worth another try (429, 5xx, connection failure), after `retry_after` if the backend
    /// asked for a delay.
    Retryable {
        failure: BackendFailure,
        retry_after: Option<Duration>,
    },
    /// Trying again would give the same result.
    Final(BackendFailure),
}

/// A chat-completions client with timeouts and bounded, backed-off retries.
pub(crate) struct LlmClient {
    http: reqwest::Client,
    endpoint: Url,
    model: String,
    api_key: Option<String>,
    max_retries: u32,
    max_answer_tokens: u32,
    temperature: f32,
    timeout_secs: u64,
    /// First backoff step; each retry doubles it.
    backoff_base: Duration,
    /// Where each request's `traceparent` comes from, when the server exports traces.
    pub(crate) trace_context: Option<crate::TraceContext>,
}

/// The span of one model request (its retries included), exported with the call's trace when
/// the server exports traces; disabled, at the cost of one cached check, otherwise.
fn model_span(stream: bool) -> tracing::Span {
    tracing::info_span!(
        target: crate::TRACE_TARGET,
        "model request",
        otel.kind = "client",
        a2a.model_stream = stream,
    )
}

/// Why settings cannot make a client; shown to the operator at start-up.
pub(crate) fn check_settings(settings: &LlmSettings, base_url: &str) -> Result<Url, String> {
    let shown = shown_url(base_url);
    let base = Url::parse(base_url).map_err(|_| {
        format!("[llm] base_url `{shown}` is not a URL (expected e.g. http://127.0.0.1:11434/v1)")
    })?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(format!(
            "[llm] base_url `{shown}` must start with http:// or https://"
        ));
    }
    if settings.model.trim().is_empty() {
        return Err(
            "[llm] model is empty: name the model the backend serves (e.g. llama3.1:8b)"
                .to_string(),
        );
    }
    if settings.timeout_secs == 0 {
        return Err("[llm] timeout_secs must be at least 1".to_string());
    }
    let longest_delay_ms = BACKOFF_CAP.as_millis();
    if !(1..=longest_delay_ms).contains(&u128::from(settings.retry_base_delay_ms)) {
        return Err(format!(
            "[llm] retry_base_delay_ms must be from 1 to {longest_delay_ms}, not {}",
            settings.retry_base_delay_ms
        ));
    }
    if settings.max_answer_tokens == 0 {
        return Err("[llm] max_answer_tokens must be at least 1".to_string());
    }
    if !(0.0..=2.0).contains(&settings.temperature) {
        return Err(format!(
            "[llm] temperature must be between 0 and 2, not {}",
            settings.temperature
        ));
    }
    let joined = format!("{}/chat/completions", base.as_str().trim_end_matches('/'));
    Url::parse(&joined).map_err(|_| format!("[llm] base_url `{shown}` cannot take a path"))
}

impl LlmClient {
    /// A client for the endpoint `check_settings` accepted.
    pub(crate) fn new(settings: &LlmSettings, endpoint: Url) -> Result<LlmClient, String> {
        // reqwest is built without a bundled TLS provider; install the process default unless
        // the embedding program already chose one.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let timeout = Duration::from_secs(settings.timeout_secs);
        let mut http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)));
        if settings.http2 {
            // One connection carries every answer: a dead one is found by its pings, not by
            // each answer's timeout.
            http = http
                .http2_prior_knowledge()
                .http2_keep_alive_interval(HTTP2_PING_INTERVAL)
                .http2_keep_alive_timeout(HTTP2_PING_TIMEOUT)
                .http2_keep_alive_while_idle(true);
        }
        let http = http
            .build()
            .map_err(|e| format!("the HTTP client for [llm] could not be built: {e}"))?;
        Ok(LlmClient {
            http,
            endpoint,
            model: settings.model.trim().to_string(),
            api_key: settings
                .api_key
                .as_deref()
                .map(str::trim)
                .filter(|key| !key.is_empty())
                .map(str::to_string),
            max_retries: settings.max_retries,
            max_answer_tokens: settings.max_answer_tokens,
            temperature: settings.temperature,
            timeout_secs: settings.timeout_secs,
            backoff_base: Duration::from_millis(settings.retry_base_delay_ms),
            trace_context: None,
        })
    }

    /// The per-attempt timeout, for the user message of a timeout.
    pub(crate) fn timeout_secs(&self) -> u64 {
        self.timeout_secs
    }

    /// Sends the chat and returns the answer, retrying 429, 5xx and connection failures up to
    /// `max_retries` times with exponential backoff (or the backend's small `Retry-After`).
    pub(crate) async fn complete(
        &self,
        messages: &[ChatMessage],
    ) -> Result<Completion, BackendFailure> {
        let body = self.request_body(messages, false);
        self.with_retries(|| self.attempt(&body))
            .instrument(model_span(false))
            .await
    }

    /// Sends the chat asking for a streamed answer (`stream: true`), retrying as
    /// [`complete`](LlmClient::complete) does until the backend starts answering; the answer
    /// is then read piece by piece from the returned stream, and a failure there is final (part
    /// of the answer may have been passed on). The per-attempt timeout covers the whole answer.
    pub(crate) async fn stream(
        &self,
        messages: &[ChatMessage],
    ) -> Result<AnswerStream<'_>, BackendFailure> {
        let body = self.request_body(messages, true);
        self.with_retries(|| self.open_stream(&body))
            .instrument(model_span(true))
            .await
    }

    fn request_body(&self, messages: &[ChatMessage], stream: bool) -> Value {
        serde_json::json!({
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_answer_tokens,
            "temperature": self.temperature,
            "stream": stream,
        })
    }

    async fn with_retries<T, Attempt, Outcome>(
        &self,
        mut attempt: Attempt,
    ) -> Result<T, BackendFailure>
    where
        Attempt: FnMut() -> Outcome,
        Outcome: Future<Output = Result<T, AttemptFailure>>,
    {
        let mut retries = 0;
        loop {
            let (failure, retry_after) = match attempt().await {
                Ok(outcome) => return Ok(outcome),
                Err(AttemptFailure::Final(failure)) => return Err(failure),
                Err(AttemptFailure::Retryable {
                    failure,
                    retry_after,
                }) => (failure, retry_after),
            };
            if retries >= self.max_retries {
                return Err(failure);
            }
            let wait = match retry_after {
                Some(asked) if asked > MAX_RETRY_AFTER => {
                    tracing::warn!(
                        ?failure,
                        retry_after_secs = asked.as_secs(),
                        "the answering backend asked for a long pause; giving up"
                    );
                    return Err(failure);
                }
                Some(asked) => asked,
                None => self.backoff(retries),
            };
            retries += 1;
            tracing::warn!(
                ?failure,
                retry = retries,
                wait_ms = wait.as_millis() as u64,
                "retrying the answering backend"
            );
            tokio::time::sleep(wait).await;
        }
    }

    fn backoff(&self, retries_done: u32) -> Duration {
        self.backoff_base
            .saturating_mul(2u32.saturating_pow(retries_done))
            .min(BACKOFF_CAP)
    }

    /// Sends the request; a reply whose status is not a success is read, logged and
    /// classified.
    async fn post(&self, body: &Value, accept: &str) -> Result<reqwest::Response, AttemptFailure> {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .header(ACCEPT, accept)
            .json(body);
        if let Some(key) = &self.api_key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        if let Some(traceparent) = self
            .trace_context
            .and_then(crate::TraceContext::traceparent)
        {
            request = request.header("traceparent", traceparent);
        }
        let mut response = request.send().await.map_err(|error| {
            let failure = if error.is_timeout() {
                BackendFailure::Timeout
            } else {
                BackendFailure::Unreachable
            };
            tracing::warn!(error = %error.without_url(), ?failure, "the answering backend could not be reached");
            if failure == BackendFailure::Timeout {
                AttemptFailure::Final(failure)
            } else {
                AttemptFailure::Retryable {
                    failure,
                    retry_after: None,
                }
            }
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(&response);
            let body = read_body(&mut response).await?;
            tracing::warn!(
                status = status.as_u16(),
                body = %self.loggable(&body),
                "the answering backend returned an error"
            );
            return Err(classify_status(status, retry_after));
        }
        Ok(response)
    }

    async fn attempt(&self, body: &Value) -> Result<Completion, AttemptFailure> {
        let mut response = self.post(body, "application/json").await?;
        let body = read_body(&mut response).await?;
        self.completion(&body).map_err(AttemptFailure::Final)
    }

    fn completion(&self, body: &[u8]) -> Result<Completion, BackendFailure> {
        parse_completion(body, &self.model).inspect_err(|failure| {
            tracing::warn!(?failure, body = %self.loggable(body), "the answering backend's reply is not a chat completion");
        })
    }

    async fn open_stream(&self, body: &Value) -> Result<AnswerStream<'_>, AttemptFailure> {
        let mut response = self.post(body, "text/event-stream").await?;
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        if is_json {
            // A backend that does not stream answers with one completion: one piece.
            let body = read_body(&mut response).await?;
            let completion = self.completion(&body).map_err(AttemptFailure::Final)?;
            return Ok(AnswerStream::whole(self, response, completion));
        }
        Ok(AnswerStream::new(self, response))
    }

    /// The start of a body for the log, with the api key masked should the backend echo it.
    fn loggable(&self, body: &[u8]) -> String {
        let text: String = String::from_utf8_lossy(body)
            .chars()
            .take(LOGGED_BODY_CHARS)
            .collect();
        match &self.api_key {
            Some(key) => text.replace(key.as_str(), "[redacted]"),
            None => text,
        }
    }
}

/// A streamed answer being read: the pieces of its text in order, as the backend sends them
/// (`data:` events whose `choices[0].delta.content` is the next piece, then `data: [DONE]`).
/// Dropping it drops the request, closing the connection to the backend.
pub(crate) struct AnswerStream<'client> {
    client: &'client LlmClient,
    response: reqwest::Response,
    reader: SseReader,
    /// Pieces read but not yet taken.
    pieces: VecDeque<String>,
    /// The model that answers, as the backend names it.
    model: Option<String>,
    /// A piece held text other than whitespace.
    has_text: bool,
    /// A choice gave its finish reason: a stream that then ends without `[DONE]` is whole.
    finish_reason_seen: bool,
    /// The answer is complete: nothing more is read.
    done: bool,
    /// Bytes of the reply read so far.
    read_bytes: usize,
}

impl<'client> AnswerStream<'client> {
    fn new(client: &'client LlmClient, response: reqwest::Response) -> Self {
        AnswerStream {
            client,
            response,
            reader: SseReader::new(MAX_STREAM_LINE_BYTES),
            pieces: VecDeque::new(),
            model: None,
            has_text: false,
            finish_reason_seen: false,
            done: false,
            read_bytes: 0,
        }
    }

    fn whole(
        client: &'client LlmClient,
        response: reqwest::Response,
        completion: Completion,
    ) -> Self {
        let mut stream = AnswerStream::new(client, response);
        stream.pieces.push_back(completion.content);
        stream.model = Some(completion.model);
        stream.has_text = true;
        stream.done = true;
        stream
    }

    /// The next piece of the answer, `None` after the last. Cancel-safe: a piece is only ever
    /// taken whole, so this can race another future in a `select!`.
    pub(crate) async fn next_piece(&mut self) -> Result<Option<String>, BackendFailure> {
        loop {
            if let Some(piece) = self.pieces.pop_front() {
                return Ok(Some(piece));
            }
            if self.done {
                return if self.has_text {
                    Ok(None)
                } else {
                    Err(BackendFailure::Empty)
                };
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.read(&bytes)?,
                Ok(None) => self.end()?,
                Err(error) => {
                    let timed_out = error.is_timeout();
                    tracing::warn!(error = %error.without_url(), "the answering backend's streamed reply was cut");
                    return Err(if timed_out {
                        BackendFailure::Timeout
                    } else {
                        BackendFailure::Cut
                    });
                }
            }
        }
    }

    /// The model that answered, as the backend names it (falls back to the configured name).
    pub(crate) fn model(&self) -> String {
        self.model
            .clone()
            .unwrap_or_else(|| self.client.model.clone())
    }

    fn read(&mut self, bytes: &[u8]) -> Result<(), BackendFailure> {
        self.read_bytes += bytes.len();
        if self.read_bytes > MAX_REPLY_BYTES {
            tracing::warn!("the answering backend's streamed reply is too large");
            return Err(BackendFailure::Malformed);
        }
        let mut events = Vec::new();
        let fed = self.reader.feed(bytes, &mut events);
        for event in events {
            self.take_event(event)?;
        }
        fed.map_err(|error| {
            let reason = match error {
                SseError::TooLong => "a line or event over the cap",
                SseError::NotText => "a line that is not UTF-8",
            };
            tracing::warn!(
                reason,
                "the answering backend's streamed reply cannot be read"
            );
            BackendFailure::Malformed
        })
    }

    fn end(&mut self) -> Result<(), BackendFailure> {
        if let Some(event) = self.reader.finish() {
            self.take_event(event)?;
        }
        if !self.done && !self.finish_reason_seen {
            tracing::warn!("the answering backend's streamed reply ended before the answer");
            return Err(BackendFailure::Cut);
        }
        self.done = true;
        Ok(())
    }

    fn take_event(&mut self, event: SseEvent) -> Result<(), BackendFailure> {
        let data = event.data.trim();
        if self.done || data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Option<StreamChunk> = serde_json::from_str(data).ok();
        let reported_error = event.name.as_deref() == Some("error")
            || chunk.as_ref().is_some_and(|chunk| chunk.error.is_some());
        if reported_error {
            tracing::warn!(event = %self.client.loggable(data.as_bytes()), "the answering backend reported an error mid-answer");
            return Err(BackendFailure::Aborted);
        }
        let Some(chunk) = chunk else {
            tracing::warn!(event = %self.client.loggable(data.as_bytes()), "the answering backend's streamed event is not a completion chunk");
            return Err(BackendFailure::Malformed);
        };
        if self.model.is_none() {
            self.model = chunk
                .model
                .map(|name| name.trim().to_string())
                .filter(|name| !name.is_empty());
        }
        if let Some(choice) = chunk.choices.into_iter().next() {
            if let Some(piece) = choice.delta.and_then(|delta| delta.content)
                && !piece.is_empty()
            {
                self.has_text |= !piece.trim().is_empty();
                self.pieces.push_back(piece);
            }
            self.finish_reason_seen |= choice.finish_reason.is_some();
        }
        Ok(())
    }
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

async fn read_body(response: &mut reqwest::Response) -> Result<Vec<u8>, AttemptFailure> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_REPLY_BYTES {
                    tracing::warn!("the answering backend's reply is too large");
                    return Err(AttemptFailure::Final(BackendFailure::Malformed));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(error) => {
                let timed_out = error.is_timeout();
                tracing::warn!(error = %error.without_url(), "the answering backend's reply was cut");
                return Err(if timed_out {
                    AttemptFailure::Final(BackendFailure::Timeout)
                } else {
                    AttemptFailure::Retryable {
                        failure: BackendFailure::Unreachable,
                        retry_after: None,
                    }
                });
            }
        }
    }
}

fn classify_status(status: StatusCode, retry_after: Option<Duration>) -> AttemptFailure {
    match status {
        StatusCode::TOO_MANY_REQUESTS => AttemptFailure::Retryable {
            failure: BackendFailure::Busy,
            retry_after,
        },
        status if status.is_server_error() => AttemptFailure::Retryable {
            failure: BackendFailure::ServerError,
            retry_after,
        },
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            AttemptFailure::Final(BackendFailure::Credentials)
        }
        _ => AttemptFailure::Final(BackendFailure::Refused),
    }
}

/// The fields of a chat completion this client reads.
#[derive(Deserialize)]
struct CompletionReply {
    choices: Vec<Choice>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: Option<String>,
}

/// The fields of one streamed chunk this client reads.
#[derive(Deserialize)]
struct StreamChunk {
    #[serde(default)]
    choices: Vec<StreamChoice>,
    #[serde(default)]
    model: Option<String>,
    /// Backends report a failure mid-stream as an event with an `error` member.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StreamChoice {
    #[serde(default)]
    delta: Option<StreamDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct StreamDelta {
    #[serde(default)]
    content: Option<String>,
}

fn parse_completion(body: &[u8], configured_model: &str) -> Result<Completion, BackendFailure> {
    let reply: CompletionReply =
        serde_json::from_slice(body).map_err(|_| BackendFailure::Malformed)?;
    let choice = reply
        .choices
        .into_iter()
        .next()
        .ok_or(BackendFailure::Malformed)?;
    let content = choice
        .message
        .content
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
        .ok_or(BackendFailure::Empty)?;
    let model = reply
        .model
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| configured_model.to_string());
    Ok(Completion { content, model })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_masks_the_key_and_url_credentials() {
        let settings = LlmSettings {
            base_url: Some("https://alice:hunter2@llm.example/v1".into()),
            model: "m".into(),
            api_key: Some("sk-very-secret".into()),
            ..LlmSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("alice"), "{shown}");
        assert!(shown.contains("llm.example"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }

    #[test]
    fn settings_deserialize_with_defaults_and_refuse_unknown_fields() {
        let settings: LlmSettings =
            serde_json::from_str(r#"{"base_url": "http://127.0.0.1:11434/v1", "model": "x"}"#)
                .unwrap();
        assert_eq!(settings.timeout_secs, 30);
        assert_eq!(settings.max_retries, 2);
        assert_eq!(settings.retry_base_delay_ms, 500);
        assert_eq!(
            settings.configured_base_url(),
            Some("http://127.0.0.1:11434/v1")
        );
        assert!(serde_json::from_str::<LlmSettings>(r#"{"modle": "x"}"#).is_err());
        let blank: LlmSettings = serde_json::from_str(r#"{"base_url": "  "}"#).unwrap();
        assert_eq!(blank.configured_base_url(), None);
    }

    #[test]
    fn settings_are_checked() {
        let good = LlmSettings {
            model: "m".into(),
            ..LlmSettings::default()
        };
        let endpoint = check_settings(&good, "http://127.0.0.1:8080/v1/").unwrap();
        assert_eq!(
            endpoint.as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        let error = check_settings(&good, "ftp://u:pw@host/v1").unwrap_err();
        assert!(
            error.contains("http://") && !error.contains("pw"),
            "{error}"
        );
        assert!(check_settings(&good, "not a url").is_err());
        let no_model = LlmSettings::default();
        assert!(
            check_settings(&no_model, "http://h/v1")
                .unwrap_err()
                .contains("model")
        );
        for delay in [0, 8001] {
            let hasty = LlmSettings {
                retry_base_delay_ms: delay,
                ..good.clone()
            };
            let error = check_settings(&hasty, "http://h/v1").unwrap_err();
            assert!(error.contains("retry_base_delay_ms"), "{error}");
        }
        let hot = LlmSettings {
            temperature: 7.0,
            ..good
        };
        assert!(check_settings(&hot, "http://h/v1").is_err());
    }

    #[test]
    fn replies_are_parsed_strictly() {
        let ok = br#"{"model":"served","choices":[{"message":{"role":"assistant","content":" Yes [1]. "}}]}"#;
        assert_eq!(
            parse_completion(ok, "configured").unwrap(),
            Completion {
                content: "Yes [1].".into(),
                model: "served".into()
            }
        );
        let no_model = br#"{"choices":[{"message":{"content":"A"}}]}"#;
        assert_eq!(
            parse_completion(no_model, "configured").unwrap().model,
            "configured"
        );
        assert_eq!(
            parse_completion(b"{not json", "m"),
            Err(BackendFailure::Malformed)
        );
        assert_eq!(
            parse_completion(br#"{"choices":[]}"#, "m"),
            Err(BackendFailure::Malformed)
        );
        assert_eq!(
            parse_completion(br#"{"choices":[{"message":{"content":null}}]}"#, "m"),
            Err(BackendFailure::Empty)
        );
    }

    #[test]
    fn statuses_are_classified() {
        assert!(matches!(
            classify_status(StatusCode::TOO_MANY_REQUESTS, None),
            AttemptFailure::Retryable {
                failure: BackendFailure::Busy,
                ..
            }
        ));
        assert!(matches!(
            classify_status(StatusCode::BAD_GATEWAY, None),
            AttemptFailure::Retryable {
                failure: BackendFailure::ServerError,
                ..
            }
        ));
        assert!(matches!(
            classify_status(StatusCode::UNAUTHORIZED, None),
            AttemptFailure::Final(BackendFailure::Credentials)
        ));
        assert!(matches!(
            classify_status(StatusCode::NOT_FOUND, None),
            AttemptFailure::Final(BackendFailure::Refused)
        ));
    }

    #[test]
    fn every_failure_message_says_the_service_is_unavailable() {
        for failure in [
            BackendFailure::Timeout,
            BackendFailure::Unreachable,
            BackendFailure::Busy,
            BackendFailure::ServerError,
            BackendFailure::Credentials,
            BackendFailure::Refused,
            BackendFailure::Malformed,
            BackendFailure::Empty,
            BackendFailure::Cut,
            BackendFailure::Aborted,
        ] {
            let message = failure.user_message(30);
            assert!(
                message.starts_with("The answering service is unavailable"),
                "{message}"
            );
        }
        assert!(
            BackendFailure::Timeout
                .user_message(7)
                .contains("7 seconds")
        );
    }
}
