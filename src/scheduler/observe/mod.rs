//! What a pool shows of itself: its task dump (`dump.rs`) and its counters read into a `Metrics`
//! snapshot (`snapshot.rs`).

pub(in crate::scheduler) mod dump;
pub(in crate::scheduler) mod snapshot;
