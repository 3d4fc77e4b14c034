//! async-executor's benchmark workloads (its `benches/executor.rs`), run on crew, tokio's
//! multi-thread runtime and async-executor with the same number of worker threads `W` (env
//! `CREW_BENCH_WORKERS`, default 2). Every workload is one criterion group with three members,
//! `crew`, `tokio` and `async_executor`; executors are set up and torn down as in
//! `benches/spawn.rs` (see its module docs and `benches/common/executors.rs`).
//!
//! As in async-executor's file, the benchmarking thread spawns the tasks and waits for them
//! (`block_on`), so most spawns here are *remote* ones in tokio's terms. Parameters are smaller
//! than async-executor's (TASKS = STEPS = 300) so that the file runs in a few minutes on 2 cores:
//!
//! - `spawn_one`: spawn one empty task and await it.
//! - `spawn_batch`: spawn 250 tasks that each yield once, then await them all.
//! - `spawn_many_local_25k`: spawn 25,000 empty tasks, then await them all (async-executor's
//!   `spawn_many_local`; renamed because `benches/spawn.rs` already has a `spawn_many_local`
//!   group, and criterion keeps one directory per group name).
//! - `spawn_recursively`: a binary tree of tasks of depth 10 (2,047 tasks): each task spawns two
//!   children and awaits both. async-executor uses 300 chains of depth 300.
//! - `yield_now`: 300 tasks, each yielding 100 times (async-executor: 300).
//! - `busy_chains`: 4 chains of 250 tasks, each task spawning the next, while W background
//!   tasks loop `yield_now(); spin 10 µs` (started before the member is measured).
//! - `channels`: a ring of 100 tasks joined by `async_channel::bounded(1)` channels; the
//!   benchmarking thread sends 100 messages around the ring (async-executor: 300 × 300).
//! - `web_server`: a server task accepts 100 connections and spawns a detached task for each;
//!   half are cache hits (one yield), the others make 5–20 round trips to a database task
//!   (request over a shared `bounded(20)` channel, reply on a fresh `bounded(1)`), then yield
//!   3–15 times. Random choices come from a fixed seed (0x12345678), so every executor sees the
//!   same work. async-executor uses 300 connections and 150–300 round trips.
//!
//! The `floor` group puts the cost of one spawn + join next to its physical floor:
//!
//! - `floor`: on one thread, one `Box` allocation and free of a 64-byte task-sized struct plus
//!   the eight uncontended atomic operations async-task performs on a task's state word for
//!   spawn + run + join (see [`floor`]). No scheduler, queue or wakeup is involved.
//! - `crew_spawn_join_one`, `tokio_spawn_join_one`, `async_executor_spawn_join_one`: spawn and
//!   await one empty task from *inside* a task on a 1-worker pool/runtime/executor (see
//!   [`spawn_join_one`]).
//! - `thread_round_trip`: the floor of `spawn_one` instead: two threads that park between rounds
//!   wake each other once each with `std::thread` park/unpark, no executor (see
//!   [`thread_round_trip`]). `spawn_one` from a thread outside the pool onto parked workers needs
//!   at least this: one wakeup to get the task run, one to get its output back.
//! - `cache_line_round_trip`: two threads spinning on one atomic, handing it back and forth
//!   (see `common::cache_line_round_trips`): what this machine charges to move a cache line
//!   between two cores and back, which every hand-off between workers pays. On this project's
//!   VM it takes about 85 ns at some times and about 430 ns at others, and every executor's
//!   message-passing times move with it (`BENCHMARKS.md`, "The machine's two states").
//!
//! Run: `cargo bench --bench executor` (optionally `CREW_BENCH_WORKERS=4 cargo bench --bench
//! executor`, or `cargo bench --bench executor -- floor` for one group).
//! `CREW_BENCH_MODES=<workload>` runs one workload's modes probe instead (see
//! `benches/spawn.rs` and `benches/common/modes.rs`).

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use criterion::Criterion;

mod common;

use common::{bench, stall, with_executor, workers, Exec, ExecJob, Workload, EXECUTORS};

