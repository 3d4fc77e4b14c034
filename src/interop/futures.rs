//! `futures::task::Spawn` (futures-task's trait, which `futures` re-exports) for
//! [`Pool`] and [`Spawner`]: libraries written against `Spawn`/`SpawnExt` accept crew.
//!
//! Invariants:
//! - `spawn_obj` spawns the future detached with the `Ignore` policy: `Spawn` has no handle
//!   to report a panic to, so a panic is reported by the panic hook and swallowed, and never
//!   kills a worker (`SpawnExt::spawn_with_handle` wraps the future and carries its output, or
//!   its panic, back itself).
//! - `spawn_obj` and `status` fail with `SpawnError::shutdown()` exactly when the pool is
//!   shutting down (only a private pool's [`Spawner`] can outlive its pool); a future handed
//!   to a pool that begins to shut down right after is dropped by the shutdown, as any task.

use futures_task::{FutureObj, Spawn, SpawnError};

use crate::pool::Pool;
use crate::spawner::Spawner;
use crate::Ignore;

impl Spawn for Spawner {
    /// Spawns `future` detached on this spawner's pool. A panic in it is reported by the panic
    /// hook and swallowed ([`Ignore`]).
    ///
    /// # Errors
    ///
    /// `SpawnError::shutdown()` if the pool is shutting down (see [`Spawner::is_shut_down`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::task::SpawnExt;
    ///
    /// let spawner = crew::Spawner::global();
    /// let handle = spawner.spawn_with_handle(async { 6 * 7 }).unwrap();
    /// assert_eq!(crew::block_on(handle), 42);
    /// ```
    #[track_caller]
    fn spawn_obj(&self, future: FutureObj<'static, ()>) -> Result<(), SpawnError> {
        self.status()?;
        self.spawn_with(Ignore, future).detach();
        Ok(())
    }

    /// `Err(SpawnError::shutdown())` once the pool is shutting down; `Ok(())` before.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::task::Spawn;
    ///
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let spawner = pool.spawner();
    /// assert!(spawner.status().is_ok());
    /// drop(pool);
    /// assert!(spawner.status().unwrap_err().is_shutdown());
    /// ```
    fn status(&self) -> Result<(), SpawnError> {
        if self.is_shut_down() {
            Err(SpawnError::shutdown())
        } else {
            Ok(())
        }
    }
}

impl Spawn for Pool {
    /// Spawns `future` detached on this pool. A panic in it is reported by the panic hook and
    /// swallowed ([`Ignore`]). Never fails: a `Pool` that can be borrowed is not shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::task::SpawnExt;
    ///
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.spawn_with_handle(async { "on the pool" }).unwrap();
    /// assert_eq!(crew::block_on(handle), "on the pool");
    /// ```
    #[track_caller]
    fn spawn_obj(&self, future: FutureObj<'static, ()>) -> Result<(), SpawnError> {
        self.spawn_with(Ignore, future).detach();
        Ok(())
    }
}
