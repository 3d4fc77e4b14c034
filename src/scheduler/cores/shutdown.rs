//! How a pool stops: every core's loop exits, every task still queued or waiting for a wake is
//! dropped exactly once, outside every lock, and every thread is joined.
//!
//! Invariants:
//! - Shutdown (dropping a `Pool`) happens once: set `shutdown`, wake every sleeper, wait until
//!   every core's worker loop has exited and dropped its queued tasks (its LIFO slot's with the
//!   core, `lifo.rs`), wake every registered (pending) task so that it is scheduled into the
//!   injector, drop the injector's tasks and mark the pool `reaped`, wait until every future of
//!   the pool's is gone (the registry's count, `registry.rs`), then join every thread.
//! - A push that races the last drain is dropped by either side (a SeqCst fence on each side,
//!   see `Shared::push_remote`); after it, by a short-lived reaper thread that the pusher
//!   starts (a wake that was on its way, or a task whose poll on a thread blocked in `block_on`
//!   ends). So every task ends exactly once: run to completion, cancelled, or dropped here; and
//!   the shutdown returns only after that end, but for a task the shutting-down thread is itself
//!   inside of (a task that drops its own pool: `context::works_for`), which ends after.
//! - No task is dropped inside a wake or under one of crew's locks: a future's drop may wake
//!   other tasks or take locks that a waker's caller holds.

use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::Runnable;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::worker::Core;
use crate::sync::Arc;
use crate::sync::{fence, is_finished, lock, planted_bug, retry, thread, wait_until, Deadline, Listener, Ordering};
use event_listener::EventListener;

impl Shared {
    /// Stops the pool: see the module docs for the order of steps. Waits for every thread,
    /// including one stuck forever inside a poll.
    pub(crate) fn shutdown(&self) {
        self.shutdown_within(None);
    }

    /// As [`shutdown`](Shared::shutdown), but waits for the worker loops only until `deadline`:
    /// then drops every task it can reach and returns false, leaving the threads still inside a
    /// poll to exit (dropping their own queued tasks) once it returns. True if every thread
    /// was joined. False too if another caller had begun the shutdown already.
    pub(crate) fn shutdown_within(&self, deadline: Option<Deadline>) -> bool {
        if self.shutdown.swap(true, Ordering::SeqCst) {
            return false;
        }
        // Shutdown blocks this thread. If it runs a worker (of this pool or another), its core
        // goes to a fresh thread first: nothing waits behind us, and a pool dropped from one of
        // its own workers does not wait for itself (the fresh thread sees the flag and exits).
        context::hand_off_core();
        self.sleepers.notify_all();
        self.wake_orphans();
        self.spare_threads.release_all();
        if let Some(busy) = self.sleepers.monitor_alarm() {
            busy.event.notify(usize::MAX);
        }
        if let Some(reports) = &self.reports {
            reports.wake_for_shutdown();
        }
        let all_exited = self.wait_for_cores(deadline.as_ref());
        // Pairs with the fence in `push_remote`: from here on every push is seen by a drain.
        fence(Ordering::SeqCst);
        if let Some(registry) = self.registry() {
            // Each pending task is scheduled into the injector (not dropped inside `wake`).
            for waker in registry.close() {
                waker.wake();
            }
        }
        // Before joining: a thread blocked in `block_on` inside a task may be waiting for one
        // of these tasks to end, or for one whose wake is still on its way (dropped by its
        // pusher once the pool is reaped).
        self.reap();
        // A wake that raced the drains pushed its task after them, for a reaper thread to drop
        // (`reap_late`): wait for every future to be gone, but the one this thread may be inside
        // of (a task that drops its own pool), which cannot end before this returns.
        let own = usize::from(context::works_for(self));
        let all_dropped = planted_bug!("drop_skips_live_wait")
            || self.registry().map_or(true, |registry| registry.wait_for_futures(own, deadline.as_ref()));
        let all_exited = all_exited && all_dropped;
        let me = thread::current().id();
        loop {
            let handles = std::mem::take(&mut *lock(&self.threads));
            if handles.is_empty() {
                return all_exited;
            }
            for handle in handles {
                // Past the deadline, a thread still inside a poll is left to exit on its own
                // (dropping its handle detaches it); the others have returned or are about to.
                if handle.thread().id() != me && (all_exited || is_finished(&handle)) {
                    // A worker thread only panics on a bug in crew; shutdown goes on regardless.
                    let _ = handle.join();
                }
            }
            if !all_exited {
                return false;
            }
        }
    }

