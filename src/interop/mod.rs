//! crew behind the ecosystem's executor-agnostic interfaces. Each lives behind a feature of its
//! own, so that `cargo add crew` builds none of their crates:
//!
//! - `futures`: `futures::task::Spawn` for [`Pool`](crate::Pool) and
//!   [`Spawner`](crate::Spawner) (`futures.rs`), so that `SpawnExt::spawn` and
//!   `spawn_with_handle` work on crew.
//! - `hyper`: hyper 1.x's `rt::Executor`, `rt::Timer`, `rt::Read` and `rt::Write`
//!   (`hyper.rs`, public as `crew::hyper`).
//! - `tokio`: a tokio runtime context on every thread that polls crew tasks, so that tokio's
//!   crates run inside them (`tokio_context.rs` at the crate root, which the scheduler's
//!   threads enter; [`Builder::tokio_handle`](crate::Builder::tokio_handle)).
//!
//! Invariants:
//! - An implementation spawns through crew's own spawn paths only: the task gets an id, a
//!   spawn location (the library's call site) and the panic policy a user of the interface
//!   expects, and nothing here keeps a second copy of any pool state.

#[cfg(feature = "futures")]
mod futures;
#[cfg(feature = "hyper")]
pub mod hyper;
