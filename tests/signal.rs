//! The `signal` feature: `crew::signal` with the process signalling itself (through the `kill`
//! command, so no `unsafe` here). Each test uses signals of its own, since every listener in
//! the process hears every delivery. Run with `cargo test --features signal --test signal`.
#![cfg(all(feature = "signal", unix))]

mod common;

use std::future::Future;
use std::process::Command;

use crew::signal::{self, Signal, Signals};
use futures_lite::StreamExt;

/// Sends `signal` (a name `kill -s` takes) to this process, and waits until `kill` has sent it.
fn raise(signal: &str) {
    let status = Command::new("kill").args(["-s", signal, &std::process::id().to_string()]).status().unwrap();
    assert!(status.success(), "kill -s {signal}");
}

/// Runs `body` on the global pool, failing instead of hanging.
fn run<T: Send + 'static>(body: impl Future<Output = T> + Send + 'static) -> T {
    common::with_timeout(move || crew::block_on(crew::spawn(body)))
}

#[test]
fn ctrl_c_completes_when_the_process_sends_itself_sigint() {
    // Registered by the call: the signal sent before the first poll is not missed (nor does it
    // end the process, which SIGINT's default action would).
    let ctrl_c = signal::ctrl_c();
    raise("INT");
    run(ctrl_c).unwrap();
}

#[test]
fn signal_completes_at_the_next_delivery_of_its_own_signal_only() {
    let mut usr1 = signal::signal(Signal::Usr1);
    let usr2 = signal::signal(Signal::Usr2);
    raise("USR2");
    // Handed back unfinished, to be awaited once SIGUSR1 is sent.
    #[allow(clippy::async_yields_async)]
    let usr1 = run(async move {
        usr2.await.unwrap();
        assert!(futures_lite::future::poll_once(&mut usr1).await.is_none(), "SIGUSR2 is not SIGUSR1");
        usr1
    });
    raise("USR1");
    run(usr1).unwrap();
}

#[test]
fn a_listener_made_after_a_delivery_does_not_hear_it_even_before_the_driver_saw_it() {
    // The first listener registers the pipe and drains it (its readiness cleared); the delivery
    // (raised on this thread: handled before `raise` returns) then writes a byte that no driver
    // turn has seen when the second listener is made.
    let first = signal::signal(Signal::Urg);
    signal_hook::low_level::raise(signal_hook::consts::SIGURG).unwrap();
    let second = signal::signal(Signal::Urg);
    run(first).unwrap();
    let heard = run(async move { crew::time::timeout(std::time::Duration::from_millis(300), second).await.is_ok() });
    assert!(!heard, "the listener made after the delivery heard it");
}

#[test]
fn a_signals_stream_yields_each_signal_of_its_set() {
    let mut signals = Signals::new([Signal::Hup, Signal::Alarm]).unwrap();
    raise("HUP");
    let mut signals = run(async move {
        assert_eq!(signals.next().await.unwrap().unwrap(), Signal::Hup);
        signals
    });
    raise("ALRM");
    run(async move { assert_eq!(signals.next().await.unwrap().unwrap(), Signal::Alarm) });
}

#[test]
fn a_signal_that_cannot_be_caught_gives_an_error_naming_it() {
    for uncatchable in signal::UNCATCHABLE {
        let error = run(signal::signal(uncatchable)).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains(&format!("{uncatchable:?}")), "{error}");
    }
}

/// Set in the child process of the next test.
const CHILD: &str = "CREW_SIGNAL_CHILD";

#[test]
fn a_signal_listened_for_once_no_longer_ends_the_process_after_the_future_is_dropped() {
    if common::child::is_child(CHILD) {
        drop(signal::signal(Signal::Term));
        let witness = signal::signal(Signal::Pipe);
        raise("TERM"); // SIGTERM's default action would end the process here...
        raise("PIPE"); // ...before this one, sent after it, is heard.
        run(witness).unwrap();
        return;
    }
    let test = "a_signal_listened_for_once_no_longer_ends_the_process_after_the_future_is_dropped";
    let output = common::child::output_within_timeout(common::child::child_command(CHILD, test));
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the child ended with {:?}:\n{printed}", output.status);
    assert!(printed.contains("1 passed"), "the child ran the test:\n{printed}");
}
