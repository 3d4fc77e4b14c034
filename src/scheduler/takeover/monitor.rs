//! The monitor: a thread per pool that, while the pool is busy, samples each worker's progress
//! word, queues reports of polls that run too long for the reporter thread (`reporter.rs`: the
//! monitor never calls the hook itself), and takes over a worker stuck inside one poll.
//!
//! Invariants:
//! - The sign of a stuck worker is the one the watcher reads (`watch.rs`): a progress word
//!   (`progress.rs`) that shows a poll running and has not moved since an earlier sample. The
//!   owners never read the clock for it; the monitor does, once per sample.
//! - One idea at two scales. The watcher (a parked worker, after 250 µs) moves a stuck owner's
//!   LIFO task, the one task no searcher may take. The monitor (this thread, after the takeover
//!   threshold) gives back the stuck worker itself: when the poll has run that long while tasks
//!   wait behind it (in its own queues, or in the injector while no worker is idle: Go's sysmon
//!   retakes a processor from a thread stuck in a system call on the same conditions), it moves
//!   the stuck core's LIFO task as the watcher would, and hands a spare core (the slot of a
//!   worker that does not run yet) to a new thread, which searches the stuck core's deque and
//!   deferred list like any worker. The pool runs its full count of workers again.
//! - A takeover is one mark on the stuck core's progress word (`progress.rs`: a request, the
//!   asymmetric fence's heavy half, a re-read, a settling compare-exchange), made while the new
//!   thread waits for its core: if the poll ended meanwhile, the mark fails, the spare goes
//!   back, and the thread exits without running anything. If it succeeds, the stuck thread's
//!   end of poll sees it: when its poll returns it gives the core up (queued tasks to the
//!   injector, the core to the spares) and exits. A task the stuck poll pushes into its core
//!   meanwhile is stolen from the deque by the new thread, or rescued from the LIFO slot by the
//!   watcher (the core is still listed as running, its progress word still), or passed on then. So no core is driven by two threads, no task runs twice, nothing is
//!   stranded, and the sleepers' counts stay exact: the new thread inherits the stuck core's
//!   place in them, and the stuck thread never touches them again.
//! - Bounded: the spares are the cap on stuck threads (`Builder::max_stuck_threads`). With no
//!   spare left, no takeover happens (reported once per poll) until a stuck poll returns.
//! - Idle costs nothing: with every worker parked the monitor waits on the sleepers' `MonitorAlarm`
//!   event, which the first worker to unpark notifies only while the monitor waits there. While
//!   busy it wakes once per sampling interval (half the smaller threshold it serves, at least
//!   1 ms), and only shutdown wakes it earlier.
//! - While busy, it also turns crew's I/O driver without blocking at a look that finds nobody
//!   has turned it for `driver::MONITOR_TURN_GAP` (1 ms; Go's `sysmon` waits 10), and at any
//!   other look hands it to a worker parked off it if nobody holds it: a pool whose workers all
//!   run tasks still serves its sockets and timers. A pool without a monitor relies on its
//!   workers' ticks (`reactor_turn.rs`).

use std::io;
use std::time::{Duration, Instant};

use crate::identity::Activity;
use crate::report::{SlowPoll, SlowPollKind};
use crate::scheduler::cores::shared::CurrentPoll;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::takeover::progress::ProgressSnapshot;
use crate::sync::{asymmetric, fence, lock, thread, wait_until, Arc, Deadline, Listener, Ordering};

/// What the monitor remembers of one core between samples.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// The progress word last seen.
    seen: ProgressSnapshot,
    /// When the monitor first saw the word as it is: the poll running now began no later.
    since: Instant,
    /// This poll was reported as slow (or refused a takeover at the cap).
    reported: bool,
    cap_reported: bool,
}

/// Starts `shared`'s monitor thread.
pub(in crate::scheduler) fn start(shared: &Arc<Shared>) -> io::Result<()> {
    let for_thread = shared.clone();
    let handle = thread::Builder::new().name("crew-monitor".to_owned()).spawn(move || run(&for_thread))?;
    shared.keep_thread(handle);
    Ok(())
}

