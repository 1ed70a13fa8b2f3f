//! What the kit remembers of each client run, bounded in bytes, and the rules it checks.
//!
//! Every run belongs to the owner of the token that made it: a run is recorded only when the
//! caller's token was verified on this call or on an earlier one (the hash of a verified token
//! remembers its owner, so a later refusal of the same token can be attributed). Client values
//! are kept truncated (ids, methods, run names) or hashed (tokens, task ids).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use sha2::{Digest, Sha256};

use super::report::{Coverage, Exercised, Finding, MethodGap, Report, RunReport, WebhookTally};
use super::rules::{
    CARD_REFETCH, CONTENT_TYPE, MALFORMED_ENVELOPE, MESSAGE_ID_REUSED, POLLING_TERMINAL_TASK,
    REFUSED_TOKEN_REUSED, RETRY_TOO_SOON, Rule, UNSUPPORTED_METHOD,
};
use super::scenario::{Scenario, truncated};
use crate::config::ConformanceSettings;
use crate::push::fault::FaultTally;
use crate::store::Owner;

const CARD_MAX_AGE: Duration = Duration::from_secs(3600);
/// Characters kept of a client value (ids, methods, run names).
pub const KEPT_CHARS: usize = 64;
/// What one remembered entry (a token, task, bucket or card fetch, its key kept twice: in the
/// map and in the eviction order) is counted as, in bytes: a generous estimate.
const ENTRY_BYTES: usize = 320;
/// The maps of remembered entries, sharing a quarter of the memory budget.
const REMEMBERED_MAPS: usize = 6;
/// What a run costs besides its findings and coverage, in bytes.
const RUN_BYTES: usize = 512;

/// A hash of a client value that must not be kept whole (a token, a task id).
pub type Digest16 = [u8; 16];

/// The hash the kit keeps of a token or a task id.
pub fn digest(value: &str) -> Digest16 {
    let mut out = [0u8; 16];
    out.copy_from_slice(&Sha256::digest(value.as_bytes())[..16]);
    out
}

/// One call as the kit saw it: who, which run, which call, which scenario.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The run's name (truncated).
    pub run: String,
    /// The hash of the bearer token, if one was sent.
    pub token: Option<Digest16>,
    /// `POST /api/v1/a2a`.
    pub request: String,
    /// The server's request id.
    pub request_id: String,
    /// The JSON-RPC id (truncated).
    pub rpc_id: Option<String>,
    /// The JSON-RPC method (truncated).
    pub method: Option<String>,
    /// `0.3` or `1.0`.
    pub wire: &'static str,
    /// The protocol binding that answered the call (`jsonrpc`, `http+json`, `grpc`; `-` for a
    /// card fetch), the label its metrics carry, so that a report tells the bindings apart.
    pub binding: &'static str,
    /// The scenario asked for.
    pub scenario: Option<Scenario>,
    /// Whether the scenario decided the answer.
    pub simulated: bool,
}

/// What the call's answer tells the kit.
#[derive(Debug, Clone, Default)]
pub struct CallOutcome {
    /// `Content-Type` was wrong: what it was.
    pub content_type: Option<String>,
    /// The envelope was wrong: the exact fault.
    pub envelope: Option<String>,
    /// A real (not simulated) 401.
    pub token_refused: bool,
    /// The call reached the rate limiter, in this bucket.
    pub limiter_bucket: Option<&'static str>,
    /// The call was refused with this `retryAfter` in this bucket.
    pub retry_after: Option<(&'static str, u64)>,
    /// The message a served `message/send` carried.
    pub sent_message: Option<SentDigest>,
    /// `tasks/get` answered a terminal task with this id.
    pub terminal_task: Option<String>,
    /// The method was refused as one the card says is not offered.
    pub unsupported: bool,
}

/// A sent message as the kit remembers it: hashes, and the id truncated for a finding only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentDigest {
    /// The `messageId`, truncated, to name in a finding (not remembered).
    pub message_id: String,
    /// The hash of the whole `messageId`.
    pub id: Digest16,
    /// The hash of the message's content.
    pub content: Digest16,
}

