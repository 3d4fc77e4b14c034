//! The `tokio` feature (`src/interop/tokio.rs`): every thread that polls crew tasks holds a
//! tokio runtime context, so tokio's timers, sockets, `tokio::spawn`, `spawn_blocking`,
//! `block_in_place` and `task_local!` work inside crew tasks with no wrapper; on the workers,
//! on the threads that take a stuck worker over or replace one blocked in `block_on`, on the
//! blocking pool, in `crew::block_on` and in slow-poll hooks. `Builder::tokio_handle` picks the
//! runtime. (tokio's crates themselves: `ecosystem/`.)

mod common;

use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use common::with_timeout;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The name of the thread this runs on.
fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

/// What a crew task sees of tokio: a context, a timer, `tokio::spawn`, `spawn_blocking`,
/// `block_in_place` and a task-local.
async fn use_tokio() -> (String, String, String) {
    tokio::runtime::Handle::try_current().expect("a crew task runs inside a tokio context");
    tokio::time::sleep(Duration::from_millis(1)).await;
    tokio::time::timeout(Duration::from_secs(60), tokio::time::sleep(Duration::from_millis(1))).await.unwrap();
    let spawned_on = tokio::spawn(async { thread_name() }).await.unwrap();
    let blocking_on = tokio::task::spawn_blocking(thread_name).await.unwrap();
    let in_place_on = tokio::task::block_in_place(thread_name);
    tokio::task_local! {
        static REQUEST: u32;
    }
    let seen = REQUEST.scope(7, async { REQUEST.get() }).await;
    assert_eq!(seen, 7);
    (spawned_on, blocking_on, in_place_on)
}

#[test]
fn tokio_works_inside_crew_tasks_on_the_global_pool_with_crews_own_runtime() {
    with_timeout(|| {
        let (spawned_on, blocking_on, in_place_on) = crew::block_on(crew::spawn(use_tokio()));
        assert_eq!(spawned_on, "crew-tokio", "tokio::spawn runs on crew's own runtime's thread");
        assert!(!blocking_on.is_empty());
        assert!(in_place_on.starts_with("crew-worker-"), "block_in_place runs inline: {in_place_on}");
    });
}

#[test]
fn tokio_sockets_inside_crew_tasks() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let echoed = crew::block_on(pool.spawn(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let server = crew::spawn(async move {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 5];
                stream.read_exact(&mut buf).await.unwrap();
                stream.write_all(&buf).await.unwrap();
            });
            let mut client = tokio::net::TcpStream::connect(address).await.unwrap();
            client.write_all(b"hello").await.unwrap();
            let mut back = [0u8; 5];
            client.read_exact(&mut back).await.unwrap();
            server.await;
            back
        }));
        assert_eq!(&echoed, b"hello");
    });
}

#[test]
fn a_private_pool_uses_the_runtime_it_is_given() {
    with_timeout(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("users-runtime")
            .enable_all()
            .build()
            .unwrap();
        let pool = crew::Pool::builder()
            .workers(1)
            .thread_name("given")
            .tokio_handle(runtime.handle().clone())
            .build()
            .unwrap();
        let (spawned_on, _, in_place_on) = crew::block_on(pool.spawn(use_tokio()));
        assert_eq!(spawned_on, "users-runtime");
        assert_eq!(in_place_on, "given-0");
        // `Pool::block_on` enters the pool's runtime too.
        let current = pool.block_on(async { tokio::spawn(async { thread_name() }).await.unwrap() });
        assert_eq!(current, "users-runtime");
    });
}

#[test]
fn the_thread_that_takes_a_stuck_worker_over_has_the_context() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover_after(crew::config::MIN_TAKEOVER_AFTER).build().unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel();
        let stuck = pool.spawn(async move {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap(); // blocks the only worker
        });
        started_rx.recv().unwrap();
        // Queued behind the stuck poll: runs only on the thread that takes the worker over.
        let behind = pool.spawn(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            thread_name()
        });
        assert_eq!(crew::block_on(behind), "crew-worker-0");
        assert_eq!(pool.metrics().total.takeovers, 1);
        release_tx.send(()).unwrap();
        crew::block_on(stuck);
    });
}

#[test]
fn the_thread_that_replaces_a_worker_blocked_in_block_on_has_the_context() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let output = crew::block_on(pool.spawn(async {
            // `block_on` on the worker hands its queue to a fresh thread, which runs this task.
            let inner = crew::spawn(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                tokio::runtime::Handle::try_current().is_ok()
            });
            crew::block_on(inner)
        }));
        assert!(output);
    });
}

#[test]
fn block_on_spawn_blocking_and_hooks_have_the_context() {
    with_timeout(|| {
        // `crew::block_on` on a plain thread. (tokio's `sleep` reads the context when it is made,
        // so it is made inside the future `block_on` polls.)
        crew::block_on(async { tokio::time::sleep(Duration::from_millis(1)).await });
        let on_thread =
            std::thread::spawn(|| crew::block_on(async { tokio::spawn(async { thread_name() }).await.unwrap() }));
        assert_eq!(on_thread.join().unwrap(), "crew-tokio");
        // The blocking pool.
        let in_blocking = crew::block_on(crew::spawn_blocking(|| tokio::runtime::Handle::try_current().is_ok()));
        assert!(in_blocking);
        // A slow-poll hook (on the pool's reporter thread).
        let (seen_tx, seen_rx) = mpsc::channel();
        let seen_tx = Mutex::new(seen_tx);
        let pool = crew::Pool::builder()
            .workers(1)
            .takeover(false)
            .slow_poll_threshold(crew::config::MIN_TAKEOVER_AFTER)
            .on_slow_poll(move |_| {
                let _ = seen_tx.lock().unwrap().send(tokio::runtime::Handle::try_current().is_ok());
            })
            .build()
            .unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let slow = pool.spawn(async move { release_rx.recv().unwrap() });
        assert!(seen_rx.recv().unwrap(), "the hook runs inside a tokio context");
        release_tx.send(()).unwrap();
        crew::block_on(slow);
    });
}

#[test]
fn a_thread_already_in_a_tokio_context_keeps_it_in_block_on() {
    with_timeout(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("outer-runtime")
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let spawned_on = crew::block_on(async { tokio::spawn(async { thread_name() }).await.unwrap() });
        assert_eq!(spawned_on, "outer-runtime");
    });
}

#[test]
fn a_blocked_worker_does_not_stop_another_tasks_tokio_io() {
    with_timeout(|| {
        // A plain-thread echo server, so that the only tokio I/O is the crew task's.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4];
            stream.read_exact(&mut buf).unwrap();
            stream.write_all(&buf).unwrap();
        });
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocker = pool.spawn(async move { release_rx.recv().unwrap() });
        let caller = pool.spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            stream.write_all(b"ping").await.unwrap();
            let mut back = [0u8; 4];
            stream.read_exact(&mut back).await.unwrap();
            back
        });
        assert_eq!(&crew::block_on(caller), b"ping");
        release_tx.send(()).unwrap();
        crew::block_on(blocker);
        server.join().unwrap();
    });
}
