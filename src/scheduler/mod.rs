//! The scheduler: a pool's cores and queues, the worker loop, sleeping, the watcher, and
//! shutdown. Everything above it (spawn, `Pool`, the global pool, `block_on`, `JoinHandle`)
//! reaches it through the few items re-exported here; everything in it reaches threads and
//! atomics only through `crate::sync`, but for the two plain `std` items that `sync/mod.rs`
//! lists as exceptions (in `context.rs`).
//!
//! # Invariants
//!
//! - **Ownership.** A pool has a fixed number of core *slots*: one per worker, and the spares a
//!   takeover hands out (`max_stuck_threads`). A [`Core`](cores::worker::Core) (deque, tick, search
//!   state) is owned by exactly one thread at a time, the one whose thread-local context holds it
//!   (`context.rs`); `block_on` on a worker thread hands the core to a fresh thread first, and
//!   the monitor hands a spare to a new thread in place of a worker stuck in one poll
//!   (`monitor.rs`), so threads may outnumber running cores, never the other way round. What
//!   other threads may touch of a core lives in [`Shared`]: its deque's stealer and its `Remote`
//!   (LIFO slot, deferred list, progress word).
//! - **Where a task goes** (`shared.rs`). Scheduled on a worker of the same pool: into that
//!   core (a task woken during its own poll into the deferred list, any other into the LIFO
//!   slot, whose previous task moves to the deque). Anywhere else: into the injector.
//! - **Local tasks and inboxes are their thread's alone** (`local.rs`, `pinned.rs`). A local
//!   (`!Send`) task is queued only in the local queue of the thread that spawned it, which no
//!   searcher, watcher, takeover or hand-off touches; a `spawn_pinned` task's first run waits in
//!   its core's inbox, which only the core's owner takes from. A push there from another thread
//!   wakes exactly that worker (`Sleepers::wake_listed`), and a worker about to park looks at
//!   both after listing itself (`sleep/README.md`, "Local tasks").
//! - **Private and stealable.** The deques, the injector and the deferred lists are stealable:
//!   any searcher takes from them (`search.rs`). The LIFO slot is private: its owner takes from
//!   it; the watcher only when the owner began no poll for a whole interval (`watch.rs`), and
//!   the monitor only as it takes a stuck worker over (`monitor.rs`); shutdown and a core given
//!   up after a takeover empty it (`shutdown.rs`); a task still in it when its core or pool is
//!   dropped is dropped as crew's `Runnable` (`lifo.rs`).
//! - **No lost wakeup** (`sleep/README.md`, the protocol and its proof). A push onto a
//!   stealable queue ends with `notify_one`, a push into a LIFO slot with `notify_private`; a
//!   worker that parks leaving no searcher re-scans after a SeqCst fence. An idle pool stops
//!   waking within two watcher intervals (`watch.rs`).
//! - **Order of picking** (`pick.rs`): the rest of a turn of local tasks (once the worker took
//!   one of its thread's local tasks, up to `LOCAL_TURN` = 61 of them in a row while any is
//!   queued, as `block_on`'s batch; the thread's last-woken first, at most 3 in a row), else the
//!   LIFO slot (at most `MAX_LIFO_POLLS` = 3 tasks in a row, then the deque's turn), the
//!   fairness tick (the inbox, then the injector), the deque and the thread's local tasks (taking
//!   turns: the local tasks first on odd ticks; a local task taken begins a turn), injector,
//!   inbox, deferred list and yielded local tasks, then search (`search.rs`), then park. This
//!   list and the cadence below are the one statement of them; README and `docs/` link here.
//! - **Cadence.** A *tick* is one pick: a run of LIFO tasks counts as one, as in tokio, and so
//!   does a turn of local tasks, as tokio counts a `LocalSet`'s poll (up to 61 local tasks) as
//!   one (the worker runs a turn's tasks after the first one by one, `local_turn.rs`). Every
//!   `GLOBAL_QUEUE_INTERVAL` = 61 ticks a worker takes up to `MAX_INTERVAL_BATCH` tasks from the
//!   injector before its own queue, moves its deferred list to the back of its deque (and its
//!   thread's yielded local tasks to the back of its local queue: a local task's yield waits as
//!   an ordinary task's does), and, inside the reactor, lets the reactor turn without blocking
//!   if its last turn was `REACTOR_TURN_GAP` (250 µs) ago or more (`reactor.rs`,
//!   `reactor_turn.rs`; at the latest every `MAX_POLLS_PER_TURN` = 61 × 61 polls). It also lets
//!   the reactor turn before it runs deferred tasks, under the same gap. A parked watcher looks
//!   at a busy owner's LIFO slot every `WATCH_INTERVAL` (250 µs, `watch.rs`), and keeps the role
//!   while an owner polls.
//! - **A stuck poll holds up only itself** (`progress.rs`, `watch.rs`, `monitor.rs`). Each
//!   worker marks the start and end of every poll in its progress word; a word that shows one
//!   poll across an interval is a stuck worker. A parked watcher rescues its LIFO task after
//!   250 µs; the monitor thread, after the takeover threshold with tasks waiting behind it,
//!   hands its queues to a new thread, and the stuck thread leaves once its poll returns.
//! - **Nothing is lost or dropped in the wrong place** (`shutdown.rs`). Every task ends exactly
//!   once: run to completion, cancelled, or dropped at shutdown, and never dropped inside a
//!   `wake()` or under one of crew's locks.
//! - **User code never runs under crew's locks or the context's borrow.**
//!
//! # Folders and files
//!
//! Besides its own folder and the crate's lower layers (`identity`, `config`, `report`, `dump`,
//! `metrics`, `policy`, `sync`; `src/lib.rs`), each folder imports what its row says. No file is
//! in an import loop with a file of another folder; inside `cores/`, one loop of three files is
//! the scheduler's core (`cores/mod.rs`). `takeover/`'s state files (`progress.rs`, `reports.rs`,
//! `spare_threads.rs`) sit below `cores/`, which keeps them; its threads and the watcher's
//! rescue sit above, and read `cores/`'s state.
//!
//! | folder / file | concept | may import |
//! |---|---|---|
//! | `loom_hook.rs` | the loom models' window (`crew::__loom`), loom builds only | `takeover/`, `sleep/`, `Pool` |
//! | `local_tasks/` | local (`!Send`) tasks above the cores | `cores/` |
//! | `local_tasks/local_spawn.rs` | spawning a local task on this thread | |
//! | `local_tasks/local_drive.rs` | running a thread's local tasks off a core: `block_on`'s loop and a former worker's | |
//! | `local_tasks/local_turn.rs` | a worker's turn of local tasks, run outside the context's borrow | |
//! | `reactor_loop/` | the worker loop inside the reactor | `cores/`, `local_tasks/`, `sleep/` |
//! | `reactor_loop/reactor.rs` | the worker loop as a future that turns crew's driver (`driver::run`) | |
//! | `reactor_loop/reactor_turn.rs` | when that loop lets the reactor turn before yielded tasks | |
//! | `observe/` | what a pool shows of itself | `cores/` |
//! | `observe/dump.rs` | the task dump: the registry's recorded tasks and their states | |
//! | `observe/snapshot.rs` | reading the counters into a `Metrics` snapshot | |
//! | `cores/` | a pool's cores, their queues and the worker loop | `sleep/`, `takeover/`'s state files; `park.rs` the watcher's term and rescue |
//! | `cores/shared.rs` | a pool's shared state ([`Shared`]), each core's part others touch (`Remote`: LIFO slot, deferred list, progress word), and [`Shared::schedule`] | |
//! | `cores/worker.rs` | a worker's own state (`Core`), its polls' bookkeeping, pushing onto it, running a task | also `reactor_loop/reactor_turn.rs` (the turn's state in `Core`) |
//! | `cores/context.rs` | the thread-locals that make a thread a worker and hold its home of local tasks; handing its core off | |
//! | `cores/local.rs` | local tasks' home: a thread's own queue (`LocalHome`) and its wakes, generic over the pool | nothing in the scheduler but `task.rs` |
//! | `cores/task.rs` | what the queues hold: a task's metadata (`TaskMeta`) and crew's `Runnable`, generic over the pool | nothing in the scheduler |
//! | `cores/lifo.rs` | a core's LIFO slot in crew's types (`LifoSlot`, `LifoOwner`): every way out, drops included, yields crew's `Runnable` | `task.rs` only |
//! | `cores/schedule.rs` | a new task's first run, and a private pool's schedule function | |
//! | `cores/pick.rs` | a worker's pick order: its own queues, its thread's local tasks, its inbox, the injector | |
//! | `cores/search.rs` | stealing from other workers and the injector | |
//! | `cores/rand.rs` | the generator that picks steal victims | |
//! | `cores/seeded.rs` | a seeded pool's pick: every queued task into a ready list, one drawn by the seed; the poll trace | |
//! | `cores/task_run.rs` | running one task: the guard around its run, and the unit of a paused pool's work it holds | |
//! | `cores/park.rs` | listing a worker as parked, its re-scan, and the blocking wait | |
//! | `cores/pinned.rs` | `spawn_pinned`'s placement: the least loaded core, its inbox | |
//! | `cores/registry.rs` | a private pool's live tasks, so that dropping the pool drops them | |
//! | `cores/counters.rs` | what a pool counts about itself (per core, owner-written) | |
//! | `cores/run.rs` | starting a pool's threads; a worker thread's body and its blocking loop | also `reactor_loop/`, `local_tasks/`, `takeover/`'s threads |
//! | `cores/shutdown.rs` | stopping a pool, dropping every task exactly once | |
//! | `takeover/` | what keeps a pool moving when a worker is stuck in one poll | `cores/` (but the state files) |
//! | `takeover/progress.rs` | a core's progress word: polls begun, one running, reported, taken over; a watcher's term | nothing in the scheduler |
//! | `takeover/watch.rs` | the watcher's rescue of a stuck owner's LIFO task (some worker is idle) | |
//! | `takeover/monitor.rs` | the monitor thread: slow polls, takeover of a worker stuck in one poll | |
//! | `takeover/reporter.rs` | the reporter thread: the one caller of the slow-poll hook | |
//! | `takeover/reports.rs` | the reporter's bounded queue of reports | nothing in the scheduler |
//! | `takeover/spare_threads.rs` | threads whose worker life ended early, waiting to run the next core | nothing in the scheduler |
//! | `sleep/` | the idle-worker protocol (`Sleepers`, `State`, `ParkingSpot`) and its proof | `cores/counters.rs` only |

mod cores;
mod local_tasks;
#[cfg(loom)]
pub mod loom_hook;
mod observe;
mod reactor_loop;
mod sleep;
mod takeover;

pub(crate) use cores::context::current_watching_pool;
#[cfg(not(loom))]
pub(crate) use cores::context::enter_job_home;
pub(crate) use cores::context::{
    count_task_end, current_paused_clock, current_private_pool, enter_pool, hand_off_core, shard_hint,
    try_hand_off_core, with_current_clock,
};
pub(crate) use cores::run::fail_next_thread_starts;
pub(crate) use cores::shutdown::note_unhandled_panic;
pub(crate) use cores::task_run::{block_while_held, release_while_blocked};

pub(crate) use cores::registry::Registration;
pub(crate) use cores::schedule::{count_scheduled, schedule_private, Pinned};
pub(crate) use cores::shared::{delay_remote_pushes_during_shutdown, PoolKind, Shared};
pub(crate) use cores::shared::{RawRunnable, Runnable, TaskMeta};
pub(crate) use local_tasks::local_drive::{drive as drive_local, enter_block_on};
pub(crate) use local_tasks::local_spawn::{spawn as spawn_local, spawn_told as spawn_local_told, MakeLocal};
