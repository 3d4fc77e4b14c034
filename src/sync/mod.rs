//! The one place crew takes its concurrency primitives from, and the one place where a loom
//! build differs from a normal one.
//!
//! Invariants:
//! - Every type shared between threads in crew (atomics, mutexes, `Arc`, threads, thread-locals,
//!   the work-stealing deques, the parker behind `block_on`, event-listener's `Event`, the
//!   clock behind timed waits) is named through this module, so a `--cfg loom` build swaps all
//!   of them for loom's model-checked versions at once. One exception: `block_on`'s waker is a
//!   `std::sync::Arc`, because `std::task::Wake` takes one; it only carries this module's
//!   `Unparker`, whose synchronisation is loom's under loom.
//! - Under loom, crossbeam-deque (whose atomics loom cannot see) is replaced by `deque`'s
//!   mutex-guarded queues with the same API, the `block_on` parker by a loom mutex + condvar,
//!   event-listener's `Event` by `event`'s loom condvar (event-listener's blocking wait deadlocks
//!   under loom), and the clock by `deadline`'s always-passed [`Deadline`] (loom has no time);
//!   under a normal build all are the real crates' types. The LIFO slot ([`Slot`],
//!   `slot.rs`) is crew-slot's one-`AtomicPtr` `RunnableSlot` (the workspace crate `slot/`,
//!   with its own loom model), a loom mutex under loom. The asymmetric fence pair (crew-slot's
//!   `asymmetric`, which the slot's owner and thieves pair too) is in fence mode under loom (two
//!   `SeqCst` fences, which loom orders), where a normal Linux build pairs a compiler fence with
//!   `membarrier`.
//! - Sizes and intervals that loom's models must reach in few steps are written
//!   [`shrunk_under_loom`]`(normal, loom)` (`GLOBAL_QUEUE_INTERVAL` and `MAX_INTERVAL_BATCH` in
//!   `scheduler/cores/worker.rs`, the registry's shards per worker in `scheduler/cores/registry.rs`);
//!   `deque`'s batch steals keep crossbeam-deque's cap of 32 tasks.
//!
//! # The `cfg(loom)` left outside this module, and why
//!
//! Twenty-two `cfg` switches (and six `cfg!` tests) stand outside this module, each here:
//! - `lib.rs` (2): `outside_loom!`, the one switch for the I/O layer (`time`, `net`,
//!   `blocking`, `io`), which mio, futures-lite and concurrent-queue keep out of loom builds;
//!   and `crew::__loom` (`scheduler/loom_hook.rs`), the models' window, in them only.
//! - `driver/mod.rs` (3): under loom, the poller is the fake of `driver/loom_poller.rs` (with
//!   the model's `make_driver`), so that `park.rs` and `scheduled_io.rs` are model-checked;
//!   `outside_loom!` leaves mio's registrations, the sources and the timers out; and
//!   `scheduled_io.rs` allows dead code under loom (its waiters' list serves the sources).
//!   `driver/park.rs` allows dead code in `run` (the worker loop's runner) under loom, and
//!   (3) publishes a parker's word through a lock under loom only (its module docs: loom cannot
//!   see async-task's hand-off of a waker). `driver/mod.rs`'s `turn_if_made` (a seeded
//!   worker's turn) is built outside loom only.
//!   The features that need tokio or hyper (`tokio`, `hyper`, `http`, `signal`;
//!   `tokio_context.rs`) and crew's unit tests need no switch: a loom build with them fails at
//!   once (`compile_error!` below).
//! - `identity/mod.rs` (1): `Kind` is re-exported for the blocking pool only, outside loom.
//! - `pool.rs` (1): the blocking pool's metrics are filled in outside loom only (loom builds
//!   have no blocking pool).
//! - `scheduler/mod.rs` (1) declares `loom_hook` only under loom, and
//!   `scheduler/reactor_loop/mod.rs` (1) declares `reactor` (the worker loop run as a future
//!   that turns the driver, `driver::run`) only outside it; `scheduler/cores/run.rs` (3 and a
//!   `cfg!`) calls that loop only outside loom, turns the driver when a seeded worker runs dry
//!   only outside it, and registers no `membarrier` ahead of time under loom or miri (fence
//!   mode there); `scheduler/reactor_loop/reactor_turn.rs` and `Sleepers::take_or_listen` allow dead
//!   code under loom, since only that loop uses them.
//! - `scheduler/sleep/mod.rs` (4): `Sleepers::is_parked`, `watcher`, `notify_one` and
//!   `notify_private` are built for tests and loom only: the checks the models and unit tests
//!   read, and the uncounted forms of what the workers call (`notify_one_from`).
//! - `scheduler/cores/task.rs` and `scheduler/cores/registry.rs` (1 each) assert their types'
//!   sizes outside loom only (loom's atomics and `Arc` differ in size).
//! - `cfg!(loom)` in `config/mod.rs`: the worker loop run as a future and the monitor thread
//!   are always off under loom (no driver loop, no clock), no spin before a park, and loom pools get no spare
//!   cores unless a model asks for them (each would be one more queue for every model to scan);
//!   in `scheduler/cores/context.rs`, `shard_hint` is constant off the workers under loom (a model's
//!   runs must make the same steps).
//!
//! Types that stay `std`'s under loom, and why:
//! - `identity/info.rs`: task ids come from a plain `std` atomic, not loom's: a counter whose only
//!   property is uniqueness, outside every protocol the models check (loom's atomics cannot be
//!   `static` either).
//! - `clock.rs`: a paused pool's clock is shared through a `std` `Arc` (`ClockRef`), since a
//!   task's identity holds it and that identity's out-of-line part is a `std` `Arc` (above); its
//!   lock and its count of work in flight are this module's, loom's under loom.
//! - `counter.rs`: statistics counters are plain `std` atomics under loom too: no protocol reads
//!   them (see its docs).
//! - `handle/join.rs` and `handle/abort.rs`: a join handle's `Mutex` and the `Aborter` shared
//!   with abort handles are `std`'s (and `Arc` is `std`'s, which `std::task::Wake` and `dyn`
//!   coercion need): they are locked only by abort handles and `is_finished`, outside every
//!   scheduling protocol, and a join handle's polls reach its task with `get_mut`, with no
//!   lock. Likewise `join_set/`'s set state, its queues and its waiters' event
//!   (crossbeam-queue's, and event-listener's own `Event`, awaited as a future, which the
//!   facade's loom event is not), its `Arc` (a member's abort handle is a `dyn` of it) and its id
//!   counter: a set's lock is taken by its own calls (and by a member's end hook in a
//!   `TaskGroup`, or once a member was taken out early), never inside a scheduling step; the
//!   loom models spawn no sets. And `scope/`'s slots and list of slots (`std` mutexes, each
//!   handed a task's end, outside every scheduling step) and the `Arc`s that hold them and the
//!   count (the `dyn` coercion needs `std`'s); the count itself (`scope/count.rs`) is loom's,
//!   and `loom-tests/tests/scope_count.rs` checks it. `scheduler/cores/task.rs`'s deferred end is a
//!   `std` `Arc` for the same coercion.
//! - `scheduler/cores/context.rs`: `PRIVATE_POOLS` is a plain `std` atomic (loom's cannot be `static`),
//!   a flag that only goes from false to true before any thread could read it as true (see
//!   `note_private_pool`); and `shard_hint`'s per-thread counter is a `std::thread_local!` `Cell`,
//!   a hint for spreading spawns over the registry's shards that no other thread reads.
//! - `scheduler/cores/local.rs`: `block_on`'s waker's `woken` flag is a `std` atomic (the waker
//!   reaches other threads through async-task's atomics, which loom cannot see; the parker's
//!   lock, loom's, orders it with the park); and `scheduler/local_tasks/local_drive.rs`'s `POLLING`, read at
//!   every local task's poll, is a [`const_thread_local`] (`const` outside loom, loom's under it).

