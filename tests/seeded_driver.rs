//! A seeded pool serves its tasks' I/O itself: its one worker does not park in the driver, but
//! turns it without blocking each time its ready list runs dry (`docs/testing.md`).
//!
//! A test binary of its own, so that no other test's thread turns the driver meanwhile.

// Not under miri: sockets, which miri's isolation does not offer.
#![cfg(all(unix, not(miri)))]

use std::time::Duration;

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::UnixStream;

#[test]
fn a_seeded_worker_turns_the_driver_when_its_ready_list_runs_dry() {
    let pool = crew::Pool::builder().seed(7).build().unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    // The test's thread waits on a channel, not in `block_on`: only the pool turns the driver.
    let _task = pool.spawn(async move {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let mut buf = [0; 5];
        let read = b.read_exact(&mut buf);
        let write = async {
            // After the read's first poll found nothing and waits for the driver's event.
            crew::yield_now().await;
            a.write_all(b"dried").await.unwrap();
        };
        let (read, ()) = futures::join!(read, write);
        read.unwrap();
        done.send(buf).unwrap();
    });
    // Generous: only turns a hang into a failure.
    let got =
        finished.recv_timeout(Duration::from_secs(60)).expect("the read never completed: nobody turned the driver");
    assert_eq!(&got, b"dried");
}
