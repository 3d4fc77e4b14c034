//! The three panic policies, exactly: what the awaiter sees, where the payload goes, that the
//! panic hook reports every panic, and that no number of panics costs the pool a worker.
//! (Futures whose `Drop` panics: `panic_in_drop.rs`.)

mod common;

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

use common::{assert_all_workers_run, await_panic, payload_message, wait_until, with_timeout, DropCounter};

const FLOOD: usize = if cfg!(miri) { 20 } else { 10_000 };

/// Panics whose message starts with this are expected: the hook counts them and prints nothing.
const EXPECTED: &str = "expected:";

/// A non-string panic payload.
#[derive(Debug)]
struct Marker(Arc<u32>);

/// How many times the panic hook saw each expected panic, by message (`Marker` by type name).
static HOOK_COUNTS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

/// Installs (once per process) a hook that counts expected panics and forwards the others to
/// the default hook, so that unexpected failures still print.
fn install_counting_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let key = match payload_message(info.payload()) {
                Some(message) if message.starts_with(EXPECTED) => message.to_owned(),
                _ if info.payload().is::<Marker>() => "Marker".to_owned(),
                _ => return default(info),
            };
            *HOOK_COUNTS.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default() += 1;
        }));
    });
}

fn hook_count(message: &str) -> usize {
    HOOK_COUNTS.lock().unwrap_or_else(|e| e.into_inner()).get(message).copied().unwrap_or(0)
}

#[test]
fn propagate_resumes_the_original_str_payload_in_the_awaiter() {
    install_counting_hook();
    with_timeout(|| {
        let payload = await_panic(crew::spawn(async { panic!("expected: propagate str") }));
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"expected: propagate str"));
    });
}

#[test]
fn propagate_resumes_the_original_string_payload_in_the_awaiter() {
    install_counting_hook();
    with_timeout(|| {
        let payload = await_panic(crew::spawn(async {
            // A runtime argument: a literal one would be folded into a `&'static str` payload.
            panic!("expected: propagate {}", std::hint::black_box("String"))
        }));
        assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some("expected: propagate String"));
    });
}

#[test]
fn propagate_resumes_the_very_same_non_string_payload_in_the_awaiter() {
    install_counting_hook();
    with_timeout(|| {
        let inside = Arc::new(7_u32);
        let sent = inside.clone();
        let payload = await_panic(crew::spawn(async move { panic::panic_any(Marker(sent)) }));
        let marker = payload.downcast_ref::<Marker>().expect("the payload is the Marker itself");
        assert!(Arc::ptr_eq(&marker.0, &inside), "the original payload, not a copy");
    });
}

#[test]
fn catch_gives_ok_when_the_task_does_not_panic() {
    with_timeout(|| assert_eq!(crew::block_on(crew::spawn_with(crew::Catch, async { 3 })).unwrap(), 3));
}

#[test]
fn catch_gives_an_error_carrying_a_str_payload_and_its_message() {
    install_counting_hook();
    with_timeout(|| {
        let handle = crew::spawn_with(crew::Catch, async { panic!("expected: catch str") });
        let id = handle.id();
        let err = crew::block_on(handle).unwrap_err();
        assert!(err.is_panic() && !err.is_cancelled());
        assert_eq!(err.panic_message(), Some("expected: catch str"));
        assert_eq!((err.id(), err.name()), (id, None));
        assert_eq!(err.to_string(), format!("task {id} panicked: expected: catch str"));
        assert_eq!(err.into_panic().downcast_ref::<&str>(), Some(&"expected: catch str"));
    });
}

#[test]
fn catch_gives_an_error_carrying_a_string_payload_and_its_message() {
    install_counting_hook();
    with_timeout(|| {
        let err = crew::block_on(crew::spawn_with(crew::Catch, async {
            panic!("expected: catch {}", std::hint::black_box(42))
        }))
        .unwrap_err();
        assert_eq!(err.panic_message(), Some("expected: catch 42"));
        let payload = err.try_into_panic().expect("a panic, not a cancellation");
        assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some("expected: catch 42"));
    });
}

