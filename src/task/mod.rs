//! Tasks beyond `crew::spawn`: the task [`Builder`] (a name, a panic policy, a pool or a set to
//! spawn on), task groups ([`JoinSet`], [`TaskGroup`]), [`AbortHandle`], and a task's identity
//! ([`TaskId`], [`TaskInfo`]: its id, name and spawn location, as the task dump and slow-poll
//! reports show it; [`id()`] and [`try_id`], the running task's id).
//!
//! ```
//! use crew::task::{Builder, JoinSet};
//!
//! crew::block_on(async {
//!     let named = Builder::new().name("answer").spawn(async { 42 });
//!     assert_eq!(named.await, 42);
//!
//!     let set = JoinSet::new();
//!     let abort = set.spawn(std::future::pending::<()>());
//!     abort.abort();
//!     assert!(set.join_next().await.is_none(), "an aborted member is skipped");
//! });
//! ```
//!
//! Invariants: this module is the public face only and holds no machinery but the builder's
//! front: the identity and the spawning code every pool shares are the crate's internal
//! `identity` module, the handles are `join.rs` and `abort.rs`, the sets `join_set/`; no module
//! of crew imports anything through this one but the layers above the handles (`http/`).

mod builder;
mod coop;
mod id;

pub use crate::handle::AbortHandle;
pub use crate::identity::{TaskId, TaskInfo};
pub use crate::join_set::{JoinSet, TaskGroup};
pub use builder::Builder;
pub use coop::{consume_budget, unconstrained, Unconstrained};
pub use id::{id, try_id};
