//! The global attributes' budget: what `addAttribute`'s attributes add to every document, capped
//! at [`GLOBAL_ATTRIBUTES_SHARE`](super::config::GLOBAL_ATTRIBUTES_SHARE) of `eventMaxBytes` so
//! that they never crowd out an event's own content. Two ledgers of this one type keep it: the
//! sequencer's refuses a call at the call, in call order (the caller gets the error); the scopes'
//! holds it again where calls from several threads are applied in another order.

use std::collections::HashMap;

use serde_json::Value;

use super::config::global_attribute_bytes;

/// Bytes each global attribute adds to every document (`"key":value,`), and their total.
#[derive(Debug)]
pub struct GlobalBudget {
    by_key: HashMap<String, u64>,
    total: u64,
    max: u64,
}

/// An attribute the budget cannot take: the total it would make, and the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub total: u64,
    pub max: u64,
}

impl GlobalBudget {
    pub fn new(max_bytes: u64) -> Self {
        Self { by_key: HashMap::new(), total: 0, max: max_bytes }
    }

    /// Takes the bytes of `key` set to `value` (what the key had before is given back), or, when
    /// the total would pass the budget, changes nothing.
    pub fn reserve(&mut self, key: &str, value: &Value) -> Result<(), OverBudget> {
        let bytes = global_attribute_bytes(key, value);
        let before = self.by_key.get(key).copied().unwrap_or(0);
        let total = self.total - before + bytes;
        if total > self.max {
            return Err(OverBudget { total, max: self.max });
        }
        self.by_key.insert(key.to_owned(), bytes);
        self.total = total;
        Ok(())
    }

    /// Gives the key's share back.
    pub fn release(&mut self, key: &str) {
        if let Some(bytes) = self.by_key.remove(key) {
            self.total -= bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_set_again_is_charged_its_new_size_only_and_an_overflow_changes_nothing() {
        let one = global_attribute_bytes("k", &json!("abc"));
        let mut budget = GlobalBudget::new(2 * one);
        budget.reserve("k", &json!("abc")).unwrap();
        budget.reserve("k", &json!("xyz")).unwrap(); // same size, replaces
        budget.reserve("j", &json!("abc")).unwrap();
        let over = budget.reserve("i", &json!("abc")).unwrap_err();
        assert_eq!(over, OverBudget { total: 3 * one, max: 2 * one });
        budget.release("k");
        budget.reserve("i", &json!("abc")).unwrap();
        budget.release("absent");
        assert_eq!(budget.total, 2 * one);
    }
}
