//! Prometheus metrics of one server instance (no global registry, so tests can run several
//! servers in one process). A leaf: callers pass `'static` labels (the method table names a
//! call's method, `other` outside it), so labels are bounded and none ever carries a user id.

use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    outcome: &'static str,
    binding: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: &'static str,
    binding: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    plan: &'static str,
    bucket: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailModeLabels {
    fail_mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UndeliveredLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabels {
    skill: &'static str,
    state: &'static str,
}

/// The server's counters and histograms.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<MethodLabels, Histogram>,
    rate_limited: Family<LimitLabels, Counter>,
    limiter_errors: Family<FailModeLabels, Counter>,
    tasks: Family<TaskLabels, Counter>,
    push_undelivered: Family<UndeliveredLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric registered.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("a2a");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<MethodLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0001, 2.0, 18))
        });
        let rate_limited = Family::<LimitLabels, Counter>::default();
        let limiter_errors = Family::<FailModeLabels, Counter>::default();
        let tasks = Family::<TaskLabels, Counter>::default();
        let push_undelivered = Family::<UndeliveredLabels, Counter>::default();
        registry.register(
            "rpc_requests",
            "A2A calls by method, outcome and binding (jsonrpc, http+json)",
            requests.clone(),
        );
        registry.register(
            "rpc_request_duration_seconds",
            "A2A call latency by method and binding",
            latency.clone(),
        );
        registry.register(
            "rate_limit_rejections",
            "message/send calls refused by the rate limiter",
            rate_limited.clone(),
        );
        registry.register(
            "rate_limit_backend_errors",
            "rate-limit checks Redis could not answer, by the fail mode applied",
            limiter_errors.clone(),
        );
        registry.register(
            "tasks",
            "tasks produced by skill and final state",
            tasks.clone(),
        );
        registry.register(
            "push_undelivered",
            "push notifications that will never be delivered, by reason: given_up (the receiver refused, or every attempt failed), queue_full (a pending cap), too_large, not_queued (the queue could not be written)",
            push_undelivered.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
            latency,
            rate_limited,
            limiter_errors,
            tasks,
            push_undelivered,
        }
    }

    /// Counts one call and its latency; `method` is the method table's label, `binding` the
    /// binding's (`jsonrpc`, `http+json`, `grpc`), so a call and its twins on the other bindings share a method
    /// label and are told apart by their binding.
    pub fn request(
        &self,
        binding: &'static str,
        method: &'static str,
        outcome: &'static str,
        elapsed: Duration,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                method,
                outcome,
                binding,
            })
            .inc();
        self.latency
            .get_or_create(&MethodLabels { method, binding })
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one rate-limit rejection.
    pub fn rate_limited(&self, plan: &'static str, bucket: &'static str) {
        self.rate_limited
            .get_or_create(&LimitLabels { plan, bucket })
            .inc();
    }

    /// Counts one limiter check Redis could not answer.
    pub fn limiter_backend_error(&self, fail_mode: &'static str) {
        self.limiter_errors
            .get_or_create(&FailModeLabels { fail_mode })
            .inc();
    }

    /// Counts one finished task.
    pub fn task(&self, skill: &'static str, state: &'static str) {
        self.tasks.get_or_create(&TaskLabels { skill, state }).inc();
    }

    /// Counts `count` push notifications that will never be delivered, for `reason`.
    pub fn push_undelivered(&self, reason: &'static str, count: u64) {
        self.push_undelivered
            .get_or_create(&UndeliveredLabels { reason })
            .inc_by(count);
    }

    /// The text exposition (OpenMetrics, which Prometheus scrapes).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = match self.registry.lock() {
            Ok(registry) => registry,
            Err(poisoned) => poisoned.into_inner(),
        };
        if encode(&mut out, &registry).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_with_bounded_labels() {
        let m = Metrics::new();
        m.request("jsonrpc", "tasks/get", "ok", Duration::from_millis(2));
        m.request(
            "jsonrpc",
            "other",
            "METHOD_NOT_FOUND",
            Duration::from_millis(1),
        );
        m.rate_limited("pro", "default");
        let text = m.render();
        assert!(
            text.contains(
                r#"a2a_rpc_requests_total{method="tasks/get",outcome="ok",binding="jsonrpc"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"method="other""#));
        assert!(text.contains(r#"a2a_rate_limit_rejections_total{plan="pro",bucket="default"} 1"#));
    }
}
