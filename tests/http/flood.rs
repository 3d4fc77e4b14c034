//! Issue 70, item 4: the accept loop under a flood of connects. Counted, not timed: how many
//! connection tasks the serve spawns inside each of its polls (each accept spawns one), read
//! from the pool's metrics around each poll, and how many it spawns once its signal has fired.

use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::task::{Context, Poll};

use super::*;

/// Tasks spawned so far on the pool the closure reads.
type Spawned = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Polls `inner`, and records for each poll how many tasks the pool spawned during it.
struct PerPoll<F> {
    inner: Pin<Box<F>>,
    spawned: Spawned,
    per_poll: Arc<Mutex<Vec<u64>>>,
}

impl<F: Future> Future for PerPoll<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let before = (self.spawned)();
        let polled = self.inner.as_mut().poll(cx);
        let during = (self.spawned)() - before;
        self.per_poll.lock().unwrap().push(during);
        polled
    }
}

/// A shutdown signal that fires once `at` connection tasks have been spawned: mid-poll, between
/// two accepts of the serve's own task, the only place the count moves. It registers no waker,
/// for nothing but the serve's own accepts can make it ready.
struct FiresAfter {
    spawned: Spawned,
    baseline: u64,
    at: u64,
}

impl Future for FiresAfter {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if (self.spawned)() - self.baseline >= self.at {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Connects made before the serve starts, each closed at once: a flood frozen in the listener's
/// backlog (std listens with a backlog of 128).
const BACKLOG: usize = 120;

/// After how many accepts the signal fires: inside the backlog, past one batch of 64.
const FIRE_AT: u64 = 100;

#[test]
fn under_a_flood_of_connects_the_serve_accepts_at_most_64_a_poll_and_none_after_its_signal() {
    let pool = Arc::new(crew::Pool::builder().workers(2).thread_name("flood").build().unwrap());
    let (listener, addr) = listener();
    for _ in 0..BACKLOG {
        drop(std::net::TcpStream::connect(addr).unwrap());
    }
    // And more, as fast as two threads can, until the serve has ended (then they are refused).
    let stop = Arc::new(AtomicBool::new(false));
    let flood: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // A full backlog drops the SYN: give up on this one, try again.
                    let _ = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100));
                }
            })
        })
        .collect();
    let spawned: Spawned = {
        let pool = pool.clone();
        Arc::new(move || {
            let metrics = pool.metrics();
            metrics.total.spawned + metrics.spawned_outside
        })
    };
    // The serve's own task is the one spawn before the connections'.
    let baseline = spawned() + 1;
    let (app, _control) = app();
    let signal = FiresAfter { spawned: spawned.clone(), baseline, at: FIRE_AT };
    let serve = crew::http::serve(listener, app.service()).with_graceful_shutdown(signal).into_future();
    let per_poll = Arc::new(Mutex::new(Vec::new()));
    let server = pool.spawn(PerPoll { inner: Box::pin(serve), spawned: spawned.clone(), per_poll: per_poll.clone() });
    crew::block_on(within_limit(server)).unwrap();
    stop.store(true, Ordering::Relaxed);
    for thread in flood {
        thread.join().unwrap();
    }
    let per_poll = per_poll.lock().unwrap().clone();
    let most = per_poll.iter().copied().max().unwrap();
    assert!(most <= 64, "{most} accepts in one poll of the serve (at most 64 expected); each poll's: {per_poll:?}");
    let accepted = spawned() - baseline;
    assert_eq!(accepted, FIRE_AT, "accepts (the signal fired at the {FIRE_AT}th; each poll's: {per_poll:?})");
}