    /// Called by a worker loop that exits for shutdown: drops its queued tasks, then counts
    /// the core out.
    pub(in crate::scheduler) fn retire_core(&self, core: Box<Core>) {
        let remote = &self.remotes[core.index];
        // Each taken out under its lock and dropped after it: a future's drop may schedule
        // other tasks, and user code never runs under crew's locks. The LIFO slot's task goes
        // with the core (`LifoOwner`'s drop, `lifo.rs`).
        let deferred = std::mem::take(&mut *remote.deferred.lock());
        drop(deferred);
        let inbox = std::mem::take(&mut *lock(&remote.inbox.queue));
        // Relaxed: see `Inbox`; a push after this sees the shutdown flag (`push_inbox`).
        remote.inbox.len.store(0, Ordering::Relaxed);
        drop(inbox);
        drop(core);
        // SeqCst pairs with the loads in `wait_for_cores`.
        if self.cores_running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.cores_exited.notify(usize::MAX);
        }
    }

    /// Waits until every core's loop has exited (true), or until `deadline` (false).
    fn wait_for_cores(&self, deadline: Option<&Deadline>) -> bool {
        loop {
            if self.cores_running.load(Ordering::SeqCst) == 0 {
                return true;
            }
            let listener = self.cores_exited.listen();
            // Pairs with `notify`'s fence: the listener is registered before the re-check.
            fence(Ordering::SeqCst);
            if self.cores_running.load(Ordering::SeqCst) == 0 {
                return true;
            }
            match deadline {
                None => listener.wait(),
                Some(deadline) => {
                    if !wait_until(listener, deadline) && deadline.has_passed() {
                        return self.cores_running.load(Ordering::SeqCst) == 0;
                    }
                }
            }
        }
    }

    /// Called by a thread whose poll ended to find its core taken over (or that hands off a core
    /// taken over during its poll): its queued tasks go to the injector, announced, and the core
    /// becomes a spare for the next takeover. After shutdown, the injector's drains (or a reaper
    /// thread) drop those tasks, as for any late push.
    pub(in crate::scheduler) fn give_up_core(&self, mut core: Box<Core>) {
        // Relaxed: as in `run` (which stores it before it gets here too); before the inbox is
        // cleared below, so that a `spawn_pinned` push that comes after sees it (`pinned.rs`).
        self.slot_states[core.index].active.store(false, Ordering::Relaxed);
        let remote = &self.remotes[core.index];
        let mut queued: Vec<Runnable> = core.lifo.take().into_iter().collect();
        queued.append(&mut remote.deferred.lock());
        queued.extend(std::iter::from_fn(|| Core::take_inbox_of(self, core.index)));
        queued.extend(std::iter::from_fn(|| core.local.pop()));
        for runnable in queued {
            if planted_bug!("takeover_drops_queue") {
                drop(runnable);
            } else {
                self.push_remote(runnable);
            }
        }
        remote.progress.reset(core.polls);
        core.reset_as_spare();
        // Relaxed: see `Shared::worker_number`; the core runs as another number next time.
        self.slot_states[core.index].worker.store(usize::MAX, Ordering::Relaxed);
        lock(&self.spares).push(core);
        // SeqCst pairs with the loads in `wait_for_cores`: the takeover counted the new thread.
        if self.cores_running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.cores_exited.notify(usize::MAX);
        }
    }

    /// Takes every task out of the injector. The caller drops them, outside every lock.
    fn take_injector(&self) -> Vec<Runnable> {
        std::iter::from_fn(|| retry(|| self.injector.steal())).collect()
    }

    /// Drops the injector's tasks until it stays empty: a dropped future may wake other tasks
    /// of this pool, which land in the injector in turn.
    fn drain_injector(&self) {
        loop {
            let taken = self.take_injector();
            if taken.is_empty() {
                return;
            }
            drop(taken);
        }
    }

    /// Shutdown's last drain: drops what the injector holds, marks the pool reaped, and drops
    /// what was pushed meanwhile. A push after this is dropped by its pusher (`reap_late`).
    fn reap(&self) {
        self.drain_injector();
        self.reaped.store(true, Ordering::SeqCst);
        // Pairs with the fence in `push_remote`.
        fence(Ordering::SeqCst);
        self.drain_injector();
    }

    /// A task was pushed after shutdown's last drain (a wake from another thread racing it, or
    /// a task whose poll on a thread blocked in `block_on` just ended): hands it to a fresh
    /// thread to drop, since this thread may be inside a `wake()` whose caller holds a lock the
    /// future's destructor needs. Rare: only tasks that were scheduled or running when the
    /// drain ran can come here, and each does once.
    #[cold]
    pub(in crate::scheduler) fn reap_late(&self) {
        let late = self.take_injector();
        if late.is_empty() {
            return;
        }
        // If no thread can be had, the closure, and the tasks with it, are dropped here: that
        // may deadlock only if a caller up the stack holds a lock the destructors take, where
        // leaking them would lose their drops for sure.
        let _ = thread::Builder::new().name("crew-reaper".into()).spawn(move || drop(late));
    }
}

