//! When to try a failed delivery again: exponential backoff with jitter, so receivers that come
//! back after an outage are not hit by every waiting notification at the same moment.

use std::time::Duration;

use rand::Rng;

/// The delay before attempt `attempt + 1`, after attempt `attempt` (from 1) failed: half of
/// `base · 2^(attempt-1)` (capped at `max`) plus a random part up to the other half. A
/// receiver's `Retry-After` is honoured up to `max`.
pub fn retry_delay(
    attempt: u32,
    base: Duration,
    max: Duration,
    retry_after: Option<Duration>,
) -> Duration {
    let exponent = attempt.saturating_sub(1).min(32);
    let ceiling = base.saturating_mul(1u32 << exponent.min(31)).min(max);
    let half = ceiling / 2;
    let jitter = rand::rng().random_range(0..=half.as_millis() as u64);
    let delay = half + Duration::from_millis(jitter);
    match retry_after {
        Some(asked) => delay.max(asked.min(max)),
        None => delay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_stay_within_bounds_and_vary() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(2);
        for attempt in 1..40 {
            let ceiling = (base * 2u32.saturating_pow(attempt - 1).min(1 << 20)).min(max);
            let delay = retry_delay(attempt, base, max, None);
            assert!(
                delay >= ceiling / 2 && delay <= ceiling,
                "{attempt}: {delay:?}"
            );
        }
        let samples: std::collections::HashSet<_> =
            (0..50).map(|_| retry_delay(5, base, max, None)).collect();
        assert!(samples.len() > 1, "jitter varies the delay");
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_maximum() {
        let base = Duration::from_millis(10);
        let max = Duration::from_secs(5);
        let asked = retry_delay(1, base, max, Some(Duration::from_secs(3)));
        assert_eq!(asked, Duration::from_secs(3));
        let capped = retry_delay(1, base, max, Some(Duration::from_secs(3600)));
        assert_eq!(capped, max);
    }
}
