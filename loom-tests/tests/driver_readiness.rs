//! A source's readiness tick (`src/driver/scheduled_io.rs`): a task looks, tries its read, gets
//! `WouldBlock` and clears what it saw, while the driver sets the source readable again (an
//! edge). Whatever the interleaving, the task never waits with that edge unseen: its next look
//! finds it, or the driver's wake reaches the waker it stored.
//!
//! The tick is the read direction's: a write edge that comes meanwhile is kept, and keeps no
//! stale read readiness (the next read would fail once for it).
//!
//! Planted bugs: `--cfg crew_bug="clear_ignores_tick"` clears the readiness whatever its tick: an
//! edge that came between the look and the clear is lost, and the task waits for good.
//! `--cfg crew_bug="read_edge_moves_write_tick"` moves the write tick alone for every event: the
//! read edge leaves the read tick where the task saw it, so the clear takes the edge away.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use crew::__loom::Readiness;
use crew_loom_tests::support::model;
use loom::thread;

/// Counts its wakes (a plain std atomic: read after the model's threads joined).
#[derive(Default)]
struct Woken(AtomicUsize);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn an_edge_during_a_failed_read_is_seen_or_wakes_the_task() {
    model(3, || {
        let readiness = loom::sync::Arc::new(Readiness::new());
        readiness.set_readable();
        let driver = {
            let readiness = readiness.clone();
            thread::spawn(move || readiness.set_readable())
        };
        let woken = Arc::new(Woken::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        // The task: a look, a read that says `WouldBlock`, the clear, then its wait.
        let seen = readiness.look().expect("readable at first");
        readiness.clear(seen);
        let ready = readiness.poll_readable(&mut cx);
        driver.join().unwrap();
        let again = ready || readiness.poll_readable(&mut cx);
        assert!(again || woken.0.load(SeqCst) > 0, "the edge was lost: the task waits for good");
    });
}

#[test]
fn a_write_edge_during_a_failed_read_is_kept_and_keeps_no_read_readiness() {
    model(3, || {
        let readiness = loom::sync::Arc::new(Readiness::new());
        readiness.set_readable();
        let driver = {
            let readiness = readiness.clone();
            thread::spawn(move || readiness.set_writable())
        };
        // The task: a look, a read that says `WouldBlock`, the clear.
        let seen = readiness.look().expect("readable at first");
        readiness.clear(seen);
        driver.join().unwrap();
        assert!(readiness.is_writable(), "the write edge was lost");
        assert!(readiness.look().is_none(), "a write edge kept the drained read's readiness");
    });
}