#[test]
fn catch_gives_the_very_same_non_string_payload_and_no_message() {
    install_counting_hook();
    with_timeout(|| {
        let inside = Arc::new(9_u32);
        let sent = inside.clone();
        let err =
            crew::block_on(crew::spawn_with(crew::Catch, async move { panic::panic_any(Marker(sent)) })).unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.panic_message(), None);
        let payload = err.into_panic();
        assert!(Arc::ptr_eq(&payload.downcast_ref::<Marker>().unwrap().0, &inside));
    });
}

#[test]
fn catch_reports_a_task_dropped_by_its_pool_as_cancelled_without_a_payload() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let handle = pool.spawn_with(crew::Catch, std::future::pending::<()>());
        drop(pool);
        let err = crew::block_on(handle).unwrap_err();
        assert!(err.is_cancelled() && !err.is_panic());
        assert_eq!(err.panic_message(), None);
        let err = err.try_into_panic().expect_err("a cancelled task has no payload");
        let into_panic = panic::catch_unwind(AssertUnwindSafe(|| err.into_panic()));
        assert!(into_panic.is_err(), "into_panic on a cancelled task panics");
    });
}

/// A panic payload that records the name of the thread that dropped it.
struct DropProbe(Arc<Mutex<Option<String>>>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = Some(std::thread::current().name().unwrap_or("<unnamed>").to_owned());
    }
}

#[test]
fn catch_keeps_the_payload_alive_until_the_join_error_is_dropped() {
    with_timeout(|| {
        let dropped_on = Arc::new(Mutex::new(None));
        let probe = DropProbe(dropped_on.clone());
        let err = crew::block_on(crew::spawn_with(crew::Catch, async move { panic::panic_any(probe) })).unwrap_err();
        assert_eq!(*dropped_on.lock().unwrap(), None);
        drop(err);
        assert_eq!(dropped_on.lock().unwrap().as_deref(), Some("test-body"));
    });
}

#[test]
fn ignore_awaiter_panics_with_exactly_the_ignore_message() {
    install_counting_hook();
    with_timeout(|| {
        let payload = await_panic(crew::spawn_with(crew::Ignore, async { panic!("expected: ignore") }));
        assert_eq!(payload_message(payload.as_ref()), Some(crew::IGNORED_PANIC_MESSAGE));
    });
}

/// The message constants' old names (before every one became a crate-root `..._MESSAGE`) still
/// name the same text.
#[test]
#[allow(deprecated)]
fn the_deprecated_message_names_equal_their_new_names() {
    assert_eq!(crew::Ignore::PANIC_MESSAGE, crew::IGNORED_PANIC_MESSAGE);
    assert_eq!(crew::SCOPED_TASK_PANICKED, crew::SCOPED_TASK_PANICKED_MESSAGE);
}

#[test]
fn ignore_gives_the_value_when_the_task_does_not_panic() {
    with_timeout(|| assert_eq!(crew::block_on(crew::spawn_with(crew::Ignore, async { 'v' })), 'v'));
}

#[test]
fn ignore_drops_the_payload_on_the_worker_before_anyone_awaits() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("ignoring").build().unwrap();
        let dropped_on = Arc::new(Mutex::new(None));
        let probe = DropProbe(dropped_on.clone());
        let handle = pool.spawn_with(crew::Ignore, async move { panic::panic_any(probe) });
        wait_until("the payload is dropped", || dropped_on.lock().unwrap().is_some());
        assert_eq!(dropped_on.lock().unwrap().as_deref(), Some("ignoring-0"));
        // The payload is dropped inside the task's last poll, and async-task marks the task
        // completed only after that poll returns: the handle turns finished a moment later.
        wait_until("the handle to report finished", || handle.is_finished());
        drop(handle);
    });
}

