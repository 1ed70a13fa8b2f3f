//! Webhook failures made on purpose, for the conformance kit: a task's notifications failed a
//! given number of times before the real attempt (`push_retried`), or never sent at all
//! (`push_undelivered`), so that a client author can see how their receiver and client cope.
//! The fault is kept with the task's configs and copied into each of its notifications; what
//! each attempt came to is told to a [`FaultLog`] (the kit's report).

use serde::{Deserialize, Serialize};

use crate::store::Owner;

/// The most failures `push_retried` may ask for: each is a real POST, so the count is bounded.
pub const MAX_FORCED_FAILURES: u32 = 5;

/// What is done to every notification of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Each notification is POSTed `failures + 1` times under one idempotency key; the first
    /// `failures` attempts count as failed whatever the receiver answers.
    Retried {
        /// Attempts failed on purpose, at most [`MAX_FORCED_FAILURES`].
        failures: u32,
    },
    /// No notification is sent: every attempt counts as failed, until the last one allowed.
    Undelivered,
}

impl FaultKind {
    /// The kit's scenario name.
    pub fn scenario(self) -> &'static str {
        match self {
            FaultKind::Retried { .. } => "push_retried",
            FaultKind::Undelivered => "push_undelivered",
        }
    }
}

/// A fault and the kit's run that asked for it (truncated), whose report tells what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryFault {
    /// What is done.
    pub kind: FaultKind,
    /// The run (`A2A-Client-Run`) the report counts it under.
    pub run: String,
}

/// What the fault does to one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Sent, and failed whatever the answer.
    SentAndFailed,
    /// Not sent, and failed.
    Withheld,
    /// Sent and judged by the answer, as without a fault.
    Real,
}

impl DeliveryFault {
    /// What the fault does to attempt number `attempt` (from 1).
    pub fn attempt(&self, attempt: u32) -> Attempt {
        match self.kind {
            FaultKind::Retried { failures } if attempt <= failures => Attempt::SentAndFailed,
            FaultKind::Retried { .. } => Attempt::Real,
            FaultKind::Undelivered => Attempt::Withheld,
        }
    }
}

/// Counts of what happened to a task's notifications under a fault; added up per run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultTally {
    /// Attempts sent to the receiver.
    pub posted: u64,
    /// Attempts counted as failed because of the fault (sent or not).
    pub failed_on_purpose: u64,
    /// Notifications delivered in the end.
    pub delivered: u64,
    /// Notifications given up.
    pub dropped: u64,
}

/// Where what happened under a fault is told: the conformance kit's report.
pub trait FaultLog: Send + Sync {
    /// Adds `tally` to the run `fault.run` of `owner`.
    fn record(&self, owner: &Owner, fault: &DeliveryFault, tally: FaultTally);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retried_fails_the_first_attempts_and_undelivered_withholds_all() {
        let retried = DeliveryFault {
            kind: FaultKind::Retried { failures: 2 },
            run: "r".into(),
        };
        assert_eq!(retried.attempt(1), Attempt::SentAndFailed);
        assert_eq!(retried.attempt(2), Attempt::SentAndFailed);
        assert_eq!(retried.attempt(3), Attempt::Real);
        let undelivered = DeliveryFault {
            kind: FaultKind::Undelivered,
            run: "r".into(),
        };
        assert_eq!(undelivered.attempt(9), Attempt::Withheld);
    }
}
