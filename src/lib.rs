//! rum-native: a burst-proof RUM (Real User Monitoring) event pipeline for HarmonyOS apps, loaded
//! from ArkTS through napi-ohos (and from Node.js on the host, which implements the same Node-API).
//!
//! Three mechanisms keep the UI thread smooth while nothing is lost:
//!
//! 1. **Dispatch queue** ([`core::dispatch`]): events are captured at call time and processed on
//!    the caller's turn until 4 ms of that turn are spent; past that they are queued (bounded) and
//!    processed in 4 ms slices on later turns. Crashes, errors, flush, stop, session queries, user
//!    and consent changes drain the queue first.
//! 2. **View coalescing** ([`core::coalesce`]): during slices each touched view's document is
//!    written once per slice instead of once per action.
//! 3. **Batch writer** ([`core::storage`]): documents are serialized and appended to NDJSON batch
//!    files on a writer thread, in call order, under a disk quota, with crash recovery and an
//!    upload claim/acknowledge protocol.
//!
//! [`core`] is pure Rust and never touches N-API (`cargo test --no-default-features` tests all of
//! it); `napi` (feature `napi`, on by default) is the thin binding.

pub mod core;
pub mod interface;
pub mod log;

#[cfg(feature = "napi")]
mod napi;
