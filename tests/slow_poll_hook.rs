//! Where the slow-poll hook runs (`src/scheduler/takeover/reporter.rs`): on the pool's reporter thread,
//! so that a hook that is slow or blocks never delays a takeover, a worker or a task; where
//! `crew::spawn` inside it lands; and that a hook that falls behind costs dropped reports,
//! counted, never a stall.
//!
//! Every test waits for events (a channel, a counter, a report), never for time: a hang becomes
//! a failure through `with_timeout`. The thresholds are set low (1 ms) only so that the tests
//! finish soon.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::{wait_until, with_timeout};
use crew::{SlowPoll, SlowPollKind};

const QUICK: Duration = crew::config::MIN_TAKEOVER_AFTER;

/// A hook that, from its first call on, blocks until released: a log shipper that hangs.
#[derive(Clone)]
struct BlockedHook {
    calls: Arc<AtomicUsize>,
    entered: Arc<Mutex<Option<mpsc::Sender<SlowPollKind>>>>,
    release: Arc<Mutex<mpsc::Receiver<()>>>,
    released: Arc<AtomicBool>,
}

impl BlockedHook {
    /// The hook, the receiver of each call's report kind, and the sender that releases it.
    fn new() -> (BlockedHook, mpsc::Receiver<SlowPollKind>, mpsc::Sender<()>) {
        let (entered_tx, entered_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel();
        let hook = BlockedHook {
            calls: Arc::new(AtomicUsize::new(0)),
            entered: Arc::new(Mutex::new(Some(entered_tx))),
            release: Arc::new(Mutex::new(release_rx)),
            released: Arc::new(AtomicBool::new(false)),
        };
        (hook, entered_rx, release_tx)
    }

    fn hook(&self) -> impl Fn(&SlowPoll) + Send + Sync + 'static {
        let this = self.clone();
        move |report| {
            this.calls.fetch_add(1, Ordering::SeqCst);
            if let Some(entered) = this.entered.lock().unwrap().as_ref() {
                let _ = entered.send(report.kind());
            }
            if !this.released.load(Ordering::SeqCst) {
                // Blocks every call until the test releases it (a closed channel releases too).
                let _ = this.release.lock().unwrap().recv();
                this.released.store(true, Ordering::SeqCst);
            }
        }
    }

    fn is_released(&self) -> bool {
        self.released.load(Ordering::SeqCst)
    }
}