/// Tasks spawned by `spawn_batch`.
const BATCH: usize = 250;
/// Tasks spawned by `spawn_many_local_25k` (async-executor's LIGHT_TASKS).
const LIGHT_TASKS: usize = 25_000;
/// Depth of the binary task tree of `spawn_recursively` (2^(depth+1) - 1 tasks).
const TREE_DEPTH: u32 = 10;
/// Tasks and yields per task in `yield_now`.
const YIELD_TASKS: usize = 300;
const YIELD_STEPS: usize = 100;
/// Chains, and tasks per chain, in `busy_chains`.
const CHAINS: usize = 4;
const CHAIN_LEN: usize = 250;
/// How long a background task of `busy_chains` spins between yields.
const BUSY_SPIN: Duration = Duration::from_micros(10);
/// Tasks in the ring, and messages sent around it, in `channels`.
const RING: usize = 100;
const RING_MESSAGES: usize = 100;
/// Connections accepted by `web_server`, and its seed (async-executor's).
const CONNECTIONS: usize = 100;
const SEED: u64 = 0x1234_5678;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Waits on the benchmarking thread for every handle, in order.
fn await_all<E: Exec, T: Send + 'static>(ex: &E, handles: Vec<E::Handle<T>>) {
    ex.block_on(async move {
        for handle in handles {
            handle.await;
        }
    });
}

// ---------------------------------------------------------------------------------------------
// async-executor's workloads

struct SpawnOne;

impl Workload for SpawnOne {
    const NAME: &'static str = "spawn_one";

    fn iter<E: Exec>(ex: &E) {
        ex.block_on(ex.spawn(async {}));
    }
}

struct SpawnBatch;

impl Workload for SpawnBatch {
    const NAME: &'static str = "spawn_batch";

    fn iter<E: Exec>(ex: &E) {
        let handles: Vec<_> = (0..BATCH).map(|_| ex.spawn(E::yield_now())).collect();
        await_all(ex, handles);
    }
}

struct SpawnManyLocal25k;

impl Workload for SpawnManyLocal25k {
    const NAME: &'static str = "spawn_many_local_25k";

    fn iter<E: Exec>(ex: &E) {
        let handles: Vec<_> = (0..LIGHT_TASKS).map(|_| ex.spawn(async {})).collect();
        await_all(ex, handles);
    }
}

struct SpawnRecursively;

/// A task of the tree: spawns two subtrees of `depth - 1` and awaits both.
fn tree<E: Exec>(ex: E, depth: u32) -> BoxFuture {
    Box::pin(async move {
        if depth > 0 {
            let left = ex.spawn(tree(ex.clone(), depth - 1));
            let right = ex.spawn(tree(ex.clone(), depth - 1));
            left.await;
            right.await;
        }
    })
}

impl Workload for SpawnRecursively {
    const NAME: &'static str = "spawn_recursively";

    fn iter<E: Exec>(ex: &E) {
        ex.block_on(ex.spawn(tree(ex.clone(), TREE_DEPTH)));
    }
}

struct YieldNowMany;

impl Workload for YieldNowMany {
    const NAME: &'static str = "yield_now";

    fn iter<E: Exec>(ex: &E) {
        let handles: Vec<_> = (0..YIELD_TASKS)
            .map(|_| {
                ex.spawn(async {
                    for _ in 0..YIELD_STEPS {
                        E::yield_now().await;
                    }
                })
            })
            .collect();
        await_all(ex, handles);
    }
}

struct BusyChains;

/// Spawns the next link of a chain, or counts the chain as done.
fn chain<E: Exec>(ex: E, left: Arc<AtomicUsize>, done: mpsc::SyncSender<()>, n: usize) {
    if n == 0 {
        if left.fetch_sub(1, AcqRel) == 1 {
            done.send(()).unwrap();
        }
    } else {
        let next = ex.clone();
        E::detach(ex.spawn(async move { chain(next, left, done, n - 1) }));
    }
}

impl Workload for BusyChains {
    const NAME: &'static str = "busy_chains";

    fn background<E: Exec>(ex: &E) -> Option<Box<dyn FnOnce()>> {
        let flag = Arc::new(AtomicBool::new(true));
        let busy: Vec<_> = (0..workers())
            .map(|_| {
                let flag = flag.clone();
                ex.spawn(async move {
                    while flag.load(Relaxed) {
                        E::yield_now().await;
                        stall(BUSY_SPIN);
                    }
                })
            })
            .collect();
        let ex = ex.clone();
        Some(Box::new(move || {
            flag.store(false, Relaxed);
            await_all(&ex, busy);
        }))
    }

