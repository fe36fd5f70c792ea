//! The pipeline without any JavaScript engine: events, scopes, dispatch, coalescing, storage.
//! The host reaches it only through the traits in [`seam`].

pub mod attrs;
pub mod coalesce;
pub mod config;
pub mod context;
pub mod dispatch;
pub mod document;
pub mod event;
pub mod globals;
pub mod handover;
pub mod ids;
pub mod js_enum;
pub mod json_text;
pub mod registry;
pub mod scope;
pub mod seam;
pub mod sequencer;
pub mod stats;
pub mod storage;
pub mod text;
