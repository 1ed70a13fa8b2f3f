//! The kit's side of the webhook scenarios: what each notification attempt came to under
//! `push_retried` or `push_undelivered` is added to the report of the run that asked for it.

use super::Kit;
use crate::push::fault::{DeliveryFault, FaultLog, FaultTally};
use crate::store::Owner;

impl FaultLog for Kit {
    fn record(&self, owner: &Owner, fault: &DeliveryFault, tally: FaultTally) {
        self.recorder()
            .webhook(owner, &fault.run, fault.kind.scenario(), tally);
    }
}
