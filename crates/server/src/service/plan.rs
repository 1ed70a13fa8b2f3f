//! What a caller's plan gives it (the facts the authenticated extended card shows), read as a
//! charged read: the card costs what `tasks/get` costs, from the same per-user `read` bucket,
//! so it is no way around the limits.

use skills::Bucket;

use crate::auth::{Plan, Principal};
use crate::config::LimitSettings;
use crate::error::ApiError;
use crate::limits::Decision;

use super::A2aService;

/// One rate-limit bucket of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketFacts {
    /// The bucket.
    pub bucket: Bucket,
    /// Its calls per minute (also its burst); 0 closes it.
    pub per_minute: u32,
    /// The skills drawing on it.
    pub skills: Vec<&'static str>,
}

/// What the caller's plan gives it, now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFacts {
    /// The caller's plan.
    pub plan: Plan,
    /// Whether rate limits apply on this deployment.
    pub limits_apply: bool,
    /// The plan's buckets (none when limits do not apply).
    pub buckets: Vec<BucketFacts>,
    /// The skills the plan may call: those of an open bucket (all when limits do not apply).
    pub skills: Vec<&'static str>,
    /// Calls left in the `read` bucket after this read, when a limiter decided it.
    pub read_remaining: Option<u32>,
}

/// The facts, and the charge of reading them (for the `RateLimit` headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRead {
    /// What the plan gives.
    pub facts: PlanFacts,
    /// The limiter's decision on the read, in the `read` bucket.
    pub decision: Decision,
}

impl A2aService {
    /// The caller's plan as the extended card shows it, charged to the `read` bucket.
    pub async fn plan_facts(&self, principal: &Principal) -> Result<PlanRead, ApiError> {
        let decision = self.charge(principal, Bucket::Read).await?;
        let skills: Vec<(&'static str, Bucket)> = self
            .skills
            .iter()
            .map(|skill| (skill.info().id, skill.info().bucket))
            .collect();
        let limits = self.plan_limits.as_ref();
        let buckets = limits
            .and_then(|limits: &LimitSettings| limits.buckets_for(principal.plan))
            .map(|buckets| {
                buckets
                    .into_iter()
                    .map(|(bucket, per_minute)| BucketFacts {
                        bucket,
                        per_minute,
                        skills: skills
                            .iter()
                            .filter(|(_, of)| *of == bucket)
                            .map(|(id, _)| *id)
                            .collect(),
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let callable = skills
            .iter()
            .filter(|(_, bucket)| {
                limits.is_none()
                    || buckets
                        .iter()
                        .any(|facts| facts.bucket == *bucket && facts.per_minute > 0)
            })
            .map(|(id, _)| *id)
            .collect();
        let read_remaining = match decision {
            Decision::Allowed { remaining, .. } => Some(remaining),
            _ => None,
        };
        Ok(PlanRead {
            facts: PlanFacts {
                plan: principal.plan,
                limits_apply: limits.is_some(),
                buckets,
                skills: callable,
                read_remaining,
            },
            decision,
        })
    }
}
