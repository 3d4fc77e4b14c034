//! Task groups (`src/join_set/`, `src/handle/abort.rs`): `JoinSet` joined in completion order under
//! each policy, `AbortHandle`s of plain tasks and of members, `abort_all`, `shutdown`,
//! `detach_all`, a set's drop, `TaskGroup`, and the set's name in the task dump. Nothing is
//! lost: the tests count that every member's future is dropped exactly once, also when the set
//! is dropped while members run on other workers and when a member shuts its own set down.
//!
//! Every wait is for an event; `with_timeout` only turns a hang into a failure.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use common::{wait_until, with_timeout, Counted, Counts};
use crew::task::{JoinSet, TaskGroup};

#[test]
fn members_are_joined_in_the_order_they_finish() {
    with_timeout(|| {
        let set = JoinSet::new();
        let mut releases = Vec::new();
        for i in 0..5u32 {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            releases.push(tx);
            set.spawn(async move {
                rx.await.unwrap();
                i
            });
        }
        assert_eq!(set.len(), 5);
        // Release them backwards: each is joined before the next is released.
        let mut joined = Vec::new();
        for (i, release) in releases.into_iter().enumerate().rev() {
            release.send(()).unwrap();
            joined.push(crew::block_on(set.join_next()).unwrap());
            assert_eq!(set.len(), i);
        }
        assert_eq!(joined, [4, 3, 2, 1, 0]);
        assert_eq!(crew::block_on(set.join_next()), None);
        assert!(set.is_empty());
    });
}

#[test]
fn each_policy_gives_panics_aborts_and_shutdowns_as_a_join_handle_does() {
    with_timeout(|| {
        // Catch: every end is an item.
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let set = JoinSet::<u32, crew::Catch>::with_policy();
        set.spawn_on(&pool, async { panic!("expected: member panics") });
        crew::block_on(async {
            assert_eq!(set.join_next().await.unwrap().unwrap_err().panic_message(), Some("expected: member panics"))
        });
        let aborted = set.spawn_on(&pool, std::future::pending());
        aborted.abort();
        let err = crew::block_on(set.join_next()).unwrap().unwrap_err();
        assert!(err.is_aborted() && err.is_cancelled(), "{err}");
        set.spawn_on(&pool, std::future::pending());
        drop(pool);
        let err = crew::block_on(set.join_next()).unwrap().unwrap_err();
        assert!(err.is_cancelled() && !err.is_aborted(), "{err}");
        assert!(set.is_empty());

        // Propagate: an aborted member is skipped; a panic resumes in the joiner.
        let set = JoinSet::new();
        set.spawn(std::future::pending::<u32>()).abort();
        set.spawn(async { 7 });
        assert_eq!(crew::block_on(set.join_next()), Some(7));
        assert_eq!(crew::block_on(set.join_next()), None, "the aborted member is skipped");
        set.spawn(async { std::panic::panic_any(41u32) });
        let payload =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(set.join_next()))).unwrap_err();
        assert_eq!(payload.downcast_ref::<u32>(), Some(&41));
        // A member dropped by its pool's shutdown is not skipped: it panics, saying why.
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        set.spawn_on(&pool, std::future::pending());
        drop(pool);
        let payload =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(set.join_next()))).unwrap_err();
        assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::CANCELLED_MESSAGE));
    });
}

/// Also the regression test of a lost member: a joiner that took the lock just before a member
/// was filed, ran and ended skipped the member's end, and waited forever. With that bug one round
/// hung in 8 runs of 30 (a debug build, 2 cores); ten rounds hung in 10 runs of 10.
#[test]
fn one_task_spawns_into_a_shared_set_while_another_joins_it() {
    let rounds = if cfg!(miri) { 1 } else { 10 };
    for _ in 0..rounds {
        spawns_into_a_shared_set_while_another_joins_it();
    }
}

