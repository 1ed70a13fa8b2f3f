//! The call pipeline every binding runs: the checks of one call as small steps that each
//! return `Result`, in their one order (docs/architecture.md). A binding parses its request
//! (envelope, ids, params) and calls the steps in turn; the first refusal is the answer, which
//! the binding renders in its own terms. The steps are here; a binding adds only its framing.
//!
//! The order: the conformance kit's staged `unauthorized` ([`kit`]), the token and the plan
//! (headers only, before any body is read), the user's in-flight slot, then — once the binding
//! has read and framed the body — the kit's other refusals, the call itself ([`call::serve`]),
//! and last the kit's `slow` delay of an answer the call earned.

pub(crate) mod call;
pub(crate) mod kit;

use std::sync::Arc;

use crate::auth::{Authenticator, Principal};
use crate::edge::guard::BudgetSpent;
use crate::error::ApiError;
use crate::limits::user_slots::{UserSlot, UserSlots};
use crate::service::A2aService;

use call::Capabilities;
use kit::KitHook;

/// What the steps share: the service they lead to and the parts that check a call on the way.
pub(crate) struct Pipeline {
    /// The methods.
    pub(crate) service: A2aService,
    /// Token verification (shared with the conformance kit's routes).
    pub(crate) authenticator: Arc<Authenticator>,
    /// Each user's calls running at once, capped (`server.max_in_flight_per_user`).
    pub(crate) user_slots: UserSlots,
    /// The optional methods this deployment serves.
    pub(crate) capabilities: Capabilities,
    /// The conformance kit, when it is on.
    pub(crate) kit: KitHook,
}

impl Pipeline {
    /// The token, from the request's credentials alone. A caller whose address spent its
    /// budget of failed tokens is refused as rate-limited rather than unauthorized.
    pub(crate) async fn authenticate(
        &self,
        authorization: Option<&[u8]>,
        budget_spent: Option<BudgetSpent>,
    ) -> Result<Principal, ApiError> {
        self.authenticator
            .authenticate(authorization)
            .await
            .map_err(|error| match budget_spent {
                Some(spent) => ApiError::RateLimited {
                    retry_after_secs: spent.retry_after_secs,
                    bucket: "unauthenticated",
                    limit: Some(spent.per_minute),
                },
                None => ApiError::Unauthorized(error),
            })
    }

    /// The plan: only plans that include the A2A endpoint pass.
    pub(crate) fn plan(principal: &Principal) -> Result<(), ApiError> {
        if principal.plan.allows_a2a() {
            Ok(())
        } else {
            Err(ApiError::PlanRequired)
        }
    }

    /// One of the user's in-flight slots, held until the answer is made: a user trickling
    /// bodies or sleeping in `slow` holds at most its share of the server's slots.
    pub(crate) fn slot(&self, principal: &Principal) -> Result<UserSlot<'_>, ApiError> {
        self.user_slots
            .try_hold(&principal.owner)
            .ok_or_else(|| ApiError::RateLimited {
                retry_after_secs: 1,
                bucket: "in_flight",
                limit: Some(self.user_slots.cap()),
            })
    }
}
