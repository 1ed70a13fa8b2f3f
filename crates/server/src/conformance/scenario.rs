//! The scenarios a client selects with `A2A-Simulate`, parsed into a typed override that the
//! endpoint and the service apply where the real condition arises.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use crate::auth::AuthError;
use crate::error::ApiError;
use crate::push::fault::{DeliveryFault, FaultKind, MAX_FORCED_FAILURES};
use crate::service::Simulation;

/// The header that selects a scenario.
pub const SIMULATE_HEADER: &str = "a2a-simulate";
/// The message metadata key that selects a scenario, for clients that cannot set headers.
pub const SIMULATE_METADATA: &str = "simulate";

/// One simulated condition, as the client asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// 401 `-32004`, before authentication.
    Unauthorized,
    /// 401 `-32004` saying the token has expired.
    ExpiredToken,
    /// 403 `-32005`.
    PlanRequired,
    /// 429 `-32003` with this `retryAfter`, where the rate limiter stands.
    RateLimited {
        /// Seconds the client is told to wait.
        retry_after_secs: u64,
    },
    /// 503 `-32603`, as the load shedding answers.
    Overloaded {
        /// Seconds the client is told to wait.
        retry_after_secs: u64,
    },
    /// `-32603`.
    InternalError,
    /// A stored `failed` task.
    SkillFailed,
    /// The real answer, this much later.
    Slow {
        /// The delay asked for, in milliseconds (bounded by configuration).
        ms: u64,
    },
    /// `-32001`.
    TaskNotFound,
    /// The call runs; the connection is closed before the answer is sent.
    Disconnect,
    /// The call runs; the answer's body is cut in half (not JSON).
    MalformedResponse,
    /// A stream's connection is closed after this many events; the task goes on and can be
    /// resubscribed to.
    StreamDropped {
        /// Events sent before the connection is closed.
        events: u64,
    },
    /// A stream's events, each this much after the one before.
    SlowStream {
        /// The pause before each event, in milliseconds (bounded by configuration).
        ms: u64,
    },
    /// The task sends `working` and part of its artifact, then ends `failed`.
    FailMidStream,
    /// The task runs as usual; each of its webhook notifications is POSTed `failures + 1`
    /// times under one idempotency key, the first `failures` counted as failed.
    PushRetried {
        /// Attempts failed on purpose (`n`, 2 by default, at most 5).
        failures: u32,
    },
    /// The task runs as usual; none of its webhook notifications is sent.
    PushUndelivered,
}

/// Events a `stream_dropped` stream sends unless told otherwise.
const DROPPED_AFTER_EVENTS: u64 = 2;
/// The pause between a `slow_stream`'s events unless told otherwise.
const SLOW_STREAM_MS: u64 = 500;

impl Scenario {
    /// The scenario names, for errors, the agent card and the coverage report.
    pub const NAMES: [&'static str; 16] = [
        "unauthorized",
        "expired_token",
        "plan_required",
        "rate_limited;retry_after=N",
        "overloaded;retry_after=N",
        "internal_error",
        "skill_failed",
        "slow;ms=N",
        "task_not_found",
        "disconnect",
        "malformed_response",
        "stream_dropped;events=N",
        "slow_stream;ms=N",
        "fail_mid_stream",
        "push_retried;n=N",
        "push_undelivered",
    ];

