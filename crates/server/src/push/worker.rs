//! The worker that drains due deliveries: it claims as many as it has room for, delivers them
//! concurrently, and finishes, retries or gives up each. Any replica's worker may deliver any
//! pending notification.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::backoff::retry_delay;
use super::deliver::{Deliverer, Outcome};
use super::queue::{Claimed, DeliveryQueue};
use crate::config::PushSettings;

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
}

impl PushWorker {
    /// Starts a worker on the current runtime; `wake` hurries it when a notification is queued
    /// on this replica.
    pub fn spawn(
        queue: Arc<dyn DeliveryQueue>,
        deliverer: Arc<Deliverer>,
        settings: PushSettings,
        wake: Arc<Notify>,
    ) -> Self {
        let (stop, stopped) = watch::channel(false);
        let context = Arc::new(Context {
            queue,
            deliverer,
            settings,
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
    let mut in_flight = JoinSet::new();
    while !*stopped.borrow() {
        while in_flight.try_join_next().is_some() {}
        let room = slots.available_permits();
        let mut full_batch = false;
        if room > 0 {
            match context.queue.claim(room, lease).await {
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
            Some(_) = in_flight.join_next(), if room == 0 => {}
        }
    }
    while in_flight.join_next().await.is_some() {}
}

async fn deliver(context: &Context, claimed: Claimed) {
    let Claimed { delivery, attempt } = claimed;
    let settings = &context.settings;
    let outcome = context.deliverer.attempt(&delivery).await;
    let result = match outcome {
        Outcome::Delivered(status) => {
            tracing::debug!(notification = %delivery.id, attempt, %status, "push: delivered");
            context.queue.finish(&delivery).await
        }
        Outcome::GiveUp(reason) => {
            tracing::warn!(notification = %delivery.id, attempt, %reason, "push: given up");
            context.queue.finish(&delivery).await
        }
        Outcome::Retry { reason, .. } if attempt >= settings.max_attempts => {
            tracing::warn!(notification = %delivery.id, attempt, %reason, "push: given up after the last attempt");
            context.queue.finish(&delivery).await
        }
        Outcome::Retry {
            reason,
            retry_after,
        } => {
            let delay = retry_delay(
                attempt,
                Duration::from_millis(settings.base_delay_ms),
                Duration::from_millis(settings.max_delay_ms),
                retry_after,
            );
            tracing::info!(notification = %delivery.id, attempt, %reason, retry_in_ms = delay.as_millis() as u64, "push: will retry");
            context.queue.retry_after(&delivery, delay).await
        }
    };
    if let Err(e) = result {
        tracing::warn!(notification = %delivery.id, error = %e, "push: could not record the outcome; the delivery is claimed again when its lease ends");
    }
}
