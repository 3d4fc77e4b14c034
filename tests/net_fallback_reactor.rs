//! Sockets and timers on a private pool built with `drive_reactor(false)`: its workers never
//! run async-io's reactor, so async-io's own fallback thread must.
//!
//! A test binary of its own: the global pool is never started here, and `crew::block_on` does not
//! drive the reactor either, so no other thread of this process can stand in for the fallback
//! thread (in `tests/net.rs`, the global pool's parked workers would).

// Not under miri: every socket registers with async-io's reactor, whose `Poller::new` calls
// `timerfd_create`, which miri does not implement (the interpreter aborts the whole binary).
#![cfg(not(miri))]

mod common;

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
fn sockets_and_timers_work_when_workers_leave_the_reactor_to_async_io() {
    const CLIENTS: usize = 20;
    const LEN: usize = 64 * 1024;
    let pool = crew::Pool::builder().workers(2).drive_reactor(false).build().unwrap();
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    let data = |i: usize| -> Vec<u8> { (0..LEN).map(|j| (i * 7 + j * 13 + j / 256) as u8).collect() };

    let clients: Vec<_> = (0..CLIENTS).map(|i| pool.spawn(timeout(HANG, echo_client(addr, data(i))))).collect();
    // The accepts wait on this thread (`crew::block_on`), each connection is echoed by a task on
    // the pool.
    let servers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (stream, _) = crew::block_on(timeout(HANG, listener.accept())).expect("accept hung").unwrap();
            pool.spawn(timeout(HANG, echo_server::echo(stream, HANG)))
        })
        .collect();
    for (i, client) in clients.into_iter().enumerate() {
        let (_, echoed) = crew::block_on(client).expect("a client hung").unwrap();
        assert!(echoed == data(i), "client {i}: {} bytes echoed, not its own {LEN}", echoed.len());
    }
    for server in servers {
        assert_eq!(crew::block_on(server).expect("a connection hung").unwrap(), LEN as u64);
    }
    // A timer on a worker of this pool fires too.
    crew::block_on(pool.spawn(timeout(HANG, sleep(Duration::from_millis(1))))).expect("a 1 ms sleep hung");
}
