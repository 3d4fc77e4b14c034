//! The limits and defaults of a pool's configuration, as the [`Builder`] checks them.
//!
//! Invariants: each limit here is the one `build` enforces and the one its error message states
//! (the `*_EXPECTED` texts in `mod.rs` spell the same numbers); README's configuration table
//! lists the same values.

use std::time::Duration;

#[cfg(doc)]
use super::Builder;

/// The largest accepted worker count, for a pool or for `CREW_WORKERS`.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(crew::config::MAX_WORKERS + 1).build().is_err());
/// ```
pub const MAX_WORKERS: usize = 1024;

/// The smallest accepted worker stack size, in bytes.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::config::MIN_STACK_SIZE - 1).build().is_err());
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::config::MIN_STACK_SIZE).build().is_ok());
/// ```
pub const MIN_STACK_SIZE: usize = 64 * 1024;

/// The largest accepted worker stack size, in bytes.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::config::MAX_STACK_SIZE + 1).build().is_err());
/// ```
pub const MAX_STACK_SIZE: usize = 1 << 30;

/// The shortest accepted takeover threshold ([`Builder::takeover_after`]) and slow-poll
/// threshold ([`Builder::slow_poll_threshold`]).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let too_short = crew::config::MIN_TAKEOVER_AFTER - Duration::from_nanos(1);
/// assert!(crew::Pool::builder().workers(1).takeover_after(too_short).build().is_err());
/// ```
pub const MIN_TAKEOVER_AFTER: Duration = Duration::from_millis(1);

/// The longest accepted takeover and slow-poll threshold: one hour.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).takeover_after(crew::config::MAX_TAKEOVER_AFTER).build().is_ok());
/// ```
pub const MAX_TAKEOVER_AFTER: Duration = Duration::from_secs(3600);

/// The takeover threshold when none is set: a worker inside one poll for this long, while tasks
/// wait behind it, is taken over. `BENCHMARKS.md` ("Blocking inside a poll") measures it.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::DEFAULT_TAKEOVER_AFTER, std::time::Duration::from_millis(10));
/// ```
pub const DEFAULT_TAKEOVER_AFTER: Duration = Duration::from_millis(10);

/// The slow-poll threshold when none is set.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::DEFAULT_SLOW_POLL_THRESHOLD, std::time::Duration::from_millis(10));
/// ```
pub const DEFAULT_SLOW_POLL_THRESHOLD: Duration = Duration::from_millis(10);

/// How long a searching worker that found nothing keeps sweeping the queues before it parks,
/// when [`Builder::spin_before_park`] is not set and the pool has no more workers than the
/// process may use CPUs (`num_cpus::get()`, as for the default worker count: the affinity mask and
/// a cgroup quota count); a pool with more workers than that parks at once, since a spinner would take a
/// CPU from a worker with work. `docs/performance-notes.md` ("The spin before parking")
/// measures both.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::DEFAULT_SPIN_BEFORE_PARK, std::time::Duration::from_micros(20));
/// ```
pub const DEFAULT_SPIN_BEFORE_PARK: Duration = Duration::from_micros(20);

/// The longest accepted spin before parking ([`Builder::spin_before_park`]).
///
/// # Examples
///
/// ```
/// let too_long = crew::config::MAX_SPIN_BEFORE_PARK + std::time::Duration::from_nanos(1);
/// assert!(crew::Pool::builder().workers(1).spin_before_park(too_long).build().is_err());
/// ```
pub const MAX_SPIN_BEFORE_PARK: Duration = Duration::from_millis(1);

/// The largest accepted cap on stuck threads ([`Builder::max_stuck_threads`]).
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).max_stuck_threads(crew::config::MAX_STUCK_THREADS + 1).build().is_err());
/// ```
pub const MAX_STUCK_THREADS: usize = 1024;

/// The most threads the process's blocking pool runs at once unless
/// [`Builder::max_blocking_threads`](crate::Builder::max_blocking_threads) or
/// `CREW_MAX_BLOCKING_THREADS` says otherwise (tokio's default too). A default, unlike the
/// other `MAX_*` bounds.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::DEFAULT_MAX_BLOCKING_THREADS, 512);
/// ```
pub const DEFAULT_MAX_BLOCKING_THREADS: usize = 512;

/// The old name of [`DEFAULT_MAX_BLOCKING_THREADS`], which is a default and no bound.
///
/// # Examples
///
/// ```
/// #[allow(deprecated)]
/// let old = crew::config::MAX_BLOCKING_THREADS;
/// assert_eq!(old, crew::config::DEFAULT_MAX_BLOCKING_THREADS);
/// ```
#[deprecated(note = "renamed to DEFAULT_MAX_BLOCKING_THREADS: it is a default, set by Builder::max_blocking_threads")]
pub const MAX_BLOCKING_THREADS: usize = DEFAULT_MAX_BLOCKING_THREADS;

/// The most threads [`Builder::max_blocking_threads`](crate::Builder::max_blocking_threads) and
/// `CREW_MAX_BLOCKING_THREADS` accept.
///
/// # Examples
///
/// ```
/// let err = crew::Builder::new().max_blocking_threads(crew::config::MAX_MAX_BLOCKING_THREADS + 1).build_global();
/// assert!(err.unwrap_err().to_string().contains("1..=65536"));
/// ```
pub const MAX_MAX_BLOCKING_THREADS: usize = 65536;

/// How long an idle blocking thread waits for a job before it exits, unless
/// [`Builder::thread_keep_alive`](crate::Builder::thread_keep_alive) or
/// `CREW_THREAD_KEEP_ALIVE_MS` says otherwise (tokio's default too).
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::DEFAULT_THREAD_KEEP_ALIVE, std::time::Duration::from_secs(10));
/// ```
pub const DEFAULT_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The longest keep-alive [`Builder::thread_keep_alive`](crate::Builder::thread_keep_alive)
/// and `CREW_THREAD_KEEP_ALIVE_MS` accept: an hour.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::config::MAX_THREAD_KEEP_ALIVE, std::time::Duration::from_secs(3600));
/// ```
pub const MAX_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(3600);
