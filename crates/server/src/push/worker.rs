//! The worker that drains due deliveries: it claims as many as it has room for, each owner and
//! each host within its share in flight, delivers them concurrently, and finishes, retries or
//! gives up each. Any replica's worker may deliver any pending notification. A webhook is
//! logged as [`shown_url`] shows it: its path and query may hold a secret.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::PushError;
use super::backoff::retry_delay;
use super::deliver::{Deliverer, DeliveryOutcome};
use super::fault::{Attempt, FaultLog, FaultTally};
use super::queue::{Claimed, Delivery, DeliveryQueue, InFlightCaps};
use crate::config::PushSettings;
use crate::metrics::Metrics;
use crate::store::Owner;
use skills::shown_url::shown_url;

/// A running worker. [`PushWorker::shutdown`] lets deliveries in flight finish; dropping it
/// stops it at once (the deliveries it held are claimed again when their lease ends).
pub struct PushWorker {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

/// What the worker needs, shared with every delivery it runs.
struct Context {
    queue: Arc<dyn DeliveryQueue>,
    deliverer: Arc<Deliverer>,
    settings: PushSettings,
    fault_log: Option<Arc<dyn FaultLog>>,
    metrics: Option<Arc<Metrics>>,
}

impl PushWorker {
    /// Starts a worker on the current runtime; `wake` hurries it when a notification is queued
    /// on this replica; what happens under the conformance kit's faults is told to
    /// `fault_log`; notifications given up are counted in `metrics`.
    pub fn spawn(
        queue: Arc<dyn DeliveryQueue>,
        deliverer: Arc<Deliverer>,
        settings: PushSettings,
        wake: Arc<Notify>,
        fault_log: Option<Arc<dyn FaultLog>>,
        metrics: Option<Arc<Metrics>>,
    ) -> Self {
        let (stop, stopped) = watch::channel(false);
        let context = Arc::new(Context {
            queue,
            deliverer,
            settings,
            fault_log,
            metrics,
        });
        PushWorker {
            stop,
            task: Some(tokio::spawn(run(context, wake, stopped))),
        }
    }