// `AtomicU8` is `net`'s (its read hint), which loom builds leave out, so loom's list lacks it.
#[cfg(not(loom))]
pub(crate) use std::{
    sync::{
        atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering},
        Arc, Condvar, Mutex, MutexGuard,
    },
    thread, thread_local,
};

#[cfg(loom)]
pub(crate) use loom::{
    sync::{
        atomic::{fence, AtomicBool, AtomicU8, AtomicUsize, Ordering},
        Arc, Mutex, MutexGuard,
    },
    thread, thread_local,
};

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};
#[cfg(loom)]
mod deque;
#[cfg(loom)]
pub(crate) use deque::{Injector, Steal, Stealer, Worker};

#[cfg(not(loom))]
pub(crate) use crossbeam_utils::sync::{Parker, Unparker};
#[cfg(loom)]
mod parker;
#[cfg(loom)]
pub(crate) use parker::{Parker, Unparker};

#[cfg(not(loom))]
pub(crate) use event_listener::{Event, EventListener, Listener};
#[cfg(loom)]
mod event;
#[cfg(loom)]
pub(crate) use event::{Event, EventListener, Listener};

pub(crate) use crossbeam_utils::CachePadded;

mod deadline;
pub(crate) use deadline::{wait_until, Deadline};

mod counter;
pub(crate) use counter::{BusyTime, Gauge, SharedCounter, SingleWriterCounter};