/// The sampling interval: half the smaller threshold the monitor serves, at least 1 ms.
fn interval(shared: &Shared) -> Duration {
    let slow = shared.config.on_slow_poll.as_ref().map(|_| shared.config.slow_poll_threshold);
    let threshold = [shared.config.takeover_after, slow].into_iter().flatten().min().unwrap_or(Duration::from_secs(1));
    (threshold / 2).max(Duration::from_millis(1))
}

/// The monitor thread's body.
fn run(shared: &Arc<Shared>) {
    // The monitor is the side that pays for the workers' cheap end of poll: it registers the
    // process for `membarrier` here (once per process, about 10 ms), off every worker's path.
    asymmetric::prepare();
    let Some(busy) = shared.sleepers.monitor_alarm() else { return };
    let interval = interval(shared);
    let now = Instant::now();
    let mut samples: Vec<Sample> = shared
        .remotes
        .iter()
        .map(|remote| Sample { seen: remote.progress.load(), since: now, reported: false, cap_reported: false })
        .collect();
    loop {
        if shared.is_shutdown() {
            return;
        }
        if shared.sleepers.state().unparked() == 0 {
            // Idle: nothing runs, so nothing is stuck. Sleep until a worker unparks.
            busy.idle_wait.store(true, Ordering::SeqCst);
            let listener = busy.event.listen();
            // Pairs with the load in `Sleepers::count_woken` (and `notify`'s own fence).
            fence(Ordering::SeqCst);
            if shared.sleepers.state().unparked() == 0 && !shared.is_shutdown() {
                listener.wait();
            }
            busy.idle_wait.store(false, Ordering::SeqCst);
            continue;
        }
        let listener = busy.event.listen();
        fence(Ordering::SeqCst);
        if shared.is_shutdown() {
            return;
        }
        // Only shutdown notifies while the monitor is not in its idle wait.
        if wait_until(listener, &Deadline::after(interval)) {
            continue;
        }
        sample(shared, Instant::now(), &mut samples);
        crate::driver::turn_if_forgotten();
    }
}

/// One look at every core: reports and takeovers due at `now`.
fn sample(shared: &Arc<Shared>, now: Instant, samples: &mut [Sample]) {
    for (index, sample) in samples.iter_mut().enumerate() {
        let remote = &shared.remotes[index];
        let seen = remote.progress.load();
        if !seen.same_as(sample.seen) {
            *sample = Sample { seen, since: now, reported: false, cap_reported: false };
            continue;
        }
        sample.seen = seen;
        if !seen.in_poll() || seen.taken() {
            continue;
        }
        let elapsed = now.saturating_duration_since(sample.since);
        if shared.reports.is_some() && !sample.reported && elapsed >= shared.config.slow_poll_threshold {
            // The flag and the report under the lock the owner's `Returned` report takes: the
            // poll's end is reported after this (`reporter.rs`).
            let mut current = lock(&remote.current);
            if remote.progress.report(seen) {
                sample.reported = true;
                current.slow_since = Some(sample.since);
                shared.queue_report(SlowPollKind::Slow, index, elapsed, &current);
            }
        }
        let Some(after) = shared.config.takeover_after else { continue };
        if elapsed < after || !shared.work_waits_behind(index) {
            continue;
        }
        // Reported just now, perhaps: the word changed by that flag only.
        let seen = remote.progress.load();
        if !seen.same_as(sample.seen) {
            continue;
        }
        match take_over(shared, index, seen, Some((sample.since, elapsed))) {
            Takeover::NoSpare if !sample.cap_reported => {
                sample.cap_reported = true;
                let current = lock(&remote.current);
                // Only while the poll still runs: it is about that poll.
                if remote.progress.load().same_as(seen) {
                    shared.queue_report(SlowPollKind::CapReached, index, elapsed, &current);
                }
            }
            Takeover::Done | Takeover::NoSpare | Takeover::PollEnded => {}
        }
    }
}

