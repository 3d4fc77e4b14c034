//! Sockets on the global pool: `examples/echo_server.rs`'s `serve` (compiled in here, started on
//! port 0) under 100 concurrent clients, a peer that resets mid-write and a peer that never
//! sends; a UDP round trip; and async-io's own socket types, which crates written for smol hand
//! over, on crew tasks. `tests/net_workers_drive.rs` checks sockets on a pool whose workers alone
//! turn crew's driver.
//!
//! Every wait is bounded by [`HANG`], only to turn a hang into a failure: nothing here asserts
//! on how long anything takes.

// Not under miri: TCP sockets, which miri's isolation does not offer.
#![cfg(not(miri))]

mod common;

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use common::echo::echo_client;
use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream, UdpSocket};
use crew::time::timeout;
use crew::JoinHandle;

#[path = "../examples/echo_server.rs"]
#[allow(dead_code)] // its `main`
mod echo_server;

/// Long enough never to fire on a loaded machine unless something hangs.
const HANG: Duration = Duration::from_secs(60);

/// Runs `future` on the global pool and waits for it, failing if it takes longer than [`HANG`].
fn run<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
    crew::block_on(crew::spawn(async move { timeout(HANG, future).await.expect("the test hung") }))
}

/// An echo server on 127.0.0.1, port 0, with the outcome of every connection it closed.
struct Server {
    addr: SocketAddr,
    outcomes: async_channel::Receiver<(SocketAddr, io::Result<u64>)>,
    /// Outcomes received while waiting for another peer's.
    early: HashMap<SocketAddr, io::Result<u64>>,
    /// Dropping it (at the end of the test) cancels the accept loop.
    task: JoinHandle<io::Result<()>>,
}

impl Server {
    /// Starts `echo_server::serve` on the global pool; a connection silent for `idle` is closed.
    fn start(idle: Duration) -> Server {
        let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
        let addr = listener.get_ref().local_addr().unwrap();
        let (tx, outcomes) = async_channel::unbounded();
        let task = crew::spawn(echo_server::serve(listener, idle, move |peer, outcome| {
            tx.try_send((peer, outcome)).unwrap();
        }));
        Server { addr, outcomes, early: HashMap::new(), task }
    }

    /// The outcome of the server's connection with the client at `peer`, once it has closed.
    async fn outcome(&mut self, peer: SocketAddr) -> io::Result<u64> {
        if let Some(outcome) = self.early.remove(&peer) {
            return outcome;
        }
        loop {
            let (from, outcome) = self.outcomes.recv().await.unwrap();
            if from == peer {
                return outcome;
            }
            self.early.insert(from, outcome);
        }
    }
}

/// `len` bytes that differ from client to client (a xorshift stream seeded by `client`).
fn pattern(client: u64, len: usize) -> Vec<u8> {
    let mut x = client.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn hundred_concurrent_connections_each_get_their_own_bytes_back() {
    const CLIENTS: u64 = 100;
    const LEN: usize = 64 * 1024;
    let mut server = Server::start(HANG);
    let addr = server.addr;
    run(async move {
        let clients: Vec<_> = (0..CLIENTS).map(|i| crew::spawn(echo_client(addr, pattern(i, LEN)))).collect();
        for (i, client) in clients.into_iter().enumerate() {
            let (local, echoed) = client.await.unwrap();
            assert!(echoed == pattern(i as u64, LEN), "client {i}: {} bytes echoed, not its own {LEN}", echoed.len());
            assert_eq!(server.outcome(local).await.unwrap(), LEN as u64, "client {i}: the server's count");
        }
    });
}

#[test]
fn a_peer_that_resets_mid_write_fails_only_its_own_connection() {
    let mut server = Server::start(HANG);
    let addr = server.addr;
    run(async move {
        let mut client = TcpStream::connect(addr).await.unwrap();
        let local = client.get_ref().local_addr().unwrap();
        // Send far more than the socket buffers on both sides hold without reading the echo:
        // the server ends up blocked writing its echo back. Stop sending once we are stuck too.
        let flood = vec![0x5a; 64 << 20];
        let stuck = timeout(Duration::from_millis(200), client.write_all(&flood)).await;
        assert!(stuck.is_err(), "64 MiB went through although nobody read the echo");
        // SO_LINGER 0: closing sends a RST instead of a FIN.
        socket2::SockRef::from(client.get_ref()).set_linger(Some(Duration::ZERO)).unwrap();
        drop(client);

        let err = server.outcome(local).await.expect_err("the server's connection survived a reset");
        assert!(
            matches!(err.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe),
            "expected a reset or broken pipe, got {err:?}"
        );
        assert!(!server.task.is_finished(), "the accept loop stopped");
        // The next client is served as usual.
        let (local, echoed) = echo_client(addr, pattern(7, 1000)).await.unwrap();
        assert_eq!(echoed, pattern(7, 1000));
        assert_eq!(server.outcome(local).await.unwrap(), 1000);
    });
}

#[test]
fn a_silent_peer_holds_up_nobody_and_is_reaped_by_the_idle_timeout() {
    // Short enough to keep the test short, long enough that no echo client below (which
    // sends as soon as it connects) sits silent that long even on a loaded machine. Nothing is
    // asserted about when the reaping happens, only that it does.
    const IDLE: Duration = Duration::from_secs(2);
    let mut server = Server::start(IDLE);
    let addr = server.addr;
    run(async move {
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let silent_addr = silent.get_ref().local_addr().unwrap();
        // Other clients are served while the silent one is connected (and after it is reaped:
        // on a loaded machine these may take longer than IDLE, which is fine).
        let clients: Vec<_> = (0..10).map(|i| crew::spawn(echo_client(addr, pattern(i, 10_000)))).collect();
        for (i, client) in clients.into_iter().enumerate() {
            let (local, echoed) = client.await.unwrap();
            assert_eq!(echoed, pattern(i as u64, 10_000));
            assert_eq!(server.outcome(local).await.unwrap(), 10_000);
        }
        // The server's read times out and closes the connection; the silent client sees EOF.
        let err = server.outcome(silent_addr).await.expect_err("a silent connection was not reaped");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
        let mut buf = [0; 16];
        assert_eq!(silent.read(&mut buf).await.unwrap(), 0);
    });
}

#[test]
fn udp_datagrams_make_the_round_trip() {
    const ROUNDS: usize = 100;
    run(async {
        let server = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
        let server_addr = server.get_ref().local_addr().unwrap();
        // The server echoes each datagram to its sender, ROUNDS times.
        let echo = crew::spawn(async move {
            let mut buf = vec![0; 2048];
            for _ in 0..ROUNDS {
                let (n, from) = server.recv_from(&mut buf).await?;
                server.send_to(&buf[..n], from).await?;
            }
            Ok::<_, io::Error>(())
        });
        let client = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
        client.get_ref().connect(server_addr).unwrap();
        let mut buf = vec![0; 2048];
        // One datagram in flight at a time, so loopback has no reason to drop any.
        for round in 0..ROUNDS {
            let sent = pattern(round as u64, 1 + round * 13);
            client.send(&sent).await.unwrap();
            let n = client.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], &sent[..], "round {round}");
        }
        echo.await.unwrap();
    });
}