    /// Stops claiming and waits for the deliveries in flight.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for PushWorker {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn run(context: Arc<Context>, wake: Arc<Notify>, mut stopped: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(context.settings.concurrency));
    let lease = Duration::from_millis(context.settings.claim_lease_ms);
    let poll = Duration::from_millis(context.settings.poll_interval_ms);
    let shares = InFlightCaps {
        per_owner: context.settings.max_in_flight_per_owner as u64,
        per_host: context.settings.max_in_flight_per_host as u64,
    };
    let mut in_flight = JoinSet::new();
    while !*stopped.borrow() {
        while in_flight.try_join_next().is_some() {}
        let room = slots.available_permits();
        let mut full_batch = false;
        if room > 0 {
            match context.queue.claim(room, lease, shares).await {
                Ok(batch) => {
                    full_batch = batch.len() == room;
                    for claimed in batch {
                        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                            return;
                        };
                        let context = Arc::clone(&context);
                        in_flight.spawn(async move {
                            deliver(&context, claimed).await;
                            drop(slot);
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "push: could not claim deliveries"),
            }
        }
        if full_batch {
            continue;
        }
        tokio::select! {
            _ = stopped.changed() => {}
            () = wake.notified() => {}
            () = tokio::time::sleep(poll) => {}
            // A delivery that ends frees a worker, and maybe its owner's or host's share.
            Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
        }
    }
    while in_flight.join_next().await.is_some() {}
}

/// What a fault made of an attempt: its outcome, and the counts to tell the kit.
fn under_fault(
    attempt: Attempt,
    outcome: Option<DeliveryOutcome>,
    last: bool,
) -> (DeliveryOutcome, FaultTally) {
    let mut tally = FaultTally::default();
    let failed = |reason: &str| DeliveryOutcome::Retry {
        reason: reason.to_string(),
        retry_after: None,
    };
    let outcome = match (attempt, outcome) {
        (Attempt::SentAndFailed, _) => {
            tally.posted = 1;
            tally.failed_on_purpose = 1;
            failed("failed on purpose (conformance kit: push_retried)")
        }
        (Attempt::Withheld, _) => {
            tally.failed_on_purpose = 1;
            tally.dropped = u64::from(last);
            failed("not sent on purpose (conformance kit: push_undelivered)")
        }
        (Attempt::Real, outcome) => {
            tally.posted = 1;
            let outcome = outcome.unwrap_or_else(|| failed("not attempted"));
            match &outcome {
                DeliveryOutcome::Delivered(_) => tally.delivered = 1,
                DeliveryOutcome::GiveUp(_) => tally.dropped = 1,
                DeliveryOutcome::Retry { .. } => tally.dropped = u64::from(last),
            }
            outcome
        }
    };
    (outcome, tally)
}

async fn deliver(context: &Context, claimed: Claimed) {
    let Claimed { delivery, attempt } = claimed;
    let settings = &context.settings;
    let last = attempt >= settings.max_attempts;
    let outcome = match &delivery.fault {
        None => context.deliverer.attempt(&delivery).await,
        Some(fault) => {
            let planned = fault.attempt(attempt);
            let sent = match planned {
                Attempt::Withheld => None,
                Attempt::SentAndFailed | Attempt::Real => {
                    Some(context.deliverer.attempt(&delivery).await)
                }
            };
            let (outcome, tally) = under_fault(planned, sent, last);
            record(context, &delivery, tally);
            if let (Attempt::SentAndFailed, DeliveryOutcome::Retry { reason, .. }) =
                (planned, &outcome)
            {
                // Failed on purpose: tried again whatever push.max_attempts says, so that the
                // real attempt comes (the failures are bounded by the scenario).
                if let Err(e) = retry(context, &delivery, attempt, reason, None).await {
                    tracing::warn!(notification = %delivery.id, error = %e, "push: could not record the outcome; the delivery is claimed again when its lease ends");
                }
                return;
            }
            outcome
        }
    };
    let target = shown_url(&delivery.url);
    let result = match outcome {
        DeliveryOutcome::Delivered(status) => {
            tracing::debug!(notification = %delivery.id, %target, attempt, %status, "push: delivered");
            context.queue.finish(&delivery).await
        }
        DeliveryOutcome::GiveUp(reason) => {
            tracing::warn!(notification = %delivery.id, %target, attempt, %reason, "push: given up");
            count_given_up(context);
            context.queue.finish(&delivery).await
        }
        DeliveryOutcome::Retry { reason, .. } if attempt >= settings.max_attempts => {
            tracing::warn!(notification = %delivery.id, %target, attempt, %reason, "push: given up after the last attempt");
            count_given_up(context);
            context.queue.finish(&delivery).await
        }
        DeliveryOutcome::Retry {
            reason,
            retry_after,
        } => retry(context, &delivery, attempt, &reason, retry_after).await,
    };
    if let Err(e) = result {
        tracing::warn!(notification = %delivery.id, error = %e, "push: could not record the outcome; the delivery is claimed again when its lease ends");
    }
}

/// Makes a failed delivery due again after the backoff of its attempt (or the receiver's
/// `Retry-After`, within `push.max_delay_ms`).
async fn retry(
    context: &Context,
    delivery: &Delivery,
    attempt: u32,
    reason: &str,
    retry_after: Option<Duration>,
) -> Result<(), PushError> {
    let settings = &context.settings;
    let delay = retry_delay(
        attempt,
        Duration::from_millis(settings.base_delay_ms),
        Duration::from_millis(settings.max_delay_ms),
        retry_after,
    );
    tracing::info!(notification = %delivery.id, target = %shown_url(&delivery.url), attempt, %reason, retry_in_ms = delay.as_millis() as u64, "push: will retry");
    context.queue.retry_after(delivery, delay).await
}

/// Counts a notification that will never be delivered.
fn count_given_up(context: &Context) {
    if let Some(metrics) = &context.metrics {
        metrics.push_undelivered("given_up", 1);
    }
}

/// Tells the kit what a fault made of an attempt.
fn record(context: &Context, delivery: &Delivery, tally: FaultTally) {
    if let (Some(log), Some(fault)) = (&context.fault_log, &delivery.fault) {
        tracing::info!(notification = %delivery.id, scenario = fault.kind.scenario(), "push: simulated by the conformance kit");
        log.record(&Owner::from_hash(&delivery.owner), fault, tally);
    }
}
