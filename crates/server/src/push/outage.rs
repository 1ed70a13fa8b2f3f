//! Riding out a short Redis outage: what a state change needs of Redis (its task's configs, the
//! queue's write) is tried again for up to three seconds before the notification is given up,
//! so that a Redis restart or failover loses none. The transition is already recorded when its
//! notifications are queued, and whoever caused it (a runner, a cancel, a reaper, another
//! replica) cannot take it back, so trying again is the one way not to lose them. Only Redis
//! errors are tried again: a cap reached is final.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::PushError;

/// Pauses between attempts, in milliseconds.
const PAUSES_MS: [u64; 6] = [50, 100, 200, 400, 800, 1_200];
/// No attempt starts later than this after the first: attempts that each wait for Redis'
/// timeout do not hold the task's next step for long.
const WINDOW: Duration = Duration::from_secs(3);

/// `operation`, tried again after each pause of [`PAUSES_MS`] while Redis does not answer,
/// within [`WINDOW`].
pub(crate) async fn through_outage<T, Attempt>(
    what: &str,
    mut operation: impl FnMut() -> Attempt,
) -> Result<T, PushError>
where
    Attempt: Future<Output = Result<T, PushError>>,
{
    let started = Instant::now();
    for pause in PAUSES_MS.map(Duration::from_millis) {
        match operation().await {
            Err(PushError::Redis(error)) if started.elapsed() + pause <= WINDOW => {
                tracing::debug!(%error, what, retry_in_ms = pause.as_millis() as u64, "push: Redis did not answer");
                tokio::time::sleep(pause).await;
            }
            done => return done,
        }
    }
    operation().await
}