fn spawns_into_a_shared_set_while_another_joins_it() {
    with_timeout(|| {
        const MEMBERS: u64 = if cfg!(miri) { 20 } else { 1_000 };
        let set = Arc::new(JoinSet::new());
        let spawner = {
            let set = set.clone();
            crew::spawn(async move {
                for i in 0..MEMBERS {
                    set.spawn(async move { i });
                    if i % 16 == 0 {
                        crew::yield_now().await;
                    }
                }
            })
        };
        let mut sum = 0;
        let mut joined = 0;
        crew::block_on(async {
            while joined < MEMBERS {
                if let Some(i) = set.join_next().await {
                    sum += i;
                    joined += 1;
                } else {
                    crew::yield_now().await; // empty for now: the spawner is not done
                }
            }
        });
        crew::block_on(spawner);
        assert_eq!(sum, (0..MEMBERS).sum::<u64>());
        assert!(set.try_join_next().is_none() && set.is_empty());
    });
}

#[test]
fn abort_all_and_shutdown_drop_every_members_future_once() {
    with_timeout(|| {
        let counts = Counts::new();
        let set = JoinSet::<()>::new();
        for _ in 0..10 {
            set.spawn(Counted::new(&counts, std::future::pending()));
        }
        crew::block_on(set.shutdown());
        assert_eq!(counts.drops(), 10, "shutdown returns once every member's future is dropped");
        assert!(set.is_empty());

        let counts = Counts::new();
        for _ in 0..10 {
            set.spawn(Counted::new(&counts, std::future::pending()));
        }
        set.abort_all();
        assert_eq!(crew::block_on(set.join_next()), None, "aborted members are skipped");
        assert_eq!(counts.drops(), 10);
    });
}

#[test]
fn dropping_a_set_while_members_run_on_other_workers_drops_each_once() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let counts = Counts::new();
        let set = JoinSet::<()>::new();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let (started_tx, started_rx) = mpsc::channel();
        // One member blocks a worker inside its poll; the others wait for wakes.
        {
            let release_rx = release_rx.clone();
            set.spawn_on(
                &pool,
                Counted::new(&counts, async move {
                    started_tx.send(()).unwrap();
                    release_rx.lock().unwrap().recv().unwrap();
                    std::future::pending::<()>().await
                }),
            );
        }
        for _ in 0..5 {
            set.spawn_on(&pool, Counted::new(&counts, std::future::pending()));
        }
        started_rx.recv().unwrap();
        drop(set);
        // The waiting members' futures go at once; the running one's when its poll returns.
        wait_until("the waiting members' futures are dropped", || counts.drops() == 5);
        release_tx.send(()).unwrap();
        wait_until("the running member's future is dropped", || counts.drops() == 6);
        drop(pool);
        assert_eq!(counts.drops(), 6);
    });
}

#[test]
fn a_member_that_shuts_its_own_set_down_aborts_every_member_itself_included() {
    with_timeout(|| {
        let counts = Counts::new();
        let set = Arc::new(JoinSet::<()>::new());
        for _ in 0..5 {
            set.spawn(Counted::new(&counts, std::future::pending()));
        }
        let (reached_tx, reached_rx) = mpsc::channel::<&str>();
        {
            let inner = set.clone();
            set.spawn(Counted::new(&counts, async move {
                reached_tx.send("shutting down").unwrap();
                inner.shutdown().await;
                reached_tx.send("shutdown returned").unwrap();
            }));
        }
        assert_eq!(reached_rx.recv().unwrap(), "shutting down");
        wait_until("every member's future is dropped", || counts.drops() == 6);
        assert!(reached_rx.recv().is_err(), "the member was aborted inside its own shutdown");
        assert_eq!(crew::block_on(set.join_next()), None);
    });
}

