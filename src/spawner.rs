//! [`Spawner`]: a cloneable, `'static` handle that spawns onto one pool, for code that must
//! hold "an executor" (a library's builder, hyper's `Executor`, futures' `Spawn`).
//!
//! Invariants:
//! - A spawner names its pool for good: the global pool, or one private pool, never "the
//!   current pool" ([`Spawner::current`] resolves the current pool once, when called). So what a
//!   library spawns through it lands where its owner chose, whatever thread the library spawns
//!   from.
//! - A private pool's spawner holds the pool's shared state, not the [`Pool`]: it does not keep
//!   the pool's threads alive. Once the pool is dropped, what it spawns is dropped at once and
//!   its handle reports it cancelled; [`Spawner::is_shut_down`] says so beforehand.

use std::fmt;
use std::future::Future;

use crate::handle::JoinHandle;
use crate::policy::{Policy, Propagate};
use crate::pool::Pool;
use crate::scheduler::Shared;
use crate::sync::Arc;
use crate::target::Target;

/// A cloneable handle that spawns onto one pool: the global pool ([`Spawner::global`]) or a
/// private one ([`Pool::spawner`]). Hand it to code that needs "an executor": with the
/// `futures` feature it implements `futures::task::Spawn`.
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().workers(2).thread_name("mine").build().unwrap();
/// let spawner = pool.spawner();
/// let other_thread = std::thread::spawn(move || {
///     crew::block_on(spawner.spawn(async { std::thread::current().name().map(str::to_owned) }))
/// });
/// let name = other_thread.join().unwrap().unwrap();
/// assert!(name.starts_with("mine-"), "{name}");
///
/// let global = crew::Spawner::global();
/// assert_eq!(crew::block_on(global.spawn(async { 7 })), 7);
/// ```
#[derive(Clone)]
pub struct Spawner {
    /// `None`: the global pool.
    private: Option<Arc<Shared>>,
}

impl Spawner {
    /// A spawner for the global pool (started on the first spawn, as [`crew::spawn`](crate::spawn)
    /// starts it). Unlike `crew::spawn`, it targets the global pool from every thread, a private
    /// pool's included.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).thread_name("mine").build().unwrap();
    /// let global = crew::Spawner::global();
    /// let ran_on = crew::block_on(pool.spawn(async move {
    ///     global.spawn(async { std::thread::current().name().unwrap().to_owned() }).await
    /// }));
    /// assert!(ran_on.starts_with("crew-worker-"), "{ran_on}");
    /// ```
    pub fn global() -> Spawner {
        Spawner { private: None }
    }

    /// The spawner of the pool this code runs on, resolved now, as tokio's `Handle::current`:
    /// inside a private [`Pool`]'s task, its [`Pool::block_on`], or a
    /// [`spawn_blocking`](crate::spawn_blocking) job started from either, that pool; anywhere
    /// else (the global pool's tasks, a thread of no pool), the global pool. So a library can
    /// capture where its caller runs and spawn there later from any thread. If that private pool
    /// is gone by then, what it spawns is cancelled at once (see [`Spawner::is_shut_down`]).
    /// Unlike [`crew::spawn`](crate::spawn), whose target is resolved at each spawn on the
    /// spawning thread, the spawner keeps the pool it found.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).thread_name("mine").build().unwrap();
    /// // Captured inside the pool's task, used from a thread of no pool.
    /// let spawner = crew::block_on(pool.spawn(async { crew::Spawner::current() }));
    /// let name = std::thread::spawn(move || {
    ///     crew::block_on(spawner.spawn(async { std::thread::current().name().unwrap().to_owned() }))
    /// })
    /// .join()
    /// .unwrap();
    /// assert!(name.starts_with("mine-"), "{name}");
    /// ```
    pub fn current() -> Spawner {
        Spawner { private: crate::scheduler::current_private_pool() }
    }

    /// The spawner of `pool`.
    pub(crate) fn of(pool: &Arc<Shared>) -> Spawner {
        Spawner { private: Some(pool.clone()) }
    }

    /// Spawns `future` onto this spawner's pool with the default [`Propagate`] policy.
    ///
    /// # Panics
    ///
    /// For the global pool, if it cannot start (as [`crew::spawn`](crate::spawn)).
    ///
    /// # Examples
    ///
    /// ```
    /// let spawner = crew::Spawner::global();
    /// assert_eq!(crew::block_on(spawner.spawn(async { 1 + 1 })), 2);
    /// ```
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(Propagate, future)
    }

    /// Spawns `future` onto this spawner's pool with the panic policy `policy`.
    ///
    /// # Panics
    ///
    /// As [`Spawner::spawn`].
    ///
    /// # Examples
    ///
    /// ```
    /// let spawner = crew::Spawner::global();
    /// let result = crew::block_on(spawner.spawn_with(crew::Catch, async { panic!("no") }));
    /// assert!(result.unwrap_err().is_panic());
    /// ```
    #[track_caller]
    pub fn spawn_with<P, F>(&self, policy: P, future: F) -> JoinHandle<F::Output, P>
    where
        P: Policy,
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _ = policy;
        let target = match &self.private {
            None => Target::Global,
            Some(shared) => Target::Private(shared),
        };
        crate::target::spawn_named(target, None, future)
    }

    /// True once this spawner's pool is shutting down (a private pool being dropped): from then
    /// on, what it spawns is dropped at once and its handle reports it cancelled. Never true for
    /// the global pool.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let spawner = pool.spawner();
    /// assert!(!spawner.is_shut_down());
    /// drop(pool);
    /// assert!(spawner.is_shut_down());
    /// let handle = spawner.spawn_with(crew::Catch, async { 1 });
    /// assert!(crew::block_on(handle).unwrap_err().is_cancelled());
    /// ```
    pub fn is_shut_down(&self) -> bool {
        self.private.as_ref().is_some_and(|shared| shared.is_shutdown())
    }
}

impl fmt::Debug for Spawner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.private {
            None => f.write_str("Spawner(global)"),
            Some(shared) => write!(f, "Spawner({:?})", shared.thread_name()),
        }
    }
}

impl Pool {
    /// A cloneable, `'static` [`Spawner`] for this pool, to hand to code that needs an
    /// executor. It does not keep the pool alive: once the pool is dropped, what it spawns is
    /// dropped at once (its handle reports it cancelled).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let spawner = pool.spawner();
    /// let handle = std::thread::spawn(move || spawner.spawn(async { 3 })).join().unwrap();
    /// assert_eq!(crew::block_on(handle), 3);
    /// ```
    pub fn spawner(&self) -> Spawner {
        Spawner::of(self.shared_arc())
    }
}