/// One worker, no takeover, every poll over 1 ms reported to `hook`: only that worker can run
/// what is queued on the pool.
fn one_worker_pool(hook: &BlockedHook) -> crew::Pool {
    crew::Pool::builder()
        .workers(1)
        .takeover(false)
        .slow_poll_threshold(QUICK)
        .on_slow_poll(hook.hook())
        .build()
        .unwrap()
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn a_blocked_hook_delays_no_takeover() {
    with_timeout(|| {
        const WORKERS: usize = 2;
        let (hook, entered, release) = BlockedHook::new();
        let pool = crew::Pool::builder()
            .workers(WORKERS)
            .takeover_after(QUICK)
            .slow_poll_threshold(QUICK)
            .on_slow_poll(hook.hook())
            .build()
            .unwrap();
        // Both workers blocked in a poll until the tasks behind them have all run.
        let all_done = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = mpsc::channel();
        let blockers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (all_done, started_tx) = (all_done.clone(), started_tx.clone());
                pool.spawn(async move {
                    started_tx.send(()).unwrap();
                    while !all_done.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for _ in 0..WORKERS {
            started_rx.recv().unwrap();
        }
        // The hook hears of the first slow poll and blocks from then on.
        entered.recv().unwrap();
        let behind: Vec<_> = (0..200).map(|i| pool.spawn(async move { i })).collect();
        let sum: usize = behind.into_iter().map(crew::block_on).sum();
        assert_eq!(sum, (0..200).sum::<usize>());
        assert!(!hook.is_released(), "the tasks completed while the hook was still blocked");
        assert!(pool.metrics().total.takeovers >= 1, "{}", pool.metrics());
        all_done.store(true, Ordering::SeqCst);
        release.send(()).unwrap();
        for blocker in blockers {
            crew::block_on(blocker);
        }
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn a_blocked_hook_delays_no_worker_after_its_slow_poll_returns() {
    with_timeout(|| {
        let (hook, entered, release) = BlockedHook::new();
        let pool = one_worker_pool(&hook);
        let (slow_tx, slow_rx) = mpsc::channel::<()>();
        let slow = pool.spawn(async move { slow_rx.recv().unwrap() });
        assert_eq!(entered.recv().unwrap(), SlowPollKind::Slow);
        // The slow poll returns: its `Returned` report is due, with the hook still blocked.
        slow_tx.send(()).unwrap();
        crew::block_on(slow);
        let after = pool.spawn(async { 7 });
        assert_eq!(crew::block_on(after), 7);
        assert!(!hook.is_released(), "the worker ran on while the hook was still blocked");
        release.send(()).unwrap();
        assert_eq!(entered.recv().unwrap(), SlowPollKind::Returned, "reported once the hook is free");
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn crew_spawn_in_a_hook_lands_on_the_pool_whose_report_it_is() {
    with_timeout(|| {
        let (landed_tx, landed_rx) = mpsc::channel::<(SlowPollKind, Option<String>)>();
        let landed_tx = Mutex::new(landed_tx);
        let pool = crew::Pool::builder()
            .workers(1)
            .thread_name("hooked")
            .takeover_after(QUICK)
            .slow_poll_threshold(QUICK)
            .on_slow_poll(move |report| {
                let (kind, tx) = (report.kind(), landed_tx.lock().unwrap().clone());
                crew::spawn(async move {
                    let _ = tx.send((kind, std::thread::current().name().map(str::to_owned)));
                })
                .detach();
            })
            .build()
            .unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let stuck = pool.spawn(async move { release_rx.recv().unwrap() });
        // A task behind the stuck one: the takeover is due.
        let behind = pool.spawn(async {});
        crew::block_on(behind);
        release_tx.send(()).unwrap();
        crew::block_on(stuck);
        // One task per report: the poll was slow, taken over, and returned.
        let mut kinds = Vec::new();
        for _ in 0..3 {
            let (kind, thread) = landed_rx.recv().unwrap();
            let thread = thread.unwrap_or_default();
            assert!(thread.starts_with("hooked-"), "a task spawned by the hook ({kind:?}) ran on {thread:?}");
            kinds.push(kind);
        }
        kinds.sort_by_key(|kind| format!("{kind:?}"));
        assert_eq!(kinds, [SlowPollKind::Returned, SlowPollKind::Slow, SlowPollKind::TakenOver]);
    });
}

#[test]
#[cfg_attr(miri, ignore = "needs over a thousand slow polls")]
fn a_hook_that_falls_behind_drops_reports_and_counts_them() {
    with_timeout(|| {
        let (hook, _entered, release) = BlockedHook::new();
        let pool = one_worker_pool(&hook);
        // Slow polls (each a few ms long), two reports each, until the queue overflows.
        while pool.metrics().slow_poll_reports_dropped == 0 {
            crew::block_on(pool.spawn(async { std::thread::sleep(Duration::from_millis(4)) }));
        }
        // The pool still runs, with the hook still blocked.
        assert_eq!(crew::block_on(pool.spawn(async { 1 })), 1);
        assert!(!hook.is_released());
        assert!(pool.metrics().to_string().contains("slow-poll reports dropped"), "{}", pool.metrics());
        let dropped = pool.metrics().slow_poll_reports_dropped;
        drop(release);
        // Once free, the hook hears of what was queued: at least the queue's 1,024.
        wait_until("the queued reports are delivered", || hook.calls.load(Ordering::SeqCst) > 1024);
        assert!(pool.metrics().slow_poll_reports_dropped >= dropped, "never goes backwards");
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn dropping_a_pool_does_not_wait_for_a_blocked_hook() {
    with_timeout(|| {
        let (hook, entered, release) = BlockedHook::new();
        let pool = one_worker_pool(&hook);
        let (slow_tx, slow_rx) = mpsc::channel::<()>();
        let slow = pool.spawn(async move { slow_rx.recv().unwrap() });
        entered.recv().unwrap();
        slow_tx.send(()).unwrap();
        crew::block_on(slow);
        drop(pool);
        assert!(!hook.is_released(), "the pool was dropped while its hook was blocked");
        drop(release);
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn nothing_is_delivered_once_the_pool_is_dropped() {
    with_timeout(|| {
        let (hook, entered, release) = BlockedHook::new();
        // Dropped with the hook, when the reporter, its last owner, exits.
        let hook_gone = Arc::new(AtomicUsize::new(0));
        let pool = {
            let (call, gone) = (hook.hook(), common::DropCounter(hook_gone.clone()));
            crew::Pool::builder()
                .workers(1)
                .takeover(false)
                .slow_poll_threshold(QUICK)
                .on_slow_poll(move |report| {
                    let _owned = &gone;
                    call(report)
                })
                .build()
                .unwrap()
        };
        let (slow_tx, slow_rx) = mpsc::channel::<()>();
        let slow = pool.spawn(async move { slow_rx.recv().unwrap() });
        assert_eq!(entered.recv().unwrap(), SlowPollKind::Slow);
        slow_tx.send(()).unwrap();
        crew::block_on(slow);
        // The worker ended the slow poll (queuing its `Returned` report) before this one.
        crew::block_on(pool.spawn(async {}));
        drop(pool);
        release.send(()).unwrap();
        wait_until("the reporter's exit", || hook_gone.load(Ordering::SeqCst) == 1);
        assert_eq!(hook.calls.load(Ordering::SeqCst), 1, "the report queued before the drop was not delivered");
    });
}