    /// The scenario's name without parameters, e.g. `rate_limited`.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Unauthorized => "unauthorized",
            Scenario::ExpiredToken => "expired_token",
            Scenario::PlanRequired => "plan_required",
            Scenario::RateLimited { .. } => "rate_limited",
            Scenario::Overloaded { .. } => "overloaded",
            Scenario::InternalError => "internal_error",
            Scenario::SkillFailed => "skill_failed",
            Scenario::Slow { .. } => "slow",
            Scenario::TaskNotFound => "task_not_found",
            Scenario::Disconnect => "disconnect",
            Scenario::MalformedResponse => "malformed_response",
            Scenario::StreamDropped { .. } => "stream_dropped",
            Scenario::SlowStream { .. } => "slow_stream",
            Scenario::FailMidStream => "fail_mid_stream",
            Scenario::PushRetried { .. } => "push_retried",
            Scenario::PushUndelivered => "push_undelivered",
        }
    }

    /// Every name without parameters, in the order of [`Scenario::NAMES`].
    pub fn bare_names() -> impl Iterator<Item = &'static str> {
        Scenario::NAMES
            .iter()
            .map(|name| name.split(';').next().unwrap_or(name))
    }

    /// The error the endpoint answers with instead of running the call, for the scenarios
    /// that refuse it; built like the real refusal.
    pub fn refusal(self, task_id: Option<String>) -> Option<ApiError> {
        Some(match self {
            Scenario::Unauthorized => ApiError::Unauthorized(AuthError::Invalid(
                "the token is not accepted (simulated: unauthorized)".into(),
            )),
            Scenario::ExpiredToken => ApiError::Unauthorized(AuthError::Invalid(
                "the token has expired (simulated: expired_token)".into(),
            )),
            Scenario::PlanRequired => ApiError::PlanRequired,
            Scenario::Overloaded { retry_after_secs } => ApiError::Overloaded { retry_after_secs },
            Scenario::InternalError => ApiError::Internal("simulated: internal_error".into()),
            Scenario::TaskNotFound => {
                ApiError::TaskNotFound(task_id.unwrap_or_else(|| "simulated".into()))
            }
            Scenario::RateLimited { .. }
            | Scenario::SkillFailed
            | Scenario::Slow { .. }
            | Scenario::Disconnect
            | Scenario::MalformedResponse
            | Scenario::StreamDropped { .. }
            | Scenario::SlowStream { .. }
            | Scenario::FailMidStream => return None,
            Scenario::PushRetried { .. } | Scenario::PushUndelivered => return None,
        })
    }

    /// How long the answer of a call that was charged and ran waits, bounded by `max`.
    pub fn delay(self, max: Duration) -> Option<Duration> {
        match self {
            Scenario::Slow { ms } => Some(Duration::from_millis(ms).min(max)),
            _ => None,
        }
    }

    /// The pause before each event of a stream after its first, bounded by `max`.
    pub fn stream_pause(self, max: Duration) -> Option<Duration> {
        match self {
            Scenario::SlowStream { ms } => Some(Duration::from_millis(ms).min(max)),
            _ => None,
        }
    }

    /// Whether the scenario changes a stream's answer (the layer applies it to an event
    /// stream, and to nothing else).
    pub fn shapes_a_stream(self) -> bool {
        matches!(
            self,
            Scenario::StreamDropped { .. } | Scenario::SlowStream { .. }
        )
    }
}