#[test]
fn async_ios_own_socket_types_work_on_crew_unwrapped() {
    // What a crate written for async-io or smol hands over: bare `Async` sockets, no crew types,
    // on async-io's own reactor and thread beside crew's driver.
    use async_io::Async;
    const CLIENTS: u64 = 8;
    let listener = Async::<std::net::TcpListener>::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    run(async move {
        let server = crew::spawn(async move {
            for _ in 0..CLIENTS {
                let (mut stream, _) = listener.accept().await?;
                crew::spawn(async move {
                    let mut buf = vec![0; 4096];
                    loop {
                        let n = stream.read(&mut buf).await?;
                        if n == 0 {
                            return Ok::<_, io::Error>(());
                        }
                        stream.write_all(&buf[..n]).await?;
                    }
                })
                .detach();
            }
            Ok::<_, io::Error>(())
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                crew::spawn(async move {
                    let mut stream = Async::<std::net::TcpStream>::connect(addr).await?;
                    let sent = pattern(client, 10_000 + client as usize * 777);
                    let (mut reader, mut writer) = (&stream, &stream);
                    let write = async {
                        writer.write_all(&sent).await?;
                        stream.get_ref().shutdown(Shutdown::Write)
                    };
                    let mut echoed = Vec::new();
                    let read = reader.read_to_end(&mut echoed);
                    futures_lite::future::try_zip(write, read).await?;
                    assert_eq!(echoed, sent, "client {client}");
                    stream.close().await
                })
            })
            .collect();
        for client in clients {
            client.await.unwrap();
        }
        server.await.unwrap();
    });
}

#[test]
fn connect_and_bind_take_names_and_try_each_address_in_order() {
    run(async {
        // Names, looked up off the workers: "localhost" comes from the hosts file.
        let listener = TcpListener::bind("localhost:0").unwrap();
        let local = listener.get_ref().local_addr().unwrap();
        let port = local.port();
        let accepting = crew::spawn(async move {
            for _ in 0..4 {
                listener.accept().await.unwrap();
            }
        });
        for stream in [
            TcpStream::connect(("localhost", port)).await,
            TcpStream::connect(format!("localhost:{port}")).await,
            TcpStream::connect((local.ip().to_string().as_str(), port)).await,
        ] {
            assert!(stream.unwrap().get_ref().peer_addr().unwrap().ip().is_loopback());
        }
        // Each address in order: a port nobody listens on refuses, the next one connects.
        let closed = std::net::TcpListener::bind((local.ip(), 0)).unwrap().local_addr().unwrap();
        let both: [SocketAddr; 2] = [closed, local];
        let stream = TcpStream::connect(&both[..]).await.unwrap();
        assert_eq!(stream.get_ref().peer_addr().unwrap().port(), port);
        // None connects: the last error. No address at all: an error that says so.
        let refused = TcpStream::connect(&[closed][..]).await.unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
        let empty: &[SocketAddr] = &[];
        let err = TcpStream::connect(empty).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("no address"), "{err}");
        accepting.await;
    });
}
