//! Sockets and timers on a private pool whose workers alone turn crew's I/O driver: this thread
//! waits on std channels, never in `block_on`, and the global pool is never started, so no other
//! thread of this process turns the driver.
//!
//! A test binary of its own, so that no other test's thread turns the driver meanwhile.

// Not under miri: TCP sockets, which miri's isolation does not offer.
#![cfg(not(miri))]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::echo::echo_client;
use crew::net::TcpListener;
use crew::time::{sleep, timeout};

#[path = "../examples/echo_server.rs"]
#[allow(dead_code)] // its `main` and `serve` (which spawns onto the global pool)
mod echo_server;

/// Long enough never to fire on a loaded machine unless something hangs.
const HANG: Duration = Duration::from_secs(60);

#[test]
fn sockets_and_timers_work_when_only_the_pools_workers_turn_the_driver() {
    const CLIENTS: usize = 20;
    const LEN: usize = 64 * 1024;
    let pool = crew::Pool::builder().workers(2).build().unwrap();
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let data = |i: usize| -> Vec<u8> { (0..LEN).map(|j| (i * 7 + j * 13 + j / 256) as u8).collect() };
    let (done, results) = mpsc::channel();
    // Each connection accepted, echoed and awaited by tasks of the pool.
    pool.spawn({
        let done = done.clone();
        async move {
            let mut servers = Vec::new();
            for _ in 0..CLIENTS {
                let (stream, _) = timeout(HANG, listener.accept()).await.expect("accept hung").unwrap();
                servers.push(crew::spawn(timeout(HANG, echo_server::echo(stream, HANG))));
            }
            for server in servers {
                let echoed = server.await.expect("a connection hung").unwrap();
                done.send(Err(echoed)).unwrap();
            }
        }
    })
    .detach();
    for i in 0..CLIENTS {
        let done = done.clone();
        pool.spawn(async move {
            let (_, echoed) = timeout(HANG, echo_client(addr, data(i))).await.expect("a client hung").unwrap();
            done.send(Ok((i, echoed))).unwrap();
        })
        .detach();
    }
    let (mut clients, mut servers) = (0, 0);
    while clients + servers < 2 * CLIENTS {
        match results.recv_timeout(HANG).expect("a task of the pool hung") {
            Ok((i, echoed)) => {
                assert!(echoed == data(i), "client {i}: {} bytes echoed, not its own {LEN}", echoed.len());
                clients += 1;
            }
            Err(echoed) => {
                assert_eq!(echoed, LEN as u64);
                servers += 1;
            }
        }
    }
    // A timer on a worker of this pool fires too.
    pool.spawn(async move {
        timeout(HANG, sleep(Duration::from_millis(1))).await.expect("a 1 ms sleep hung");
        done.send(Err(0)).unwrap();
    })
    .detach();
    assert_eq!(results.recv_timeout(HANG).expect("a 1 ms sleep hung"), Err(0));
}