impl Scenario {
    /// The part of the scenario the service applies, if any; `run` is the client run the
    /// webhook scenarios are reported under.
    pub fn in_service(self, run: &str) -> Option<Simulation> {
        let webhook = |kind| {
            Some(Simulation::Webhook(DeliveryFault {
                kind,
                run: run.to_string(),
            }))
        };
        match self {
            Scenario::RateLimited { retry_after_secs } => {
                Some(Simulation::RateLimited { retry_after_secs })
            }
            Scenario::SkillFailed => Some(Simulation::SkillFailed),
            Scenario::FailMidStream => Some(Simulation::FailMidStream),
            Scenario::PushRetried { failures } => webhook(FaultKind::Retried { failures }),
            Scenario::PushUndelivered => webhook(FaultKind::Undelivered),
            _ => None,
        }
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let mut params = HashMap::new();
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not key=value"))?;
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{}` must be a whole number", key.trim()))?;
            params.insert(key.trim().to_ascii_lowercase(), value);
        }
        let mut retry_after = |default: u64| params.remove("retry_after").unwrap_or(default).max(1);
        let scenario = match name.as_str() {
            "unauthorized" => Scenario::Unauthorized,
            "expired_token" => Scenario::ExpiredToken,
            "plan_required" => Scenario::PlanRequired,
            "rate_limited" => Scenario::RateLimited {
                retry_after_secs: retry_after(30),
            },
            "overloaded" => Scenario::Overloaded {
                retry_after_secs: retry_after(1),
            },
            "internal_error" => Scenario::InternalError,
            "skill_failed" => Scenario::SkillFailed,
            "slow" => Scenario::Slow {
                ms: params.remove("ms").unwrap_or(2_000),
            },
            "task_not_found" => Scenario::TaskNotFound,
            "disconnect" => Scenario::Disconnect,
            "malformed_response" => Scenario::MalformedResponse,
            "stream_dropped" => Scenario::StreamDropped {
                events: params.remove("events").unwrap_or(DROPPED_AFTER_EVENTS),
            },
            "slow_stream" => Scenario::SlowStream {
                ms: params.remove("ms").unwrap_or(SLOW_STREAM_MS),
            },
            "fail_mid_stream" => Scenario::FailMidStream,
            "push_retried" => Scenario::PushRetried {
                failures: params
                    .remove("n")
                    .unwrap_or(2)
                    .min(u64::from(MAX_FORCED_FAILURES)) as u32,
            },
            "push_undelivered" => Scenario::PushUndelivered,
            other => {
                return Err(format!(
                    "unknown scenario `{}`; use one of: {}",
                    truncated(other, 40),
                    Scenario::NAMES.join(", ")
                ));
            }
        };
        if let Some(key) = params.keys().next() {
            return Err(format!(
                "`{}` does not apply to `{name}`",
                truncated(key, 40)
            ));
        }
        Ok(scenario)
    }
}

/// At most `max` characters of `text`, marked with `…` when cut: the kit keeps and echoes no
/// client value whole.
pub fn truncated(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse() {
        assert_eq!("unauthorized".parse(), Ok(Scenario::Unauthorized));
        assert_eq!(
            "rate_limited;retry_after=7".parse(),
            Ok(Scenario::RateLimited {
                retry_after_secs: 7
            })
        );
        assert_eq!(
            "overloaded".parse(),
            Ok(Scenario::Overloaded {
                retry_after_secs: 1
            })
        );
        assert_eq!(" Slow ; ms = 250 ".parse(), Ok(Scenario::Slow { ms: 250 }));
        assert!("slow;ms=soon".parse::<Scenario>().is_err());
        assert!(
            "explode"
                .parse::<Scenario>()
                .unwrap_err()
                .contains("malformed_response")
        );
        assert!("internal_error;ms=3".parse::<Scenario>().is_err());
        assert_eq!(
            "stream_dropped".parse(),
            Ok(Scenario::StreamDropped { events: 2 })
        );
        assert_eq!(
            "stream_dropped;events=5".parse(),
            Ok(Scenario::StreamDropped { events: 5 })
        );
        assert!("stream_dropped;ms=5".parse::<Scenario>().is_err());
        assert_eq!("slow_stream".parse(), Ok(Scenario::SlowStream { ms: 500 }));
        assert_eq!(
            "slow_stream;ms=20".parse(),
            Ok(Scenario::SlowStream { ms: 20 })
        );
        assert_eq!("fail_mid_stream".parse(), Ok(Scenario::FailMidStream));
        assert!("fail_mid_stream;events=1".parse::<Scenario>().is_err());
        assert_eq!(Scenario::bare_names().count(), Scenario::NAMES.len());
    }

    #[test]
    fn webhook_scenarios_parse_with_a_bounded_count() {
        assert_eq!(
            "push_retried".parse(),
            Ok(Scenario::PushRetried { failures: 2 })
        );
        assert_eq!(
            "push_retried;n=0".parse(),
            Ok(Scenario::PushRetried { failures: 0 })
        );
        assert_eq!(
            "push_retried; n=99".parse(),
            Ok(Scenario::PushRetried { failures: 5 })
        );
        assert_eq!("PUSH_UNDELIVERED".parse(), Ok(Scenario::PushUndelivered));
        assert!("push_undelivered;n=1".parse::<Scenario>().is_err());
        assert!("push_retried;n=-1".parse::<Scenario>().is_err());
        assert_eq!(
            Scenario::PushUndelivered.in_service("run-1"),
            Some(Simulation::Webhook(DeliveryFault {
                kind: FaultKind::Undelivered,
                run: "run-1".into()
            }))
        );
    }

    #[test]
    fn slow_is_bounded() {
        let slow: Scenario = "slow;ms=99999".parse().unwrap();
        assert_eq!(
            slow.delay(Duration::from_millis(500)),
            Some(Duration::from_millis(500))
        );
        assert_eq!(Scenario::Disconnect.delay(Duration::from_secs(1)), None);
        let slow_stream: Scenario = "slow_stream;ms=99999".parse().unwrap();
        assert_eq!(
            slow_stream.stream_pause(Duration::from_millis(700)),
            Some(Duration::from_millis(700))
        );
        assert_eq!(slow_stream.delay(Duration::from_secs(1)), None);
        assert_eq!(slow.stream_pause(Duration::from_secs(1)), None);
    }

    #[test]
    fn truncation_keeps_a_prefix() {
        assert_eq!(truncated("abcdef", 3), "abc…");
        assert_eq!(truncated("abc", 3), "abc");
        assert_eq!(truncated("ééé", 2), "éé…");
    }
}