mod slot;
pub(crate) use slot::{Slot, SlotOwner};

pub(crate) use crew_slot::asymmetric;

/// A `thread_local!` whose initializer is `const` outside loom (no lazy-init check on each
/// access: for a thread-local read at every poll), loom's own under loom, which has no `const`
/// form (its threads share one OS thread).
#[cfg(not(loom))]
macro_rules! const_thread_local {
    ($(#[$meta:meta])* $vis:vis static $name:ident: $ty:ty = $init:expr;) => {
        std::thread_local! { $(#[$meta])* $vis static $name: $ty = const { $init }; }
    };
}
#[cfg(loom)]
macro_rules! const_thread_local {
    ($(#[$meta:meta])* $vis:vis static $name:ident: $ty:ty = $init:expr;) => {
        loom::thread_local! { $(#[$meta])* $vis static $name: $ty = $init; }
    };
}
pub(crate) use const_thread_local;

// The features that need tokio or hyper do not build under loom (tokio has its own
// `cfg(loom)`), and crew's unit tests need real threads and time: the models are in
// `loom-tests/`. So neither needs a loom switch of its own.
#[cfg(all(loom, any(feature = "tokio", feature = "hyper", feature = "http", feature = "signal")))]
compile_error!("crew's tokio, hyper, http and signal features do not build under `--cfg loom`");
#[cfg(all(loom, test))]
compile_error!("crew's unit tests do not run under `--cfg loom`: the loom models are in loom-tests/");

/// `normal` in a normal build, `shrunk` under loom: a size or interval that loom's models must
/// reach in few steps.
pub(crate) const fn shrunk_under_loom(normal: usize, shrunk: usize) -> usize {
    if cfg!(loom) {
        shrunk
    } else {
        normal
    }
}

/// True in a build with `--cfg crew_bug="NAME"`, false in every other: the one way crew plants
/// a bug for a loom model to catch (`loom-tests/planted-bugs.sh`). Used as a plain condition,
/// `if planted_bug!("NAME") { buggy } else { correct }`, so both branches always compile. Every
/// `NAME` is listed once in `loom-tests/planted-bugs.txt`; `loom-tests/check-planted-bugs.sh`
/// (run by CI) fails if this source, that list, both `Cargo.toml`s' `check-cfg` or the README
/// disagree.
macro_rules! planted_bug {
    ($name:tt) => {
        cfg!(crew_bug = $name)
    };
}
pub(crate) use planted_bug;

/// Runs a steal operation (crossbeam's, or `deque`'s under loom) until it stops asking to be
/// retried: `Some` of what it took, `None` if the queue was empty.
pub(crate) fn retry<T>(mut steal: impl FnMut() -> Steal<T>) -> Option<T> {
    loop {
        match steal() {
            Steal::Success(taken) => return Some(taken),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// True if the thread has returned (so joining it will not block). loom's handles cannot tell:
/// under loom none is reaped early, which only keeps them until the pool's shutdown joins them.
pub(crate) fn is_finished(handle: &thread::JoinHandle<()>) -> bool {
    #[cfg(not(loom))]
    {
        handle.is_finished()
    }
    #[cfg(loom)]
    {
        let _ = handle;
        false
    }
}

/// Locks `mutex`, ignoring poisoning: crew never runs user code while holding one of its own
/// locks, so a poisoned lock can only come from a panic inside crew's short critical sections,
/// whose data stays consistent at every step.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(not(loom))]
    {
        mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    #[cfg(loom)]
    {
        mutex.lock().unwrap()
    }
}
