//! The sealed batches by id, with the number of them an uploader can still claim kept as they
//! change (the `batchesPending` gauge, read without the store's lock by `pendingBatches()`):
//! every change of an entry goes through [`Entries::update`], so the count cannot drift.

use std::collections::btree_map::{BTreeMap, Iter};

use super::Entry;
use crate::core::storage::names::FileId;

#[derive(Default)]
pub(crate) struct Entries {
    map: BTreeMap<FileId, Entry>,
    /// Entries that are [`Entry::claimable`].
    claimable: usize,
}

impl Entries {
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn contains_key(&self, id: &FileId) -> bool {
        self.map.contains_key(id)
    }

    pub fn get(&self, id: &FileId) -> Option<&Entry> {
        self.map.get(id)
    }

    /// Oldest first.
    pub fn iter(&self) -> Iter<'_, FileId, Entry> {
        self.map.iter()
    }

    pub fn insert(&mut self, id: FileId, entry: Entry) {
        self.claimable += usize::from(entry.claimable());
        if let Some(old) = self.map.insert(id, entry) {
            self.claimable -= usize::from(old.claimable());
        }
    }

    pub fn remove(&mut self, id: &FileId) -> Option<Entry> {
        let old = self.map.remove(id)?;
        self.claimable -= usize::from(old.claimable());
        Some(old)
    }

    /// Changes the entry `id`, if there is one. True if there was.
    pub fn update(&mut self, id: &FileId, f: impl FnOnce(&mut Entry)) -> bool {
        let Some(entry) = self.map.get_mut(id) else { return false };
        let was = entry.claimable();
        f(entry);
        self.claimable = self.claimable - usize::from(was) + usize::from(entry.claimable());
        true
    }

    /// Sealed batches not claimed and still to be uploaded, unchecked ones found at open included.
    pub fn claimable(&self) -> usize {
        debug_assert_eq!(self.claimable, self.map.values().filter(|e| e.claimable()).count());
        self.claimable
    }
}