/// An insertion-ordered map with a fixed number of entries: the oldest goes first.
struct Remembered<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    max: usize,
}

impl<K: Hash + Eq + Clone, V> Remembered<K, V> {
    fn new(max: usize) -> Self {
        Remembered {
            map: HashMap::new(),
            order: VecDeque::new(),
            max: max.max(1),
        }
    }

    fn insert(&mut self, key: K, value: V) {
        if self.map.insert(key.clone(), value).is_none() {
            self.order.push_back(key);
            while self.map.len() > self.max {
                match self.order.pop_front() {
                    Some(oldest) => self.map.remove(&oldest),
                    None => break,
                };
            }
        }
    }

    fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    fn retain(&mut self, keep: impl Fn(&K) -> bool) {
        self.map.retain(|key, _| keep(key));
        self.order.retain(|key| keep(key));
    }
}

type RunKey = (Owner, String);

#[derive(Default)]
struct ClientRun {
    requests: u64,
    dropped: u64,
    findings: VecDeque<Finding>,
    /// Calls per scenario, method, wire and binding.
    coverage: BTreeMap<(&'static str, &'static str, &'static str, &'static str), u64>,
    /// The methods, wires and bindings the run called, with or without a scenario.
    called: BTreeSet<(&'static str, &'static str, &'static str)>,
    /// Per webhook scenario: what it did to the run's notifications.
    notifications: BTreeMap<&'static str, FaultTally>,
    bytes: usize,
}

struct State {
    runs: HashMap<RunKey, ClientRun>,
    order: VecDeque<RunKey>,
    run_bytes: usize,
    /// Bytes of each owner's runs: one owner may hold an eighth of the budget, so its runs
    /// cannot push every other owner's out.
    owner_bytes: HashMap<Owner, usize>,
    /// Verified tokens and their owners.
    tokens: Remembered<Digest16, Owner>,
    /// Tokens refused with a real 401.
    refused: Remembered<Digest16, ()>,
    /// Per owner and bucket: not before this instant, and the scenario that said so.
    retry: Remembered<(Owner, &'static str), (Instant, Option<&'static str>)>,
    /// Per owner and task: when it was last seen terminal.
    polls: Remembered<(Owner, Digest16), Instant>,
    /// Per run: when the card was last fetched.
    cards: Remembered<RunKey, Instant>,
    /// Per owner and message id hash: the hash of the content last sent under it.
    messages: Remembered<(Owner, Digest16), Digest16>,
}

impl State {
    /// Counts `added` bytes more and `removed` fewer for `owner`'s runs.
    fn charge(&mut self, owner: &Owner, added: usize, removed: usize) {
        self.run_bytes = self.run_bytes + added - removed;
        let bytes = self.owner_bytes.entry(owner.clone()).or_default();
        *bytes = *bytes + added - removed;
    }

    /// The run to forget when memory is short: the oldest run of the owners holding the most
    /// bytes. An owner's runs go only while no other holds more, so no number of other owners
    /// (nine at their eighth each, or many small ones) can empty a report smaller than theirs.
    fn run_to_drop(&self) -> Option<RunKey> {
        let most = self.owner_bytes.values().max()?;
        self.order
            .iter()
            .find(|(owner, _)| self.owner_bytes.get(owner) == Some(most))
            .cloned()
    }

    /// The oldest of `owner`'s runs.
    fn oldest_run_of(&self, owner: &Owner) -> Option<RunKey> {
        self.order.iter().find(|(o, _)| o == owner).cloned()
    }