    fn iter<E: Exec>(ex: &E) {
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let left = Arc::new(AtomicUsize::new(CHAINS));
        for _ in 0..CHAINS {
            let (next, left, done_tx) = (ex.clone(), left.clone(), done_tx.clone());
            E::detach(ex.spawn(async move { chain(next, left, done_tx, CHAIN_LEN) }));
        }
        done_rx.recv().unwrap();
    }
}

struct Channels;

impl Workload for Channels {
    const NAME: &'static str = "channels";

    fn iter<E: Exec>(ex: &E) {
        let (first_send, first_recv) = async_channel::bounded::<()>(1);
        let mut current_recv = first_recv;
        let mut tasks = Vec::with_capacity(RING);
        for _ in 0..RING {
            let (next_send, next_recv) = async_channel::bounded(1);
            let recv = std::mem::replace(&mut current_recv, next_recv);
            tasks.push(ex.spawn(async move {
                for _ in 0..RING_MESSAGES {
                    recv.recv().await.unwrap();
                    next_send.send(()).await.unwrap();
                }
            }));
        }
        ex.block_on(async move {
            for _ in 0..RING_MESSAGES {
                first_send.send(()).await.unwrap();
                current_recv.recv().await.unwrap();
            }
            for task in tasks {
                task.await;
            }
        });
    }
}

/// wyrand, the generator of `fastrand` (which async-executor's bench uses), with its `fork`.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        (t as u64) ^ (t >> 64) as u64
    }

    /// A number in `lo..hi` (slightly biased; fine for a workload mix).
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo) as u64) as usize
    }

    fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}

struct WebServer;

impl Workload for WebServer {
    const NAME: &'static str = "web_server";

    fn iter<E: Exec>(ex: &E) {
        let (db_send, db_recv) = async_channel::bounded::<async_channel::Sender<u64>>(CONNECTIONS / 5);
        let mut db_rng = Rng(SEED);
        let mut web_rng = db_rng.fork();
        // The database: answers each request after 0–9 yields. It stops once every connection
        // task (each holding a clone of `db_send`) has finished.
        let db = ex.spawn(async move {
            while let Ok(reply) = db_recv.recv().await {
                for _ in 0..db_rng.range(0, 10) {
                    E::yield_now().await;
                }
                reply.send(db_rng.next_u64()).await.ok();
            }
        });
        let inner = ex.clone();
        let server = ex.spawn(async move {
            for i in 0..CONNECTIONS {
                // Accepting a connection sometimes takes a while.
                if web_rng.range(0, 17) == 16 {
                    E::yield_now().await;
                }
                let mut rng = web_rng.fork();
                let db_send = db_send.clone();
                E::detach(inner.spawn(async move {
                    if rng.bool() {
                        // Cache hit.
                        E::yield_now().await;
                        return;
                    }
                    for _ in 0..rng.range(5, 21) {
                        let (reply_send, reply_recv) = async_channel::bounded(1);
                        db_send.send(reply_send).await.unwrap();
                        black_box(reply_recv.recv().await.unwrap());
                    }
                    // Writing the response.
                    for _ in 0..rng.range(3, 16) {
                        E::yield_now().await;
                    }
                }));
                if i & 16 == 0 {
                    E::yield_now().await;
                }
            }
        });
        ex.block_on(async move {
            server.await;
            db.await;
        });
    }
}

// ---------------------------------------------------------------------------------------------
// floor

/// Roughly the size of an async-task allocation for an empty future: header (state word,
/// awaiter waker, vtable pointer), schedule function and the future/output slot.
#[repr(C)]
struct FakeTask {
    state: AtomicUsize,
    rest: [usize; 7],
}

