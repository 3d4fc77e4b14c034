//! [`block_in_place`]: run blocking code inside a task without holding up the worker's queues.
//!
//! Invariants: on a worker thread, the worker's core (its queues) goes to a fresh thread before
//! `f` runs, exactly as `block_on` on a worker does, and this thread exits once the task's
//! current poll returns. Anywhere else `f` just runs. It never panics on its own: if no fresh
//! thread can start, `f` runs with the core still here, its poll marked running again, so the
//! monitor takes the core over once it is stuck and a thread can start (with takeover on).

/// Runs `f`, which may block, from inside a task, without stranding the tasks queued behind the
/// current worker: on a crew worker thread, the worker's queues first go to a fresh thread that
/// carries on as that worker; this thread runs `f`, finishes the task's current poll, and exits.
/// Outside a worker (a plain thread, `block_on`'s thread, a blocking-pool thread) it just runs
/// `f`.
///
/// crew also takes over a worker stuck inside one poll on its own
/// ([`Builder::takeover`](crate::Builder::takeover)); `block_in_place` is the explicit form,
/// for code that knows it will block, which hands the queues off at once instead of after the
/// takeover threshold. Unlike tokio's, it never panics, whatever the pool or thread: if the
/// fresh thread cannot start (a thread limit), `f` runs with the queues still on this thread,
/// and the takeover hands them off as it does for any stuck poll once a thread can start. For
/// blocking work that need not run inside the task, [`spawn_blocking`](crate::spawn_blocking)
/// is cheaper: it reuses its threads.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async {
///     let text = crew::block_in_place(|| std::fs::read_to_string("Cargo.toml").unwrap());
///     text.len()
/// });
/// assert!(crew::block_on(handle) > 0);
/// // Outside a worker it just runs the closure.
/// assert_eq!(crew::block_in_place(|| 7), 7);
/// ```
pub fn block_in_place<F, T>(f: F) -> T
where
    F: FnOnce() -> T,
{
    // An error leaves the core with this thread: `f` runs all the same (see the module docs).
    // Inside a paused pool's task, `f` is the task's work: the clock does not move while it runs
    // (`scheduler/cores/task_run.rs`).
    let _ = crate::scheduler::try_hand_off_core();
    f()
}