/// Hands core `index`, whose owner was seen as `seen` inside a poll, to a new thread with a
/// spare core (see the module docs). With `report` (when the monitor first saw the poll, and
/// how long it has run), a pool with a hook queues a `TakenOver` report.
pub(in crate::scheduler) fn take_over(
    shared: &Arc<Shared>,
    index: usize,
    seen: ProgressSnapshot,
    report: Option<(Instant, Duration)>,
) -> Takeover {
    if shared.is_shutdown() {
        return Takeover::PollEnded;
    }
    let Some(spare) = lock(&shared.spares).pop() else { return Takeover::NoSpare };
    let remote = &shared.remotes[index];
    // The new thread runs as the stuck worker's number (and is named so).
    // Relaxed: see `Shared::worker_number`.
    shared.slot_states[spare.index].worker.store(shared.worker_number(index), Ordering::Relaxed);
    let started = Shared::start_worker_if(shared, spare, |spare| {
        // The flag and the report under the lock the owner's `Returned` report takes (see
        // `reporter.rs`).
        let mut current = report.filter(|_| shared.reports.is_some()).map(|report| (lock(&remote.current), report));
        if !remote.progress.take(seen) {
            return false;
        }
        // Counted before the new thread can run, and so exit: shutdown waits for it.
        shared.cores_running.fetch_add(1, Ordering::SeqCst);
        // Before the new thread runs anything, so that a task run by it sees the counts. The
        // monitor is these counters' one writer.
        shared.counters[index].takeovers.incr();
        shared.note_active(spare.index);
        // The watcher's rescue, done by the monitor: the stuck core's private task.
        if let Some(runnable) = remote.lifo.take() {
            shared.record_queued(&runnable, Activity::Deque(spare.index));
            spare.local.push(runnable);
        }
        if let Some((current, (since, elapsed))) = current.as_mut() {
            current.slow_since.get_or_insert(*since);
            shared.queue_report(SlowPollKind::TakenOver, index, *elapsed, current);
        }
        true
    });
    match started {
        Ok(None) => Takeover::Done,
        Ok(Some(spare)) | Err((spare, _)) => {
            lock(&shared.spares).push(spare);
            Takeover::PollEnded
        }
    }
}

impl Shared {
    /// True if tasks wait behind core `index`'s stuck poll: in its own queues (whatever the other
    /// workers do: they are one worker short), or in the injector while no worker is idle
    /// (parked or searching, and so about to take them). Go's sysmon retakes a processor from a
    /// thread stuck in a system call on the same two conditions.
    fn work_waits_behind(&self, index: usize) -> bool {
        let remote = &self.remotes[index];
        if remote.has_lifo_task() || !self.stealers[index].is_empty() || !remote.deferred.lock().is_empty() {
            return true;
        }
        let state = self.sleepers.state();
        !self.injector.is_empty() && state.unparked() == self.workers() && state.searching() == 0
    }

    /// Queues a report on core `index`'s poll, `current` (its lock held), for the hook, if any.
    fn queue_report(&self, kind: SlowPollKind, index: usize, elapsed: Duration, current: &CurrentPoll) {
        let Some(reports) = &self.reports else { return };
        let task = current.task.clone();
        let worker = self.worker_number(index);
        // The polling thread's local tasks, which no takeover moves: they wait behind the poll.
        let local_tasks = lock(&self.remotes[index].home).as_ref().map_or(0, |home| home.live());
        reports.queue(SlowPoll {
            kind,
            task,
            thread_name: self.config.thread_name.clone(),
            worker,
            elapsed,
            local_tasks,
        });
    }

    /// Called by the owner of core `index` when a poll the monitor reported returns: queues the
    /// `Returned` report (the hook runs on the reporter thread, never here).
    pub(in crate::scheduler) fn report_returned(&self, index: usize) {
        if self.reports.is_none() {
            return;
        }
        let current = lock(&self.remotes[index].current);
        let elapsed = current.slow_since.map_or(Duration::ZERO, |since| since.elapsed());
        self.queue_report(SlowPollKind::Returned, index, elapsed, &current);
    }
}

/// What a takeover attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scheduler) enum Takeover {
    /// A new thread runs a spare core; the stuck thread gives its core up after the poll.
    Done,
    /// No spare core: the cap of stuck threads is reached.
    NoSpare,
    /// The poll ended first, the pool shuts down, or no thread could start: nothing changed.
    PollEnded,
}