/// The physical floor of spawn + run + join on one thread: allocate and free one task-sized
/// block, and do the uncontended read-modify-writes async-task 4.7 does on the task's state word
/// along that path — spawn + schedule (one `fetch_add`, standing in for the reference taken by
/// the `Runnable`), `run` (compare-exchange SCHEDULED → RUNNING, compare-exchange RUNNING →
/// COMPLETED), waking the awaiter (`fetch_or` NOTIFYING, `fetch_and` to clear it), dropping the
/// `Runnable` (`fetch_sub`), and the `JoinHandle` taking the output and dropping its reference
/// (two compare-exchanges). No queue push/pop, no waker clone, no thread notification.
fn floor() {
    let task = Box::new(FakeTask { state: AtomicUsize::new(1), rest: black_box([0; 7]) });
    let task = black_box(task);
    let s = &task.state;
    s.fetch_add(1 << 8, Relaxed);
    let _ = s.compare_exchange(1 | 1 << 8, 2 | 1 << 8, AcqRel, Acquire);
    let _ = s.compare_exchange(2 | 1 << 8, 4 | 1 << 8, AcqRel, Acquire);
    s.fetch_or(16, AcqRel);
    s.fetch_and(!16, AcqRel);
    s.fetch_sub(1 << 8, AcqRel);
    let _ = s.compare_exchange(4, 8, AcqRel, Acquire);
    let _ = s.compare_exchange(8, 0, AcqRel, Acquire);
    drop(black_box(task));
}

/// Spawn + join of one empty task, measured from *inside* a task running on a 1-worker
/// pool/runtime/executor of the given kind: the spawned task is queued on the same (only) worker,
/// the parent suspends on its join handle, the worker runs the child, the child's completion
/// wakes the parent, and the parent takes the output. That is the whole local spawn + join path
/// (allocation, scheduling, two polls, one wake, join-handle bookkeeping) with no cross-thread
/// wakeup or stealing in it, which is the fair comparison with [`floor`]. The time is taken with
/// `iter_custom` inside the task, so the `block_on` hand-off that starts each batch is not in it.
fn spawn_join_one<E: Exec>(ex: &E, iters: u64) -> Duration {
    let inner = ex.clone();
    ex.block_on(ex.spawn(async move {
        let start = Instant::now();
        for _ in 0..iters {
            inner.spawn(async {}).await;
        }
        start.elapsed()
    }))
}

/// `iters` round trips between this thread and a partner thread, both parking between rounds:
/// this thread hands the partner a turn (store, unpark) and parks until the partner hands it
/// back the same way. Thread start and join are outside the timed loop.
fn thread_round_trip(iters: u64) -> Duration {
    let turn = Arc::new(AtomicUsize::new(0));
    let (ready_tx, ready_rx) = mpsc::channel();
    let partner = {
        let (turn, me) = (turn.clone(), std::thread::current());
        std::thread::spawn(move || {
            ready_tx.send(()).unwrap();
            for round in 0..iters as usize {
                while turn.load(Acquire) != 2 * round + 1 {
                    std::thread::park();
                }
                turn.store(2 * round + 2, Release);
                me.unpark();
            }
        })
    };
    ready_rx.recv().unwrap();
    let start = Instant::now();
    for round in 0..iters as usize {
        turn.store(2 * round + 1, Release);
        partner.thread().unpark();
        while turn.load(Acquire) != 2 * round + 2 {
            std::thread::park();
        }
    }
    let elapsed = start.elapsed();
    partner.join().unwrap();
    elapsed
}

/// The member `{executor}_spawn_join_one` of the `floor` group, as an [`ExecJob`].
struct SpawnJoinOne<'a, 'g> {
    group: &'a mut criterion::BenchmarkGroup<'g, criterion::measurement::WallTime>,
    name: String,
}

impl ExecJob for SpawnJoinOne<'_, '_> {
    type Output = ();

    fn run<E: Exec>(self, ex: &E, _pool: Option<&crew::Pool>) {
        self.group.bench_function(self.name, |b| b.iter_custom(|iters| spawn_join_one(ex, iters)));
    }
}

fn floor_group(c: &mut Criterion) {
    let mut group = c.benchmark_group("floor");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    group.bench_function("floor", |b| b.iter(floor));
    group.bench_function("thread_round_trip", |b| b.iter_custom(thread_round_trip));
    group.bench_function("cache_line_round_trip", |b| {
        b.iter_custom(|iters| common::cache_line_round_trips(Duration::ZERO, iters))
    });
    for executor in EXECUTORS {
        with_executor(executor, 1, SpawnJoinOne { group: &mut group, name: format!("{executor}_spawn_join_one") });
    }
    group.finish();
}

fn main() {
    common::main(
        &[
            bench::<SpawnOne>(),
            bench::<SpawnBatch>(),
            bench::<SpawnManyLocal25k>(),
            bench::<SpawnRecursively>(),
            bench::<YieldNowMany>(),
            bench::<BusyChains>(),
            bench::<Channels>(),
            bench::<WebServer>(),
        ],
        &[floor_group],
    );
}
