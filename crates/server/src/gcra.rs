//! One call's charge to a user's rate-limit bucket in Redis, as the GCRA script
//! (`migrations/scripts/gcra.lua`) takes it and answers it. The shared limiter applies a charge
//! with a script of its own; a task store on the same Redis may apply it in the script that
//! saves the call's task, so that a new message of a cheap skill costs one round trip to Redis
//! instead of three. A leaf: the limiter and the store both speak it, neither through the other.

use std::time::Duration;

/// The charge of one call: which bucket, and the GCRA's parameters for the bucket's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketCharge {
    /// The bucket's key, under the owner's hash tag like every other key of the owner, so that
    /// one script may charge it and save the owner's task (one Redis Cluster slot).
    pub key: String,
    /// The emission interval (a minute over the limit), in picoseconds: the time one call
    /// frees up. Picoseconds keep it exact (and above zero) for every limit a `u32` holds, where
    /// microseconds round it to zero above 60,000,000 calls a minute.
    pub interval_ps: u64,
    /// Calls per minute, which is also the burst.
    pub limit: u32,
}

impl BucketCharge {
    /// The charge of one call to the bucket `key` of `limit` calls per minute (at least one).
    pub fn new(key: String, limit: u32) -> Self {
        BucketCharge {
            key,
            interval_ps: PICOS_PER_MINUTE / u64::from(limit.max(1)),
            limit,
        }
    }

    /// The time one call frees up.
    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ps / 1000)
    }
}

/// A minute, in picoseconds.
const PICOS_PER_MINUTE: u64 = 60_000_000_000_000;

/// What the GCRA script answered for one charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraReply {
    /// The call was charged (a refusal changes nothing).
    pub allowed: bool,
    /// Calls left in the burst.
    pub remaining: u32,
    /// Time until one call will be allowed (refusals).
    pub retry_after: Duration,
    /// Time until the bucket is full again.
    pub reset_after: Duration,
    /// Calls charged: one, or up to a lease's size (0 for a refusal).
    pub charged: u32,
}

impl GcraReply {
    /// The script's `{allowed, remaining, retry_after_us, reset_after_us, charged}`; `None` for
    /// a reply of another shape. Out-of-range numbers are clamped, never wrapped.
    pub fn parse(values: &[i64]) -> Option<Self> {
        let &[allowed, remaining, retry_after_us, reset_after_us, charged] = values else {
            return None;
        };
        Some(GcraReply {
            allowed: allowed == 1,
            remaining: u32::try_from(remaining).unwrap_or(0),
            retry_after: micros(retry_after_us),
            reset_after: micros(reset_after_us),
            charged: u32::try_from(charged).unwrap_or(0),
        })
    }
}

fn micros(value: i64) -> Duration {
    Duration::from_micros(u64::try_from(value).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_spreads_a_minute_over_its_limit() {
        let charge = BucketCharge::new("k".into(), 15);
        assert_eq!(charge.interval(), Duration::from_secs(4));
        assert_eq!(
            BucketCharge::new("k".into(), 0).interval_ps,
            PICOS_PER_MINUTE
        );
        let largest = BucketCharge::new("k".into(), u32::MAX);
        assert_eq!(largest.interval_ps, 13_969);
        assert!(
            u64::from(largest.limit) * largest.interval_ps < 1 << 53,
            "the script's numbers stay exact in a double"
        );
        assert_eq!(
            BucketCharge::new("k".into(), 100_000_000).interval(),
            Duration::from_nanos(600)
        );
    }

    #[test]
    fn replies_parse_and_never_wrap() {
        assert_eq!(
            GcraReply::parse(&[1, 13, 0, 8_000_000, 1]),
            Some(GcraReply {
                allowed: true,
                remaining: 13,
                retry_after: Duration::ZERO,
                reset_after: Duration::from_secs(8),
                charged: 1,
            })
        );
        assert_eq!(
            GcraReply::parse(&[0, 0, 2_500_000, 60_000_000, 0]).map(|r| (r.allowed, r.retry_after)),
            Some((false, Duration::from_millis(2500)))
        );
        assert_eq!(GcraReply::parse(&[1, 13, 0, 8_000_000]), None);
        assert_eq!(
            GcraReply::parse(&[1, -1, -5, -5, -1]).map(|r| (r.remaining, r.reset_after, r.charged)),
            Some((0, Duration::ZERO, 0))
        );
    }
}
