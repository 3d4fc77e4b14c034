//! `local_ping_pong`'s pair of local (`!Send`) tasks, shared by `benches/local.rs` (timed) and
//! `benches/round_trips.rs` (counted): two tasks bounce a counter over two one-number slots they
//! share as `Rc<RefCell<..>>` (a [`LocalChannel`] each way, written here so that what differs is
//! the executors' work, not a channel crate's): every message wakes the partner task.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::task::{Poll, Waker};

/// One direction of a `local_ping_pong` pair: a slot for one number, which the pair's two
/// tasks share, and the waker of the task waiting for the number.
#[derive(Clone, Default)]
pub struct LocalChannel(Rc<RefCell<Slot>>);

#[derive(Default)]
struct Slot {
    number: Option<u64>,
    waiting: Option<Waker>,
}

impl LocalChannel {
    /// Puts `number` in the slot (empty: the pair's tasks take turns) and wakes the task
    /// waiting for it.
    pub fn send(&self, number: u64) {
        let waiting = {
            let mut slot = self.0.borrow_mut();
            assert!(slot.number.replace(number).is_none(), "a slot of local_ping_pong was full");
            slot.waiting.take()
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
    }

    /// Waits for a number in the slot and takes it.
    pub async fn recv(&self) -> u64 {
        poll_fn(|cx| {
            let mut slot = self.0.borrow_mut();
            match slot.number.take() {
                Some(number) => Poll::Ready(number),
                None => {
                    slot.waiting = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

/// One pair of `local_ping_pong`: the task that starts each of `round_trips` round trips, and
/// its partner.
pub fn local_pair(round_trips: u64) -> [impl Future<Output = ()> + 'static; 2] {
    let (ping, pong) = (LocalChannel::default(), LocalChannel::default());
    let (ping_recv, pong_send) = (ping.clone(), pong.clone());
    let pinger = async move {
        let mut count = 0;
        for _ in 0..round_trips {
            ping.send(count);
            count = pong.recv().await + 1;
        }
        assert_eq!(count, 2 * round_trips);
    };
    let ponger = async move {
        for _ in 0..round_trips {
            let count = ping_recv.recv().await;
            pong_send.send(count + 1);
        }
    };
    // `Either` gives the two futures one type, unboxed, so that they are spawned alike.
    [futures::future::Either::Left(pinger), futures::future::Either::Right(ponger)]
}
