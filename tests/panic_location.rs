//! Panics on misuse name the caller's line (`#[track_caller]`, as tokio's `rt_panic` tests
//! expect): `JoinError::into_panic` on a cancelled task, and `spawn` when the global pool cannot
//! start. One binary of its own: the second test sets `CREW_WORKERS` to a bad value for the whole
//! process, and no other test here touches the global pool.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Where the last panic on this thread happened, as the panic hook saw it.
    static LOCATION: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// Runs `f`, which must panic, and returns the file and line the panic hook reported.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let location = info.location().map(|l| (l.file().to_owned(), l.line()));
            LOCATION.with(|slot| *slot.borrow_mut() = location);
        }));
    });
    LOCATION.with(|slot| slot.borrow_mut().take());
    assert!(panic::catch_unwind(AssertUnwindSafe(f)).is_err(), "expected a panic");
    LOCATION.with(|slot| slot.borrow_mut().take()).expect("the hook saw the panic")
}

#[test]
fn into_panic_on_a_cancelled_task_reports_the_callers_line() {
    let pool = crew::Pool::builder().workers(1).build().unwrap();
    let handle = pool.spawn_with(crew::Catch, std::future::pending::<()>());
    drop(pool);
    let err = crew::block_on(handle).unwrap_err();
    assert!(err.is_cancelled());
    let line = line!() + 1;
    let (file, at) = panic_location(move || drop(err.into_panic()));
    assert_eq!((file.as_str(), at), (file!(), line));
}

#[test]
fn spawn_when_the_global_pool_cannot_start_reports_the_callers_line() {
    // Before any spawn in this process; nothing else in this binary reads it.
    std::env::set_var("CREW_WORKERS", "0");
    let line = line!() + 1;
    let (file, at) = panic_location(|| crew::spawn(async {}).detach());
    assert_eq!((file.as_str(), at), (file!(), line));
    let line = line!() + 1;
    let (file, at) = panic_location(|| crew::spawn_with(crew::Catch, async {}).detach());
    assert_eq!((file.as_str(), at), (file!(), line));
}