#[test]
fn the_panic_hook_reports_every_task_panic_once_under_every_policy() {
    install_counting_hook();
    with_timeout(|| {
        // Unwinding is slow under miri (about 0.1 s of wall time per panic).
        const EACH: usize = if cfg!(miri) { 10 } else { 100 };
        let handles: Vec<_> = (0..EACH).map(|_| crew::spawn(async { panic!("expected: hook propagate") })).collect();
        for handle in handles {
            await_panic(handle);
        }
        let handles: Vec<_> =
            (0..EACH).map(|_| crew::spawn_with(crew::Catch, async { panic!("expected: hook catch") })).collect();
        for handle in handles {
            assert!(crew::block_on(handle).unwrap_err().is_panic());
        }
        let finished = Arc::new(AtomicUsize::new(0));
        for _ in 0..EACH {
            let guard = DropCounter(finished.clone());
            crew::spawn_with(crew::Ignore, async move {
                let _guard = guard;
                panic!("expected: hook ignore")
            })
            .detach();
        }
        wait_until("every Ignore task has unwound", || finished.load(Ordering::SeqCst) == EACH);
        // Exactly once each: resuming the payload in the awaiter does not report it again.
        for policy in ["propagate", "catch", "ignore"] {
            assert_eq!(hook_count(&format!("expected: hook {policy}")), EACH, "{policy}");
        }
    });
}

/// Floods a `workers`-worker pool with `FLOOD` detached panicking tasks under `policy`, then
/// checks that the hook saw each panic and that every worker is still alive and running tasks.
fn flood<P: crew::Policy>(policy: P, workers: usize) {
    install_counting_hook();
    with_timeout(move || {
        let prefix = format!("flood-{policy:?}-{workers}");
        let pool = crew::Pool::builder().workers(workers).thread_name(prefix.as_str()).build().unwrap();
        let message: Arc<str> = format!("expected: flood {policy:?} on {workers} workers").into();
        let finished = Arc::new(AtomicUsize::new(0));
        for _ in 0..FLOOD {
            let (guard, message) = (DropCounter(finished.clone()), message.clone());
            pool.spawn_with(policy, async move {
                let _guard = guard;
                panic!("{message}")
            })
            .detach();
        }
        wait_until("every panicking task has unwound", || finished.load(Ordering::SeqCst) == FLOOD);
        assert_eq!(hook_count(&message), FLOOD);
        assert_all_workers_run(&pool, &prefix, workers);
        assert_eq!(crew::block_on(pool.spawn(async { 1 })), 1);
    });
}

#[test]
fn two_workers_survive_10_000_propagate_panics() {
    flood(crew::Propagate, 2);
}

#[test]
fn two_workers_survive_10_000_catch_panics() {
    flood(crew::Catch, 2);
}

#[test]
fn two_workers_survive_10_000_ignore_panics() {
    flood(crew::Ignore, 2);
}

#[test]
fn three_workers_survive_10_000_propagate_panics() {
    flood(crew::Propagate, 3);
}

#[test]
fn three_workers_survive_10_000_catch_panics() {
    flood(crew::Catch, 3);
}

#[test]
fn three_workers_survive_10_000_ignore_panics() {
    flood(crew::Ignore, 3);
}

#[test]
fn a_detached_panicking_task_affects_no_other_task() {
    install_counting_hook();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("bystanders").build().unwrap();
        let counts = common::Counts::new();
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let bystander = pool.spawn(common::Counted::new(&counts, async move { rx.await.unwrap() }));
        wait_until("the bystander is polled", || counts.polls() == 1);
        let finished = Arc::new(AtomicUsize::new(0));
        let detach = |handle: crew::JoinHandle<(), _>| handle.detach();
        let guard = || DropCounter(finished.clone());
        let (a, b, c) = (guard(), guard(), guard());
        detach(pool.spawn(async move {
            let _a = a;
            panic!("expected: detached propagate")
        }));
        pool.spawn_with(crew::Catch, async move {
            let _b = b;
            panic!("expected: detached catch")
        })
        .detach();
        pool.spawn_with(crew::Ignore, async move {
            let _c = c;
            panic!("expected: detached ignore")
        })
        .detach();
        wait_until("the three panicking tasks have unwound", || finished.load(Ordering::SeqCst) == 3);
        assert!(!bystander.is_finished());
        assert_eq!(counts.polls(), 1, "the panics did not wake the bystander");
        tx.send(11).unwrap();
        assert_eq!(crew::block_on(bystander), 11);
        assert_eq!((counts.polls(), counts.drops()), (2, 1));
        assert_all_workers_run(&pool, "bystanders", 2);
    });
}
