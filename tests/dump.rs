//! `Pool::dump`: every live task with its name, spawn location, state and poll count; off by
//! default; never listing a task that finished before it began, and never hanging, while
//! threads spawn and finish tasks as fast as they can.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use common::{wait_until, with_timeout, HANG_TIMEOUT};
use crew::{QueuedIn, TaskState};

/// Spawns per thread in the stress test.
const SPAWNS: usize = if cfg!(miri) { 20 } else { 2_000 };

#[test]
fn off_by_default_the_dump_is_empty_and_says_how_to_turn_it_on() {
    let pool = crew::Pool::builder().workers(1).build().unwrap();
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let handle = pool.spawn(rx);
    let dump = pool.dump();
    assert!(!dump.is_enabled());
    assert!(dump.tasks().is_empty());
    assert!(dump.to_string().contains("task_dump(true)"), "{dump}");
    drop(tx);
    let _ = crew::block_on(handle);
}

#[test]
fn running_waiting_and_queued_tasks_show_as_such_with_their_names_and_locations() {
    with_timeout(|| {
        // No takeover: the blocked worker keeps its queues as the test left them.
        let pool = Arc::new(crew::Pool::builder().workers(1).takeover(false).task_dump(true).build().unwrap());

        // A task waiting for a wake.
        let (wake, woken) = futures::channel::oneshot::channel::<()>();
        let builder = crew::task::Builder::new().name("waiter");
        let (waiter, waiter_line) = (builder.spawn_on(&pool, woken), line!());
        wait_until("the waiter's first poll", || pool.dump().tasks().iter().any(|task| task.polls() == 1));

        // A task that queues two children on its worker, then blocks it.
        let (release, blocked) = mpsc::channel::<()>();
        let (queued_tx, queued_rx) = mpsc::channel();
        let inner = pool.clone();
        let blocker = crew::task::Builder::new().name("blocker").spawn_on(&pool, async move {
            let first = crew::task::Builder::new().name("first-child").spawn_on(&inner, async {});
            let second = crew::task::Builder::new().name("second-child").spawn_on(&inner, async {});
            queued_tx.send(()).unwrap();
            blocked.recv().unwrap();
            first.await;
            second.await;
        });
        queued_rx.recv_timeout(HANG_TIMEOUT).unwrap();
        let outside = crew::task::Builder::new().name("outside").spawn_on(&pool, async {});

        let dump = pool.dump();
        assert!(dump.is_enabled());
        let by_name: HashMap<&str, &crew::TaskSnapshot> =
            dump.tasks().iter().map(|task| (task.name().expect("every task here is named"), task)).collect();
        assert_eq!(by_name.len(), 5, "{dump}");

        let waiting = by_name["waiter"];
        assert!(matches!(waiting.state(), TaskState::Waiting { .. }), "{dump}");
        assert_eq!((waiting.polls(), waiting.id()), (1, waiter.id()));
        assert_eq!((waiting.location().file(), waiting.location().line()), (file!(), waiter_line));

        assert!(matches!(by_name["blocker"].state(), TaskState::Running { worker: 0, .. }), "{dump}");
        assert_eq!(by_name["blocker"].polls(), 1);
        // The second child displaced the first from the LIFO slot into the deque.
        let queued = |name: &str| match by_name[name].state() {
            TaskState::Queued { place, .. } => place,
            other => panic!("{name} is {other:?}, not queued:\n{dump}"),
        };
        assert_eq!(queued("first-child"), QueuedIn::Deque { worker: 0 });
        assert_eq!(queued("second-child"), QueuedIn::Lifo { worker: 0 });
        assert_eq!(queued("outside"), QueuedIn::Injector);
        assert_eq!(by_name["outside"].polls(), 0);
        let table = dump.to_string();
        assert!(table.contains("running on worker 0") && table.contains("waiter"), "{table}");

        release.send(()).unwrap();
        crew::block_on(blocker);
        crew::block_on(outside);
        drop(wake);
        let _ = crew::block_on(waiter);
        let dump = pool.dump();
        assert!(dump.tasks().is_empty(), "every task finished:\n{dump}");
    });
}

#[test]
fn hostile_task_names_are_escaped_one_row_per_task() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).task_dump(true).build().unwrap();
        let names = ["line1\nline2", "cr\rx", "nul\0x", "\u{1b}[31mred", "sep\u{2028}x", "bidi\u{202e}x", "back\\n"];
        let (stop, stopped) = futures::channel::oneshot::channel::<()>();
        let stopped = futures::future::FutureExt::shared(stopped);
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                let stopped = stopped.clone();
                crew::task::Builder::new().name(*name).spawn_on(&pool, async move {
                    let _ = stopped.await;
                })
            })
            .collect();
        wait_until("every task's first poll", || pool.dump().tasks().iter().all(|task| task.polls() == 1));
        let table = pool.dump().to_string();
        // Two header lines, then one row per task.
        assert_eq!(table.lines().count(), 2 + names.len(), "{table}");
        assert!(
            !table.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{2028}' || c == '\u{202e}')),
            "{table:?}"
        );
        for shown in
            [r"line1\nline2", r"cr\rx", r"nul\0x", r"\u{1b}[31mred", r"sep\u{2028}x", r"bidi\u{202e}x", r"back\\n"]
        {
            assert_eq!(table.matches(shown).count(), 1, "{shown} in {table}");
        }
        // The task's own Display (used by slow-poll reports) escapes the same way.
        let info =
            pool.dump().tasks().iter().find(|task| task.name() == Some("line1\nline2")).unwrap().info().to_string();
        assert!(info.contains(r#""line1\nline2""#) && !info.contains('\n'), "{info}");
        drop(stop);
        for handle in handles {
            crew::block_on(handle);
        }
    });
}

#[test]
fn a_dump_never_lists_a_task_that_finished_before_it_began_and_never_hangs() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(2).task_dump(true).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let dumper = {
            let (pool, done) = (pool.clone(), done.clone());
            thread::spawn(move || {
                let mut dumps = 0u64;
                while !done.load(Ordering::SeqCst) {
                    let dump = pool.dump();
                    assert!(dump.tasks().windows(2).all(|pair| pair[0].id() < pair[1].id()));
                    dumps += 1;
                }
                dumps
            })
        };
        let spawners: Vec<_> = (0..8)
            .map(|_| {
                let pool = pool.clone();
                thread::spawn(move || {
                    for i in 0..SPAWNS {
                        let handle = pool.spawn(async move { i });
                        let id = handle.id();
                        assert_eq!(crew::block_on(handle), i);
                        // Finished: its future was dropped before its output reached the handle.
                        if i % 16 == 0 {
                            let dump = pool.dump();
                            assert!(dump.tasks().iter().all(|task| task.id() != id), "finished task {id} listed");
                        }
                    }
                })
            })
            .collect();
        for spawner in spawners {
            spawner.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        println!("{} concurrent dumps", dumper.join().unwrap());
        wait_until("no live task left", || pool.dump().tasks().is_empty());
    });
}
