//! What every document carries from the calls before it: the global attributes (under their
//! budget), the user, the connectivity and the tracking consent in force.

use std::sync::Arc;

use serde_json::Value;

use crate::core::config::TrackingConsent;
use crate::core::context::Connectivity;
use crate::core::event::{Attributes, UserInfo};
use crate::core::globals::{GlobalBudget, OverBudget};
use crate::core::stats::DispatchCounters;

pub(super) struct Carried {
    pub(super) global: Arc<Attributes>,
    /// What `global` adds to every document, and its cap. The binding refuses an `addAttribute`
    /// past the cap at its call, in call order; across threads the calls are applied in another
    /// order, so the cap is held here too.
    budget: GlobalBudget,
    pub(super) user: Option<Arc<UserInfo>>,
    pub(super) connectivity: Option<Arc<Connectivity>>,
    pub(super) consent: TrackingConsent,
}

impl Carried {
    pub(super) fn new(consent: TrackingConsent) -> Self {
        Self {
            global: Arc::new(Attributes::new()),
            budget: GlobalBudget::new(u64::MAX),
            user: None,
            connectivity: None,
            consent,
        }
    }

    pub(super) fn set_global_budget(&mut self, max_bytes: u64) {
        self.budget = GlobalBudget::new(max_bytes);
    }

    pub(super) fn add_attribute(&mut self, key: String, value: Value, counters: &DispatchCounters) {
        if let Err(OverBudget { total, max }) = self.budget.reserve(&key, &value) {
            // Only when calls from several threads were applied in another order than they were
            // made (one thread's are refused at the call).
            counters.attributes_refused.incr();
            crate::log::warn(&format!(
                "addAttribute({key:?}) not applied: the global attributes would take {total} bytes of every \
                 document, more than {max}"
            ));
            return;
        }
        // Copy-on-write: documents already built keep the map of their call.
        Arc::make_mut(&mut self.global).insert(key, value);
    }

    pub(super) fn remove_attribute(&mut self, key: &str) {
        self.budget.release(key);
        if self.global.contains_key(key) {
            Arc::make_mut(&mut self.global).remove(key);
        }
    }
}