#[test]
fn a_member_whose_pool_refuses_its_spawn_is_joined_as_cancelled() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let counts = Counts::new();
        let set = Arc::new(JoinSet::<(), crew::Catch>::with_policy());
        let (started_tx, started_rx) = mpsc::channel();
        let (closed_tx, closed_rx) = mpsc::channel::<()>();
        let (spawned_tx, spawned_rx) = mpsc::channel();
        {
            let (set, counts) = (set.clone(), counts.clone());
            // A task of the pool, stuck in its poll until the pool's shutdown gave up on it and
            // closed the pool, then spawns into the set on its own pool: the spawn is refused.
            pool.spawn(async move {
                started_tx.send(()).unwrap();
                closed_rx.recv().unwrap();
                set.spawn(Counted::new(&counts, async { unreachable!("a refused member never runs") }));
                spawned_tx.send(()).unwrap();
            })
            .detach();
        }
        started_rx.recv().unwrap();
        assert!(!pool.shutdown_timeout(std::time::Duration::ZERO), "the stuck thread did not finish");
        closed_tx.send(()).unwrap();
        spawned_rx.recv().unwrap();
        assert_eq!(counts.drops(), 1, "the refused member's future was dropped at once");
        assert_eq!(counts.polls(), 0);
        assert!(crew::block_on(set.join_next()).unwrap().unwrap_err().is_cancelled());
        assert!(crew::block_on(set.join_next()).is_none());
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
fn detach_all_lets_members_finish_with_nobody_joining() {
    with_timeout(|| {
        let (tx, rx) = mpsc::channel();
        let set = JoinSet::new();
        let (go_tx, go_rx) = futures::channel::oneshot::channel::<()>();
        set.spawn(async move {
            go_rx.await.unwrap();
            tx.send("finished").unwrap();
        });
        set.detach_all();
        assert!(set.is_empty());
        drop(set);
        go_tx.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), "finished");
    });
}

#[test]
fn an_abort_handle_cancels_a_running_task_at_its_next_return_from_poll() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let counts = Counts::new();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let handle = pool.spawn_with(
            crew::Catch,
            Counted::new(&counts, async move {
                started_tx.send(()).unwrap();
                release_rx.recv().unwrap(); // inside its first poll
                std::future::pending::<()>().await
            }),
        );
        let abort = handle.abort_handle();
        started_rx.recv().unwrap();
        // Aborted from another thread, while a task awaits the handle.
        let awaiter = crew::spawn(handle);
        std::thread::spawn({
            let abort = abort.clone();
            move || abort.abort()
        })
        .join()
        .unwrap();
        assert!(!abort.is_finished(), "tokio's rule: not finished while its poll runs and its future lives");
        assert_eq!(counts.drops(), 0, "the poll still runs");
        release_tx.send(()).unwrap();
        let err = crew::block_on(awaiter).unwrap_err();
        assert!(err.is_aborted(), "{err}");
        assert_eq!((counts.polls(), counts.drops()), (1, 1), "never polled again, dropped once");
        assert!(abort.is_finished(), "its future is gone");

        // A task that finished keeps its output; a dropped handle still cancels.
        let handle = crew::spawn(async { 5 });
        let abort = handle.abort_handle();
        while !abort.is_finished() {
            std::thread::yield_now();
        }
        abort.abort();
        assert_eq!(crew::block_on(handle), 5);
        let counts = Counts::new();
        let handle = crew::spawn(Counted::new(&counts, std::future::pending::<()>()));
        let abort = handle.abort_handle();
        drop(handle);
        wait_until("the dropped handle cancels its task", || counts.drops() == 1);
        abort.abort(); // nothing left to abort
    });
}