/// Notes a panic no awaiter will see in `pool`, described by `what`, and starts the pool's
/// shutdown on a thread of its own (`unhandled.rs`). Nothing if the pool does not shut down on
/// one.
pub(crate) fn note_unhandled_panic(pool: &Arc<Shared>, what: String) {
    if let Some(unhandled) = &pool.unhandled {
        let pool = pool.clone();
        unhandled.note(what, move || pool.shutdown());
    }
}

impl Shared {
    /// Whether the pool was built with `unhandled_panic(ShutdownPool)`.
    pub(crate) fn shuts_down_on_unhandled_panic(&self) -> bool {
        self.unhandled.is_some()
    }

    /// The note of the panic that shut the pool down, if any.
    pub(crate) fn unhandled_note(&self) -> Option<String> {
        self.unhandled.as_ref()?.noted()
    }

    /// A registration for the note, if the pool shuts down on an unhandled panic: look at
    /// [`unhandled_note`](Shared::unhandled_note) after it.
    pub(crate) fn listen_unhandled(&self) -> Option<EventListener> {
        Some(self.unhandled.as_ref()?.listen())
    }

    /// Waits for the shutdown an unhandled panic started, if any (the pool's drop).
    pub(crate) fn join_unhandled_shutdown(&self) {
        if let Some(unhandled) = &self.unhandled {
            unhandled.join_shutdown();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sync::lock;

    #[test]
    fn threads_that_gave_their_core_away_are_reaped() {
        // No monitor thread: the list holds worker threads only. One spare thread at most
        // (`max_stuck_threads(0)`: the cap is one per worker), so that threads do exit.
        let pool = crate::Builder::new().workers(1).takeover(false).max_stuck_threads(0).build().unwrap();
        let handles = || lock(&pool.shared().threads).len();
        // Each round, three tasks block in `block_on` at once: each hands the core to a spare
        // or a new thread, and, released, each either waits as the spare (one at a time) or
        // returns. Once the threads of the rounds before have returned, the list (pruned at each
        // thread start) holds the core's thread, the spare and this round's three: at most 5,
        // 8 with a round's three still returning. Without reaping it holds every thread started
        // (about two a round).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
            let tasks: Vec<_> = (0..3)
                .map(|_| {
                    let barrier = barrier.clone();
                    pool.spawn(async move {
                        crate::block_on(async move {
                            barrier.wait();
                        })
                    })
                })
                .collect();
            barrier.wait();
            for task in tasks {
                crate::block_on(task);
            }
            let started = pool.metrics().threads_started;
            if started >= 40 && handles() <= 8 {
                break;
            }
            // A bound on the starts too: without reaping, threads pile up until none can start.
            assert!(
                started < 1000 && std::time::Instant::now() < deadline,
                "{} thread handles kept after {started} thread starts",
                handles()
            );
        }
    }
}