    /// Forgets one run and its bytes.
    fn drop_run(&mut self, key: &RunKey) {
        self.order.retain(|k| k != key);
        if let Some(run) = self.runs.remove(key) {
            self.charge(&key.0, 0, run.bytes + RUN_BYTES + key.1.len());
        }
        if self.owner_bytes.get(&key.0) == Some(&0) {
            self.owner_bytes.remove(&key.0);
        }
    }
}

/// The recorder: runs, findings and what the rules need to remember.
pub struct Recorder {
    settings: ConformanceSettings,
    state: Mutex<State>,
}

fn finding_bytes(finding: &Finding) -> usize {
    std::mem::size_of::<Finding>()
        + finding.rule.len()
        + finding.at.len()
        + finding.request.len()
        + finding.request_id.len()
        + finding.rpc_id.as_ref().map_or(0, String::len)
        + finding.method.as_ref().map_or(0, String::len)
        + finding.wire.len()
        + finding.binding.len()
        + finding.scenario.as_ref().map_or(0, String::len)
        + finding.caused_by.as_ref().map_or(0, String::len)
        + finding.detail.len()
        + finding.why.len()
}

/// The methods coverage names; any other counts as `other`, so the table stays bounded.
const KNOWN_METHODS: [&str; 10] = [
    "message/send",
    "tasks/get",
    "tasks/cancel",
    "SendMessage",
    "GetTask",
    "CancelTask",
    "message/stream",
    "tasks/resubscribe",
    "SendStreamingMessage",
    "SubscribeToTask",
];

/// A rule a call broke: the rule, what the call did, and the scenario that caused it.
type Found = (Rule, String, Option<&'static str>);

/// The rules of `retryAfter`: a limiter reached again before the `retryAfter` it answered
/// had passed, and the `retryAfter` this answer sets.
fn retry_rules(
    state: &mut State,
    owner: &Owner,
    exchange: &Exchange,
    outcome: &CallOutcome,
    now: Instant,
    found: &mut Vec<Found>,
) {
    if let Some(bucket) = outcome.limiter_bucket
        && let Some((not_before, cause)) = state.retry.get(&(owner.clone(), bucket))
        && now < *not_before
    {
        let early = not_before.duration_since(now);
        found.push((
            RETRY_TOO_SOON,
            format!(
                "reached the `{bucket}` limiter {:.1} s before retryAfter had passed",
                early.as_secs_f64()
            ),
            *cause,
        ));
    }
    if let Some((bucket, secs)) = outcome.retry_after {
        let cause = exchange
            .simulated
            .then(|| exchange.scenario.map(Scenario::name))
            .flatten();
        state.retry.insert(
            (owner.clone(), bucket),
            (now + Duration::from_secs(secs), cause),
        );
    }
}

impl Recorder {
    /// A recorder within `settings.max_memory_bytes`: three quarters for runs, the rest for
    /// the remembered tokens, buckets, tasks, card fetches and message ids.
    pub fn new(settings: ConformanceSettings) -> Self {
        let entries = (settings.max_memory_bytes / 4 / REMEMBERED_MAPS / ENTRY_BYTES).max(1);
        Recorder {
            state: Mutex::new(State {
                runs: HashMap::new(),
                order: VecDeque::new(),
                run_bytes: 0,
                owner_bytes: HashMap::new(),
                tokens: Remembered::new(entries),
                refused: Remembered::new(entries),
                retry: Remembered::new(entries),
                polls: Remembered::new(entries),
                cards: Remembered::new(entries),
                messages: Remembered::new(entries),
            }),
            settings,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Remembers that `token` was verified as `owner`'s.
    pub fn verified(&self, token: Digest16, owner: &Owner) {
        let mut state = self.lock();
        if state.tokens.get(&token) != Some(owner) {
            state.tokens.insert(token, owner.clone());
        }
    }

    /// The owner of a token verified earlier.
    pub fn owner_of(&self, token: &Digest16) -> Option<Owner> {
        self.lock().tokens.get(token).cloned()
    }

    /// Bytes the runs hold now (what the tests of its memory bound read).
    #[cfg(test)]
    pub fn run_bytes(&self) -> usize {
        self.lock().run_bytes
    }

    /// Records one JSON-RPC call of `owner` and checks it against the rules.
    pub fn call(&self, owner: &Owner, exchange: &Exchange, outcome: &CallOutcome) {
        let now = Instant::now();
        let mut state = self.lock();
        let mut found: Vec<Found> = Vec::new();
        if let Some(content_type) = &outcome.content_type {
            found.push((CONTENT_TYPE, content_type.clone(), None));
        }
        if let Some(fault) = &outcome.envelope {
            found.push((MALFORMED_ENVELOPE, fault.clone(), None));
        }
        if let Some(token) = &exchange.token {
            if state.refused.get(token).is_some() {
                found.push((
                    REFUSED_TOKEN_REUSED,
                    "the same bearer token was already refused with 401".into(),
                    None,
                ));
            }
            if outcome.token_refused {
                state.refused.insert(*token, ());
            }
        }
        if let Some(method) = exchange.method.as_deref()
            && outcome.unsupported
        {
            found.push((UNSUPPORTED_METHOD, format!("called `{method}`"), None));
        }
        retry_rules(&mut state, owner, exchange, outcome, now, &mut found);
        self.repeat_rules(&mut state, owner, outcome, now, &mut found);
        let key = (owner.clone(), exchange.run.clone());
        self.with_run(&mut state, key, |run| {
            run.requests += 1;
            let method = exchange
                .method
                .as_deref()
                .and_then(|m| KNOWN_METHODS.iter().find(|known| **known == m))
                .copied()
                .unwrap_or("other");
            run.called.insert((method, exchange.wire, exchange.binding));
            if let Some(scenario) = exchange.scenario {
                *run.coverage
                    .entry((scenario.name(), method, exchange.wire, exchange.binding))
                    .or_default() += 1;
            }
            found
                .into_iter()
                .map(|(rule, detail, cause)| finding(exchange, rule, detail, cause))
                .collect()
        });
    }

    /// The rules of a message sent again (`messageId` reused for another message) and of a
    /// task polled again soon after it was seen terminal.
    fn repeat_rules(
        &self,
        state: &mut State,
        owner: &Owner,
        outcome: &CallOutcome,
        now: Instant,
        found: &mut Vec<Found>,
    ) {
        if let Some(sent) = &outcome.sent_message {
            let key = (owner.clone(), sent.id);
            match state.messages.get(&key) {
                Some(content) if *content == sent.content => {}
                Some(_) => {
                    found.push((
                        MESSAGE_ID_REUSED,
                        format!(
                            "messageId `{}` was used before for a different message",
                            sent.message_id
                        ),
                        None,
                    ));
                    state.messages.insert(key, sent.content);
                }
                None => state.messages.insert(key, sent.content),
            }
        }
        if let Some(task_id) = &outcome.terminal_task {
            let key = (owner.clone(), digest(task_id));
            if let Some(last) = state.polls.get(&key) {
                let since = now.duration_since(*last);
                if since < Duration::from_millis(self.settings.min_poll_interval_ms) {
                    found.push((
                        POLLING_TERMINAL_TASK,
                        format!(
                            "task `{}` polled again {} ms after it was seen terminal",
                            truncated(task_id, KEPT_CHARS),
                            since.as_millis()
                        ),
                        None,
                    ));
                }
            }
            state.polls.insert(key, now);
        }
    }

    /// Records a fetch of the agent card at `path` by `owner`'s run.
    pub fn card(&self, owner: &Owner, run: &str, path: &str, request_id: &str) {
        let now = Instant::now();
        let mut state = self.lock();
        let key = (owner.clone(), run.to_string());
        let early = state
            .cards
            .get(&key)
            .map(|at| now.duration_since(*at))
            .filter(|since| *since < CARD_MAX_AGE);
        state.cards.insert(key.clone(), now);
        self.with_run(&mut state, key, |run| {
            run.requests += 1;
            early
                .map(|since| {
                    let exchange = Exchange {
                        run: String::new(),
                        token: None,
                        request: format!("GET {path}"),
                        request_id: request_id.to_string(),
                        rpc_id: None,
                        method: None,
                        wire: "-",
                        binding: "-",
                        scenario: None,
                        simulated: false,
                    };
                    let detail = format!(
                        "fetched again after {} s, within max-age=3600",
                        since.as_secs()
                    );
                    vec![finding(&exchange, CARD_REFETCH, detail, None)]
                })
                .unwrap_or_default()
        });
    }

    /// Adds what a webhook scenario made of one notification attempt to `owner`'s run `run`.
    pub fn webhook(&self, owner: &Owner, run: &str, scenario: &'static str, tally: FaultTally) {
        let mut state = self.lock();
        let key = (owner.clone(), truncated(run, KEPT_CHARS));
        self.with_run(&mut state, key, |run| {
            let sum = run.notifications.entry(scenario).or_default();
            sum.posted += tally.posted;
            sum.failed_on_purpose += tally.failed_on_purpose;
            sum.delivered += tally.delivered;
            sum.dropped += tally.dropped;
            Vec::new()
        });
    }

    /// Adds the findings `f` returns to the run at `key`, creating it, and keeps the bytes of
    /// all runs within the budget by dropping the oldest runs.
    fn with_run(
        &self,
        state: &mut State,
        key: RunKey,
        f: impl FnOnce(&mut ClientRun) -> Vec<Finding>,
    ) {
        if !state.runs.contains_key(&key) {
            state.order.push_back(key.clone());
            state.charge(&key.0, RUN_BYTES + key.1.len(), 0);
        }
        let max_findings = self.settings.max_findings_per_run.max(1);
        let run = state.runs.entry(key.clone()).or_default();
        let coverage_before = run.coverage.len() + run.called.len() + run.notifications.len();
        let mut added = 0usize;
        let mut removed = 0usize;
        for finding in f(run) {
            if run.findings.len() >= max_findings
                && let Some(oldest) = run.findings.pop_front()
            {
                removed += finding_bytes(&oldest);
                run.dropped += 1;
            }
            added += finding_bytes(&finding);
            run.findings.push_back(finding);
        }
        added += (run.coverage.len() + run.called.len() + run.notifications.len()
            - coverage_before)
            * ENTRY_BYTES;
        run.bytes = run.bytes + added - removed;
        state.charge(&key.0, added, removed);
        let budget = self.settings.max_memory_bytes / 4 * 3;
        let owner_budget = budget / 8;
        while state.owner_bytes.get(&key.0).copied().unwrap_or(0) > owner_budget {
            let Some(oldest) = state.oldest_run_of(&key.0) else {
                break;
            };
            state.drop_run(&oldest);
        }
        while state.run_bytes > budget {
            let Some(oldest) = state.run_to_drop() else {
                break;
            };
            state.drop_run(&oldest);
        }
    }

    /// The runs of `owner`, or only the one named `run`.
    pub fn report(&self, owner: &Owner, run: Option<&str>) -> Report {
        let state = self.lock();
        let runs = state
            .order
            .iter()
            .filter(|(o, name)| o == owner && run.is_none_or(|r| r == name))
            .filter_map(|key| state.runs.get(key).map(|run| (key, run)))
            .map(|((_, name), run)| RunReport {
                run: name.clone(),
                requests: run.requests,
                dropped_findings: run.dropped,
                findings: run.findings.iter().cloned().collect(),
                coverage: coverage(run),
                notifications: run
                    .notifications
                    .iter()
                    .map(|(scenario, tally)| WebhookTally {
                        scenario: scenario.to_string(),
                        posted: tally.posted,
                        failed_on_purpose: tally.failed_on_purpose,
                        delivered: tally.delivered,
                        dropped: tally.dropped,
                    })
                    .collect(),
            })
            .collect();
        Report { runs }
    }

    /// Forgets the runs of `owner` (only the one named `run`, if given), and, when all its
    /// runs go, what was remembered for it.
    pub fn clear(&self, owner: &Owner, run: Option<&str>) {
        let mut state = self.lock();
        let doomed: Vec<RunKey> = state
            .order
            .iter()
            .filter(|(o, name)| o == owner && run.is_none_or(|r| r == name))
            .cloned()
            .collect();
        for key in &doomed {
            state.drop_run(key);
        }
        if run.is_none() {
            state.retry.retain(|(o, _)| o != owner);
            state.polls.retain(|(o, _)| o != owner);
        }
        state.cards.retain(|key| !doomed.contains(key));
    }
}

fn coverage(run: &ClientRun) -> Coverage {
    let exercised: Vec<Exercised> = run
        .coverage
        .iter()
        .map(|((scenario, method, wire, binding), calls)| Exercised {
            scenario: scenario.to_string(),
            method: method.to_string(),
            wire: wire.to_string(),
            binding: binding.to_string(),
            calls: *calls,
        })
        .collect();
    let untouched = Scenario::bare_names()
        .filter(|name| !exercised.iter().any(|e| e.scenario == *name))
        .map(str::to_string)
        .collect();
    let untouched_by_method = run
        .called
        .iter()
        .filter(|(method, _, _)| *method != "other")
        .map(|(method, wire, binding)| MethodGap {
            method: method.to_string(),
            wire: wire.to_string(),
            binding: binding.to_string(),
            scenarios: Scenario::bare_names()
                .filter(|name| applies(name, method))
                .filter(|name| {
                    !run.coverage
                        .contains_key(&(*name, *method, *wire, *binding))
                })
                .map(str::to_string)
                .collect(),
        })
        .collect();
    Coverage {
        exercised,
        untouched,
        untouched_by_method,
    }
}

/// Whether a scenario changes anything on `method`: `skill_failed` and `fail_mid_stream` fail
/// a sent message, `stream_dropped` and `slow_stream` shape a stream of events, and the webhook
/// scenarios fail the notifications of a sent message's task.
fn applies(scenario: &str, method: &str) -> bool {
    let sends = matches!(
        method,
        "message/send" | "SendMessage" | "message/stream" | "SendStreamingMessage"
    );
    let streams = matches!(
        method,
        "message/stream" | "SendStreamingMessage" | "tasks/resubscribe" | "SubscribeToTask"
    );
    match scenario {
        "skill_failed" | "fail_mid_stream" | "push_retried" | "push_undelivered" => sends,
        "stream_dropped" | "slow_stream" => streams,
        _ => true,
    }
}

fn finding(
    exchange: &Exchange,
    rule: Rule,
    detail: String,
    caused_by: Option<&'static str>,
) -> Finding {
    Finding {
        rule: rule.id.into(),
        at: Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
        request: exchange.request.clone(),
        request_id: exchange.request_id.clone(),
        rpc_id: exchange.rpc_id.clone(),
        method: exchange.method.clone(),
        wire: exchange.wire.into(),
        binding: exchange.binding.into(),
        simulated: exchange.simulated,
        scenario: exchange.scenario.map(|s| s.name().to_string()),
        caused_by: caused_by.map(str::to_string),
        detail,
        why: rule.why.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(run: &str, detail_len: usize) -> (Exchange, CallOutcome) {
        let exchange = Exchange {
            run: truncated(run, KEPT_CHARS),
            token: None,
            request: "POST /api/v1/a2a".into(),
            request_id: "r".into(),
            rpc_id: Some(truncated(&"9".repeat(detail_len), KEPT_CHARS)),
            method: Some("message/stream".into()),
            wire: "0.3",
            binding: "jsonrpc",
            scenario: None,
            simulated: false,
        };
        let outcome = CallOutcome {
            content_type: Some(truncated(&"x".repeat(detail_len), KEPT_CHARS)),
            unsupported: true,
            ..CallOutcome::default()
        };
        (exchange, outcome)
    }

    #[test]
    fn memory_stays_within_its_budget_in_bytes() {
        let recorder = Recorder::new(ConformanceSettings {
            max_memory_bytes: 64 * 1024,
            ..ConformanceSettings::default()
        });
        for i in 0..5_000 {
            let owner = Owner::of("test-issuer", &format!("user-{}", i % 50));
            let (exchange, outcome) = exchange(&format!("run-{i}-{}", "r".repeat(500)), 10_000);
            recorder.call(&owner, &exchange, &outcome);
            assert!(
                recorder.run_bytes() <= 48 * 1024,
                "{}",
                recorder.run_bytes()
            );
        }
        let owner = Owner::of("test-issuer", "user-49");
        let report = recorder.report(&owner, None);
        assert!(!report.runs.is_empty(), "the newest runs are kept");
        let text = serde_json::to_string(&report).unwrap();
        assert!(!text.contains(&"r".repeat(100)), "run names are truncated");
    }

    #[test]
    fn one_owner_cannot_push_out_another_owners_runs() {
        let recorder = Recorder::new(ConformanceSettings {
            max_memory_bytes: 256 * 1024,
            ..ConformanceSettings::default()
        });
        let quiet = Owner::of("test-issuer", "quiet");
        let (exchange_q, outcome_q) = exchange("quiet-run", 10);
        recorder.call(&quiet, &exchange_q, &outcome_q);
        let loud = Owner::of("test-issuer", "loud");
        for i in 0..5_000 {
            let (exchange, outcome) = exchange(&format!("loud-{i}"), 1_000);
            recorder.call(&loud, &exchange, &outcome);
        }
        assert_eq!(recorder.report(&quiet, None).runs.len(), 1);
        assert!(recorder.run_bytes() <= 256 * 1024 / 4 * 3 / 8 + 4_096);
    }

    #[test]
    fn many_owners_cannot_push_out_a_quiet_owners_run() {
        let recorder = Recorder::new(ConformanceSettings {
            max_memory_bytes: 64 * 1024,
            ..ConformanceSettings::default()
        });
        let quiet = Owner::of("test-issuer", "quiet");
        let (exchange_q, outcome_q) = exchange("quiet-run", 10);
        recorder.call(&quiet, &exchange_q, &outcome_q);
        for i in 0..2_000 {
            let loud = Owner::of("test-issuer", &format!("loud-{}", i % 20));
            let (exchange, outcome) = exchange(&format!("loud-{i}"), 1_000);
            recorder.call(&loud, &exchange, &outcome);
            assert!(
                recorder.run_bytes() <= 48 * 1024,
                "{}",
                recorder.run_bytes()
            );
        }
        assert_eq!(recorder.report(&quiet, None).runs.len(), 1);
    }

    #[test]
    fn findings_per_run_are_bounded_and_counted() {
        let recorder = Recorder::new(ConformanceSettings {
            max_findings_per_run: 3,
            ..ConformanceSettings::default()
        });
        let owner = Owner::of("test-issuer", "u");
        for _ in 0..10 {
            let (exchange, outcome) = exchange("one", 5);
            recorder.call(&owner, &exchange, &outcome);
        }
        let report = recorder.report(&owner, Some("one"));
        assert_eq!(report.runs[0].findings.len(), 3);
        assert_eq!(report.runs[0].dropped_findings, 17);
        assert_eq!(report.runs[0].requests, 10);
        let other = Owner::of("test-issuer", "v");
        let (exchange, outcome) = exchange("theirs", 5);
        recorder.call(&other, &exchange, &outcome);
        recorder.clear(&owner, None);
        assert!(recorder.report(&owner, None).runs.is_empty());
        assert_eq!(
            recorder.report(&other, None).runs.len(),
            1,
            "another owner's run stays"
        );
    }
}