#[test]
fn a_task_group_drops_outputs_as_members_finish() {
    with_timeout(|| {
        let outputs_dropped = Arc::new(AtomicUsize::new(0));
        struct Output(Arc<AtomicUsize>);
        impl Drop for Output {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let group = TaskGroup::named("connections");
        for _ in 0..20 {
            let dropped = outputs_dropped.clone();
            group.spawn(async move {
                let _kept_until_the_end = Output(dropped);
            });
        }
        crew::block_on(group.wait());
        assert_eq!(outputs_dropped.load(Ordering::SeqCst), 20);
        assert!(group.is_empty());
        let counts = Counts::new();
        for _ in 0..5 {
            group.spawn(Counted::new(&counts, std::future::pending()));
        }
        assert_eq!(group.len(), 5);
        crew::block_on(group.shutdown());
        assert_eq!((counts.drops(), group.len()), (5, 0));
    });
}

#[test]
fn the_task_dump_and_a_members_identity_name_its_set() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).task_dump(true).build().unwrap();
        let set = JoinSet::<()>::named("fan\nout");
        let member = crew::task::Builder::new().name("backend").spawn_in(&set, std::future::pending());
        assert!(!member.is_finished());
        let on_pool = set.spawn_on(&pool, std::future::pending());
        wait_until("the member's first poll", || pool.dump().tasks().iter().any(|task| task.polls() == 1));
        let dump = pool.dump();
        let task = &dump.tasks()[0];
        assert_eq!((task.info().set_id(), task.info().set_name()), (Some(set.id()), Some("fan\nout")));
        let shown = dump.to_string();
        assert!(shown.contains(&format!("in set {} \"fan\\nout\"", set.id())), "{shown}");
        assert_eq!(shown.lines().count(), 3, "one row: {shown}");
        on_pool.abort();
        member.abort();
    });
}

#[test]
fn sets_groups_and_abort_handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let (set, catching, group) = (JoinSet::<u32>::new(), JoinSet::<u32, crew::Catch>::with_policy(), TaskGroup::new());
    assert_send_sync(&set);
    assert_send_sync(&catching);
    assert_send_sync(&group);
    let abort = set.spawn(async { 1 });
    assert_send_sync(&abort);
    assert_eq!(crew::block_on(set.join_next()), Some(1));
}

#[test]
fn join_all_gives_every_output_and_a_panic_cancels_the_members_left() {
    with_timeout(|| {
        let set: crew::task::JoinSet<u32, crew::Catch> = (0..10u32).map(|n| async move { n }).collect();
        let mut outputs: Vec<u32> = crew::block_on(set.join_all()).into_iter().map(Result::unwrap).collect();
        outputs.sort_unstable();
        assert_eq!(outputs, (0..10).collect::<Vec<_>>());

        // Under Propagate, the first panic met resumes, and the set's drop cancels the rest.
        let (dropped_tx, dropped_rx) = std::sync::mpsc::channel::<()>();
        struct Dropped(std::sync::mpsc::Sender<()>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        let mut set = crew::task::JoinSet::new();
        let guard = Dropped(dropped_tx);
        set.extend([Box::pin(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        }) as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>]);
        set.spawn(async { panic!("expected: the member's panic") });
        let payload =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(set.join_all()))).unwrap_err();
        assert_eq!(common::payload_message(payload.as_ref()), Some("expected: the member's panic"));
        dropped_rx.recv().expect("the pending member was cancelled, its future dropped");
    });
}

#[test]
fn blocking_and_local_members_are_joined_like_the_others() {
    with_timeout(|| {
        let set = JoinSet::new();
        set.spawn(async { 1u32 });
        set.spawn_blocking(|| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            std::thread::current().name().unwrap().starts_with("crew-blocking-") as u32 * 10
        });
        let local_total = crew::block_on(async {
            let shared = std::rc::Rc::new(100u32); // !Send: a local member only
            let abort = set.spawn_local(async move { *shared });
            assert_eq!(set.len(), 3);
            let mut total = 0;
            let mut ids = Vec::new();
            while let Some((id, output)) = set.join_next_with_id().await {
                ids.push(id);
                total += output;
            }
            assert!(ids.contains(&abort.id()));
            total
        });
        assert_eq!(local_total, 111);

        // An aborted local member is skipped, its future dropped on its own thread.
        crew::block_on(async {
            let set = JoinSet::<()>::new();
            let (dropped_tx, dropped_rx) = mpsc::channel::<()>();
            let abort = set.spawn_local(async move {
                let _tx = dropped_tx;
                std::future::pending::<()>().await
            });
            abort.abort();
            assert!(set.join_next().await.is_none());
            assert!(dropped_rx.recv().is_err(), "its future and its sender were dropped");
        });
    });
}
