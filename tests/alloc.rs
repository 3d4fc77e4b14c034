//! Allocation cost of spawning, measured with a counting global allocator (its own test binary,
//! because `#[global_allocator]` applies to the whole process).
//!
//! Only allocations made by the spawning thread while it spawns are counted (a thread-local
//! switch), so the workers running the tasks and other tests running in parallel do not
//! disturb the count.
//!
//! Expected cost: one allocation per task, for async-task's single block holding the header,
//! the schedule function and the future. The rest is amortized: crossbeam-deque's worker
//! buffer grows by doubling and its injector allocates one block per 63 tasks, a private
//! pool's registry shard is a `Vec` that grows by doubling, and crossbeam-epoch allocates once
//! per thread. Hence the bound `N + N / 10 + SMALL`.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::with_timeout;

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// Counted allocations by size in bytes (the last entry: every size from it up).
static BY_SIZE: [AtomicUsize; 1024] = [const { AtomicUsize::new(0) }; 1024];

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation(size: usize) {
    // `try_with`: the allocator may run while this thread's locals are being torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BY_SIZE[size.min(BY_SIZE.len() - 1)].fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` unchanged; counting touches no allocation.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const N: usize = if cfg!(miri) { 100 } else { 10_000 };

/// Allocations for amortized, per-thread or per-pool structures that do not grow with N.
const SMALL: usize = 16;

/// The number of allocations this thread makes while running `body`.
fn allocations_in(body: impl FnOnce()) -> usize {
    counted(body).0
}

/// Runs `body`, counting the allocations this thread makes meanwhile: how many, and how many of
/// each size (indexed as [`BY_SIZE`]).
///
/// Tests share the process-wide counters, so they take turns through this lock, and read the
/// counters before and after only while they hold it (a reading taken before waiting for the
/// lock would add the turn of the test that held it to this one's).
fn counted(body: impl FnOnce()) -> (usize, Vec<usize>) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let sizes = || BY_SIZE.iter().map(|count| count.load(Ordering::SeqCst)).collect::<Vec<usize>>();
    let (before, sizes_before) = (ALLOCATIONS.load(Ordering::SeqCst), sizes());
    COUNTING.with(|c| c.set(true));
    body();
    COUNTING.with(|c| c.set(false));
    let by_size = sizes().iter().zip(&sizes_before).map(|(after, before)| after - before).collect();
    (ALLOCATIONS.load(Ordering::SeqCst) - before, by_size)
}

fn assert_about_one_allocation_per_task(allocations: usize, per_task: usize) {
    let tasks = per_task * N;
    eprintln!("{allocations} allocations for {N} tasks");
    assert!(allocations >= tasks, "{allocations} allocations for {N} tasks: fewer than {per_task} each?");
    assert!(
        allocations <= tasks + N / 10 + SMALL,
        "{allocations} allocations for {N} tasks ({per_task} each expected)"
    );
}

/// Spawns `N` tasks with `spawn`, not counting the handles' `Vec`, then awaits them. Returns
/// the number of allocations the spawns made and the sum of the tasks' outputs.
async fn spawn_n<S, H>(spawn: S) -> (usize, usize)
where
    S: Fn(usize) -> H,
    H: std::future::Future<Output = usize>,
{
    let mut handles = Vec::with_capacity(N);
    let allocations = allocations_in(|| handles.extend((0..N).map(&spawn)));
    let mut sum = 0;
    for handle in handles {
        sum += handle.await;
    }
    (allocations, sum)
}

#[test]
fn spawning_from_a_global_pool_worker_costs_about_one_allocation_per_task() {
    with_timeout(|| {
        let (allocations, sum) = crew::block_on(crew::spawn(spawn_n(|i| crew::spawn(async move { i }))));
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 1);
    });
}

