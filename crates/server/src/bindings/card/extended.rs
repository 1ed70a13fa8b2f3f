//! The authenticated extended card (`agent/getAuthenticatedExtendedCard` on 0.3,
//! `GetExtendedAgentCard` on 1.0 and `GET /extendedAgentCard`): the agent's card with what the
//! caller's plan gives it, as one more entry of `capabilities.extensions` (A2A cards have no
//! field for a caller's limits): the plan, the calls per minute of each rate-limit bucket and
//! the skills drawing on it, the skills the plan may call, and the calls left now in the `read`
//! bucket, which reading the card draws on.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{ServedCards, strict_v1};
use crate::service::PlanFacts;
use crate::wire::Version;

/// The URI of the extended card's extension describing the caller's plan.
pub const PLAN_EXTENSION: &str = "https://magisterium-a2a.invalid/extensions/plan/v1";

impl ServedCards {
    /// The extended card in the form of `version` (0.3: the superset card; 1.0: the strict
    /// card), with the plan's extension, signed as the public card is.
    pub(crate) fn extended(
        &self,
        version: Version,
        facts: &PlanFacts,
    ) -> Result<Bytes, serde_json::Error> {
        let mut card = self.card.clone();
        card.capabilities.extensions.push(plan_extension(facts));
        let mut value = match version {
            Version::V03 => serde_json::to_value(&card)?,
            Version::V1 => strict_v1(&card),
        };
        if let Some(signer) = &self.signer {
            signer.sign(&mut value)?;
        }
        serde_json::to_vec(&value).map(Bytes::from)
    }
}

/// The plan's extension entry.
fn plan_extension(facts: &PlanFacts) -> Value {
    let buckets: Map<String, Value> = facts
        .buckets
        .iter()
        .map(|bucket| {
            (
                bucket.bucket.as_str().to_string(),
                json!({"perMinute": bucket.per_minute, "skills": bucket.skills}),
            )
        })
        .collect();
    let mut remaining = Map::new();
    if let Some(left) = facts.read_remaining {
        remaining.insert("read".into(), left.into());
    }
    json!({
        "uri": PLAN_EXTENSION,
        "description": "What the caller's plan gives on this agent: `plan`; `limitsApply` (false: no rate limit applies); `buckets`, each rate-limit bucket's calls per minute (`perMinute`, a burst of as many) and the skills drawing on it (reads of tasks and of this card draw on `read`); `skills`, the skills the plan may call; `remaining`, the calls left now in a bucket (`read`, after this read). Every charged call's own figures are in its RateLimit headers.",
        "required": false,
        "params": {
            "plan": facts.plan.as_str(),
            "limitsApply": facts.limits_apply,
            "buckets": buckets,
            "skills": facts.skills,
            "remaining": remaining,
        },
    })
}
