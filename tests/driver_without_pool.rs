//! A process that never starts a pool still gets its I/O and its timers: `crew::block_on` on
//! this thread turns crew's driver while it waits, and no thread is started for either (the
//! global pool is never started here: nothing is spawned; the `tokio` feature's runtime thread
//! aside).
//!
//! A test binary of its own, so that no other test starts the global pool.

// Not under miri: TCP sockets, which miri's isolation does not offer; `/proc`, which it hides.
#![cfg(all(target_os = "linux", not(miri)))]

mod common;

use std::time::{Duration, Instant};

use common::probe::threads_named;
use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream};

#[test]
fn block_on_alone_serves_sockets_and_timers_with_no_thread_of_its_own() {
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let echoed = crew::block_on(async {
        // Both ends in one future: the accept, the connect, the echo and a sleep between.
        let connect = async {
            let mut client = TcpStream::connect(addr).await.unwrap();
            client.write_all(b"alone").await.unwrap();
            let mut buf = [0; 5];
            client.read_exact(&mut buf).await.unwrap();
            buf
        };
        let serve = async {
            let (mut server, _) = listener.accept().await.unwrap();
            let start = Instant::now();
            crew::time::sleep(Duration::from_millis(2)).await;
            assert!(start.elapsed() >= Duration::from_millis(2));
            let mut buf = [0; 5];
            server.read_exact(&mut buf).await.unwrap();
            server.write_all(&buf).await.unwrap();
        };
        futures::join!(connect, serve).0
    });
    assert_eq!(&echoed, b"alone");
    // crew names every thread it starts `crew-...`: none was started (no worker, no I/O or
    // timer thread), the `tokio` feature's runtime thread (`crew-tokio`, whose context
    // `block_on` enters) aside.
    let started: Vec<String> = threads_named("crew-").into_iter().filter(|name| name != "crew-tokio").collect();
    assert!(started.is_empty(), "crew started threads: {started:?}");
}