#[test]
fn spawning_from_a_private_pool_worker_costs_about_one_allocation_per_task() {
    with_timeout(|| {
        let pool = std::sync::Arc::new(crew::Pool::builder().workers(2).build().unwrap());
        let inner = pool.clone();
        let (allocations, sum) =
            crew::block_on(pool.spawn(async move { spawn_n(|i| inner.spawn(async move { i })).await }));
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 1);
    });
}

#[test]
fn spawning_from_outside_the_pool_costs_about_one_allocation_per_task() {
    with_timeout(|| {
        // Warm up: start the global pool and this thread's crossbeam-epoch handle.
        crew::block_on(crew::spawn(async {}));
        let (allocations, sum) = crew::block_on(spawn_n(|i| crew::spawn(async move { i })));
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 1);
    });
}

#[test]
fn a_future_of_2048_bytes_or_more_costs_a_second_allocation_as_documented() {
    with_timeout(|| {
        crew::block_on(crew::spawn(async {}));
        let (allocations, sum) = crew::block_on(spawn_n(|i| {
            let big = [i as u8; 4096];
            crew::spawn(async move { black_box_len(&big) + i - 4096 })
        }));
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 2);
    });
}

fn black_box_len(bytes: &[u8]) -> usize {
    std::hint::black_box(bytes).len()
}

#[test]
fn a_named_task_costs_one_allocation_more_for_its_name() {
    with_timeout(|| {
        crew::block_on(crew::spawn(async {}));
        // A `&'static str` name is kept as it is: the one extra allocation is its identity's
        // out-of-line part.
        let (allocations, sum) =
            crew::block_on(spawn_n(|i| crew::task::Builder::new().name("named").spawn(async move { i })));
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 2);
        // A `String` name is moved in: the caller's allocation, then the same one extra.
        let (allocations, sum) = crew::block_on(async {
            let names: Vec<String> = (0..N).map(|i| format!("conn-{i}")).collect();
            let names = std::cell::RefCell::new(names.into_iter());
            spawn_n(|i| {
                let name = names.borrow_mut().next().unwrap();
                crew::task::Builder::new().name(name).spawn(async move { i })
            })
            .await
        });
        assert_eq!(sum, N * (N - 1) / 2);
        assert_about_one_allocation_per_task(allocations, 2);
    });
}

/// The sizes of the allocations that `body` made `N` times or more (once per task or more).
fn sizes_per_task_in(body: impl FnOnce()) -> Vec<usize> {
    let (_, by_size) = counted(body);
    (0..by_size.len()).filter(|&size| by_size[size] >= N).collect()
}

/// Spawns `N` local tasks on this thread and awaits them, returning the sizes allocated once
/// per task.
async fn local_task_sizes() -> Vec<usize> {
    let mut handles = Vec::with_capacity(N);
    let sizes = sizes_per_task_in(|| handles.extend((0..N).map(|i| crew::spawn_local(async move { i }))));
    let mut sum = 0;
    for handle in handles {
        sum += handle.await;
    }
    assert_eq!(sum, N * (N - 1) / 2);
    sizes
}

#[test]
fn a_local_task_carries_a_registration_only_where_a_registry_lists_it() {
    with_timeout(|| {
        // Inside `block_on` on this thread, outside any pool: no registry, and one allocation,
        // the task's.
        let sizes = crew::block_on(local_task_sizes());
        let [unregistered] = sizes[..] else { panic!("one allocation per task, not {sizes:?}") };
        // Inside a task of a pool with the task dump on, which lists local tasks in its
        // registry: the task's allocation and its record's (its identity's out-of-line part,
        // the smaller).
        let pool = crew::Pool::builder().workers(1).task_dump(true).build().unwrap();
        let sizes = crew::block_on(pool.spawn_pinned(local_task_sizes));
        let [_, registered] = sizes[..] else { panic!("two allocations per task, not {sizes:?}") };
        eprintln!("a local task's allocation: {unregistered} bytes, {registered} listed for the dump");
        assert!(unregistered < registered, "{unregistered} bytes without a registry, {registered} with one");
    });
}
