//! crew's own I/O driver through its public faces: `crew::io::AsyncFd` on a user's fd (its
//! guards, and an edge that comes after a clear), datagram sockets (UDP and Unix), a stream's
//! owned halves used at once from two tasks, `try_read`/`try_write`, a socket taken back with
//! `into_std` and registered again, many sockets waiting at once, and timers that fire, never
//! early, while sockets wait. Every wait is bounded by the hang timeout of `tests/common`,
//! only to turn a hang into a failure.

// Not under miri: sockets and the driver's epoll, which miri's isolation does not offer.
#![cfg(all(unix, not(miri)))]

mod common;

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::probe::block_on_within;
use common::HANG_TIMEOUT;
use crew::io::{AsyncFd, AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixStream};

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    block_on_within(HANG_TIMEOUT, "the test's I/O", future)
}

#[test]
fn an_async_fd_waits_for_its_own_fd_and_keeps_an_edge_that_came_after_a_clear() {
    let (mut peer, ours) = StdUnixStream::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    let fd = AsyncFd::new(ours).unwrap();
    run(async {
        // A new source starts ready: the first read tries, finds nothing, and clears.
        let mut guard = fd.readable().await.unwrap();
        assert!(guard.try_io(|fd| fd.get_ref().read(&mut [0; 8])).is_err());
        // The peer writes: the next wait ends with it.
        peer.write_all(b"one").unwrap();
        let mut buf = [0; 8];
        let n = loop {
            let mut guard = fd.readable().await.unwrap();
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
                break result.unwrap();
            }
        };
        assert_eq!(&buf[..n], b"one");
        // An edge between a look and its clear: the guard saw the readiness before the peer's
        // write, the clear keeps the newer edge, and the next wait ends at once.
        let mut stale = fd.writable().await.unwrap();
        peer.write_all(b"two").unwrap();
        stale.clear_ready();
        let n = loop {
            let mut guard = fd.readable().await.unwrap();
            if let Ok(result) = guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
                break result.unwrap();
            }
        };
        assert_eq!(&buf[..n], b"two");
    });
    // Taken back, the fd is the caller's again, open.
    let mut ours = fd.into_inner();
    peer.write_all(b"three").unwrap();
    ours.set_nonblocking(false).unwrap();
    let mut buf = [0; 5];
    ours.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"three");
}

#[test]
fn datagram_sockets_send_receive_peek_and_connect() {
    run(async {
        let a = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
        let b = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        a.send_to(b"first", b_addr).await.unwrap();
        let mut buf = [0; 16];
        assert_eq!(b.peek_from(&mut buf).await.unwrap(), (5, a_addr));
        assert_eq!(b.recv_from(&mut buf).await.unwrap(), (5, a_addr));
        assert_eq!(&buf[..5], b"first");
        a.connect(b_addr).await.unwrap();
        b.connect(a_addr).await.unwrap();
        a.send(b"second").await.unwrap();
        assert_eq!(b.recv(&mut buf).await.unwrap(), 6);
        assert_eq!(b.try_recv(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);

        let (x, y) = UnixDatagram::pair().unwrap();
        x.send(b"unix").await.unwrap();
        let (n, _) = y.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"unix");
    });
}

#[test]
fn a_streams_owned_halves_read_and_write_at_once_from_two_tasks_and_reunite() {
    const LEN: usize = 4 * 1024 * 1024;
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    run(async move {
        let client = TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        // The server echoes through its two halves, each in a task of its own.
        let (mut from_client, mut to_client) = server.into_split();
        let (tx, rx) = async_channel::bounded::<Vec<u8>>(4);
        let reader = crew::spawn(async move {
            let mut buf = vec![0; 64 * 1024];
            loop {
                let n = from_client.read(&mut buf).await.unwrap();
                if n == 0 {
                    return from_client;
                }
                tx.send(buf[..n].to_vec()).await.unwrap();
            }
        });
        let writer = crew::spawn(async move {
            while let Ok(chunk) = rx.recv().await {
                to_client.write_all(&chunk).await.unwrap();
            }
            to_client
        });
        let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
        let (mut read_half, mut write_half) = client.into_split();
        let sent = data.clone();
        let sending = crew::spawn(async move {
            write_half.write_all(&sent).await.unwrap();
            write_half.as_ref().shutdown(std::net::Shutdown::Write).unwrap();
            write_half
        });
        let mut echoed = Vec::with_capacity(LEN);
        let mut buf = vec![0; 64 * 1024];
        while echoed.len() < LEN {
            let n = read_half.read(&mut buf).await.unwrap();
            assert!(n > 0, "the echo ended after {} of {LEN} bytes", echoed.len());
            echoed.extend_from_slice(&buf[..n]);
        }
        assert!(echoed == data, "the echo differs from what was sent");
        let client = sending.await.reunite(read_half).expect("two halves of one stream");
        assert!(client.peer_addr().is_ok());
        let server = writer.await.reunite(reader.await).expect("two halves of one stream");
        assert_eq!(server.local_addr().unwrap(), addr);
    });
}

