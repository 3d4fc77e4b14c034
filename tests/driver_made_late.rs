//! A plain thread's `block_on` whose future makes crew's I/O driver after a private pool's
//! workers parked: a plain thread leaves the driver to the pool's workers while they run, so
//! the workers, parked before the driver existed, must learn that it was made and take it, or
//! nobody would serve the future's socket (`src/driver/off_driver.rs`).
//!
//! A test binary of its own, so that nothing else in this process makes the driver first. The
//! waits are std's: with nobody turning the driver, crew's timers would not fire either.

// Not under miri: TCP sockets, which miri's isolation does not offer.
#![cfg(not(miri))]

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crew::net::TcpListener;
use futures_lite::AsyncReadExt;

/// Long enough never to pass on a loaded machine unless something hangs.
const HANG: Duration = Duration::from_secs(60);

#[test]
fn a_block_on_that_makes_the_driver_after_the_workers_parked_gets_its_io() {
    let pool = crew::Pool::builder().workers(2).build().unwrap();
    // Both workers parked (counted as they list themselves, with no driver to wait in).
    let started = Instant::now();
    while !pool.metrics().workers.iter().all(|worker| worker.parks >= 1) {
        assert!(started.elapsed() < HANG, "the pool's workers never parked: {:?}", pool.metrics().workers);
        std::thread::sleep(Duration::from_millis(1));
    }
    let (done, result) = mpsc::channel();
    let plain = std::thread::spawn(move || {
        let received = pool.block_on(async {
            // The process's first socket: it makes the driver.
            let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
            let addr = listener.local_addr().unwrap();
            let client = std::thread::spawn(move || {
                let mut stream = std::net::TcpStream::connect(addr).unwrap();
                stream.write_all(b"served").unwrap();
            });
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut received = Vec::new();
            stream.read_to_end(&mut received).await.unwrap();
            client.join().unwrap();
            received
        });
        done.send(received).unwrap();
    });
    let received = result.recv_timeout(HANG).expect("the block_on's accept and read hung: nobody turned the driver");
    assert_eq!(received, b"served");
    plain.join().unwrap();
}
