//! The pool's thread hooks ([`Builder::on_thread_start`], [`Builder::on_thread_stop`],
//! [`Builder::on_thread_park`], [`Builder::on_thread_unpark`], tokio's four) and
//! [`Builder::thread_name_fn`].
//!
//! Invariants:
//! - The start and stop hooks run on every thread a pool starts to run its workers (its first
//!   workers, a takeover's and a hand-off's threads; a spare thread is one of those, called once
//!   for its whole life) and, for the global pool, on the process's blocking threads started
//!   after `build_global`. Start runs first on the thread, before any task; stop runs last,
//!   after its last task, on the same thread; each thread pairs them with the hooks it started
//!   with.
//! - The park hooks wrap each wait of a worker for work: park just before it waits (in crew's
//!   driver or on its parking spot), unpark once it is woken, before it looks for work.
//! - A hook that panics is reported by the panic hook, as any panic, then dropped: it never
//!   kills a thread or the pool, and the thread goes on as if the hook had returned.
//! - A name from `thread_name_fn` is used escaped (`escape.rs`): a control character in it
//!   cannot corrupt a report's line or make the thread's start fail.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use super::Builder;
use crate::escape::Escaped;
use crate::policy::drop_payload;

/// One hook: a closure called with nothing.
type Hook = Arc<dyn Fn() + Send + Sync>;

/// The four thread hooks, each optional.
#[derive(Clone, Default)]
pub(crate) struct ThreadHooks {
    start: Option<Hook>,
    stop: Option<Hook>,
    park: Option<Hook>,
    unpark: Option<Hook>,
}

impl ThreadHooks {
    /// Runs the start hook, if set.
    pub(crate) fn started(&self) {
        call(&self.start);
    }

    /// Runs the stop hook, if set.
    pub(crate) fn stopping(&self) {
        call(&self.stop);
    }

    /// Runs the park hook, if set.
    #[inline]
    pub(crate) fn parking(&self) {
        if self.park.is_some() {
            call(&self.park);
        }
    }

    /// Runs the unpark hook, if set.
    #[inline]
    pub(crate) fn unparked(&self) {
        if self.unpark.is_some() {
            call(&self.unpark);
        }
    }

    /// Whether a start or stop hook is set (the blocking pool's threads care for no other).
    #[cfg_attr(loom, allow(dead_code))] // the blocking pool is left out of loom builds
    pub(crate) fn has_start_or_stop(&self) -> bool {
        self.start.is_some() || self.stop.is_some()
    }
}

/// Calls `hook` if set, catching and dropping a panic (see the module docs).
#[cold]
fn call(hook: &Option<Hook>) {
    if let Some(hook) = hook {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| hook())) {
            drop_payload(payload);
        }
    }
}

impl fmt::Debug for ThreadHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadHooks")
            .field("start", &self.start.is_some())
            .field("stop", &self.stop.is_some())
            .field("park", &self.park.is_some())
            .field("unpark", &self.unpark.is_some())
            .finish()
    }
}

/// [`Builder::thread_name_fn`]'s closure.
#[derive(Clone)]
pub(crate) struct ThreadNameFn(Arc<dyn Fn(usize) -> String + Send + Sync>);

impl ThreadNameFn {
    /// The name of worker `number`'s thread, escaped (see the module docs).
    pub(crate) fn name(&self, number: usize) -> String {
        Escaped(&(self.0)(number)).to_string()
    }
}

impl fmt::Debug for ThreadNameFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ThreadNameFn")
    }
}

impl Builder {
    /// Runs `hook` on every thread the pool starts, before it runs any task: its workers, the
    /// threads a takeover or a hand-off (`block_on` in a task) starts, and, given to
    /// [`build_global`](Builder::build_global), the process's blocking threads
    /// ([`spawn_blocking`](crate::spawn_blocking)). As tokio's `on_thread_start`: to set a
    /// thread-local, pin a thread, name it to a profiler. A panic in it is reported and dropped:
    /// the thread goes on.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let counter = started.clone();
    /// let pool = crew::Pool::builder()
    ///     .workers(2)
    ///     .on_thread_start(move || { counter.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// crew::block_on(pool.spawn(async {}));
    /// drop(pool);
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// ```
    pub fn on_thread_start(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.hooks.start = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on every thread of [`on_thread_start`](Builder::on_thread_start)'s list as it
    /// exits, after its last task (at the pool's shutdown, or when a spare thread gives up
    /// waiting). A panic in it is reported and dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let stopped = Arc::new(AtomicUsize::new(0));
    /// let counter = stopped.clone();
    /// let pool = crew::Pool::builder()
    ///     .workers(2)
    ///     .on_thread_stop(move || { counter.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// drop(pool); // joins its threads
    /// assert_eq!(stopped.load(Ordering::SeqCst), 2);
    /// ```
    pub fn on_thread_stop(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.hooks.stop = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on a worker just before it waits for work (parked in crew's I/O driver or on
    /// its own spot), as tokio's `on_thread_park`. Keep it short: it runs each time a worker
    /// runs dry. A panic in it is reported and dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let parks = Arc::new(AtomicUsize::new(0));
    /// let counter = parks.clone();
    /// let pool = crew::Pool::builder()
    ///     .workers(1)
    ///     .on_thread_park(move || { counter.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// crew::block_on(pool.spawn(async {}));
    /// while parks.load(Ordering::SeqCst) == 0 {
    ///     std::thread::yield_now(); // the worker runs dry and parks
    /// }
    /// ```
    pub fn on_thread_park(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.hooks.park = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on a worker once it is woken from a wait for work, before it looks for
    /// work, as tokio's `on_thread_unpark`. A panic in it is reported and dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let unparks = Arc::new(AtomicUsize::new(0));
    /// let counter = unparks.clone();
    /// let pool = crew::Pool::builder()
    ///     .workers(1)
    ///     .on_thread_unpark(move || { counter.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// // Each spawn, a while after the last, finds the worker parked and wakes it.
    /// while unparks.load(Ordering::SeqCst) == 0 {
    ///     std::thread::sleep(std::time::Duration::from_millis(1));
    ///     crew::block_on(pool.spawn(async {}));
    /// }
    /// ```
    pub fn on_thread_unpark(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.hooks.unpark = Some(Arc::new(hook));
        self
    }

    /// Names worker `N`'s thread `name(N)`, instead of [`thread_name`](Builder::thread_name)'s
    /// `{prefix}-N`; setting either replaces the other. `N` is the worker's number, which a
    /// takeover's or hand-off's thread for that worker shares (so several threads may carry one
    /// name). Control characters in the name are escaped. Reports keep naming the pool by its
    /// prefix (`crew-worker` unless `thread_name` set one).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).thread_name_fn(|n| format!("api-{n}")).build().unwrap();
    /// let name = crew::block_on(pool.spawn(async { std::thread::current().name().unwrap().to_owned() }));
    /// assert_eq!(name, "api-0");
    /// ```
    pub fn thread_name_fn(mut self, name: impl Fn(usize) -> String + Send + Sync + 'static) -> Builder {
        self.thread_name_fn = Some(ThreadNameFn(Arc::new(name)));
        self.thread_name = None;
        self
    }
}