#[test]
fn try_read_and_try_write_say_would_block_and_readable_waits_for_the_next_edge() {
    let (a, b) = UnixStream::pair().unwrap();
    run(async {
        let mut buf = [0; 64];
        assert_eq!(b.try_read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        // Fill a's send buffer until it says so.
        let chunk = [7u8; 64 * 1024];
        let mut sent = 0;
        loop {
            match a.try_write(&chunk) {
                Ok(n) => sent += n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) => panic!("{error}"),
            }
        }
        assert!(sent > 0);
        // b drains it; a is writable again.
        let mut drained = 0;
        while drained < sent {
            b.readable().await.unwrap();
            match b.try_read(&mut buf) {
                Ok(n) => drained += n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(error) => panic!("{error}"),
            }
        }
        a.writable().await.unwrap();
        assert!(a.try_write(b"more").unwrap() > 0);
    });
}

#[test]
fn a_socket_taken_back_and_registered_again_works() {
    let (a, b) = UnixStream::pair().unwrap();
    let a = UnixStream::from_std(a.into_std()).unwrap();
    let (mut a, mut b) = (a, b);
    run(async {
        a.write_all(b"again").await.unwrap();
        let mut buf = [0; 5];
        b.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"again");
    });
}

#[test]
fn a_thousand_sockets_wait_at_once_and_each_gets_its_own_bytes() {
    const PAIRS: usize = 1000;
    let pairs: Vec<_> = (0..PAIRS).map(|_| UnixStream::pair().unwrap()).collect();
    let (writers, readers): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
    run(async move {
        let tasks: Vec<_> = readers
            .into_iter()
            .enumerate()
            .map(|(i, mut reader)| {
                crew::spawn(async move {
                    let mut buf = [0; 8];
                    reader.read_exact(&mut buf).await.unwrap();
                    assert_eq!(u64::from_le_bytes(buf), i as u64);
                })
            })
            .collect();
        for (i, mut writer) in writers.into_iter().enumerate().rev() {
            writer.write_all(&(i as u64).to_le_bytes()).await.unwrap();
        }
        for task in tasks {
            task.await;
        }
    });
}

#[test]
fn timers_fire_never_early_while_sockets_wait() {
    let fired = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    run(async {
        let (_a, mut b) = UnixStream::pair().unwrap();
        // A read that never completes, waiting beside the timers.
        let waiting = crew::spawn(async move {
            let mut buf = [0; 1];
            let _ = b.read(&mut buf).await;
        });
        let sleeps: Vec<_> = [9u64, 1, 5, 3, 7]
            .into_iter()
            .map(|ms| {
                let fired = fired.clone();
                crew::spawn(async move {
                    crew::time::sleep(Duration::from_millis(ms)).await;
                    let at = start.elapsed();
                    assert!(at >= Duration::from_millis(ms), "a {ms} ms sleep ended at {at:?}");
                    fired.lock().unwrap().push(ms);
                })
            })
            .collect();
        for sleep in sleeps {
            sleep.await;
        }
        drop(waiting);
    });
    let mut fired = fired.lock().unwrap().clone();
    fired.sort_unstable();
    assert_eq!(fired, [1, 3, 5, 7, 9]);
}

#[test]
fn a_thread_leaving_the_driver_hands_it_to_a_parked_worker() {
    // Takeover off: no monitor turns the driver, only the threads that wait in it.
    let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
    for round in 0..20 {
        let (mut peer, ours) = StdUnixStream::pair().unwrap();
        let mut ours = UnixStream::from_std(ours).unwrap();
        let (done, read) = std::sync::mpsc::channel();
        // This thread waits in the driver first (a short sleep), while the pool's task waits on
        // its socket, its worker parked: when the sleep ends and this `block_on` returns, the
        // worker must be handed the driver, or nothing turns it again.
        run(async {
            pool.spawn(async move {
                let mut buf = [0; 4];
                ours.read_exact(&mut buf).await.unwrap();
                done.send(buf).unwrap();
            })
            .detach();
            crew::time::sleep(Duration::from_millis(5)).await;
        });
        peer.write_all(b"ping").unwrap();
        let buf = read.recv_timeout(HANG_TIMEOUT).unwrap_or_else(|_| panic!("round {round}: the read never woke"));
        assert_eq!(&buf, b"ping");
    }
}
