//! tokio's crates inside crew tasks: the tests in `tests/` run reqwest, tonic and sqlx in
//! plain crew tasks, with crew's `tokio` feature on (this crate's default `context` feature) and
//! no wrapper around any future. See README.md.
//!
//! This library holds only the tests' shared helpers: [`tokio_context`], which every crew task
//! of the tests calls first, [`join`], and [`tokio_handle`].

/// The tokio runtime context of the current thread, which crew's `tokio` feature gives every
/// thread that polls crew tasks.
///
/// Every crew task of the tests calls it first, so that a build without the feature
/// (`cargo test --no-default-features`) fails with this message rather than deep inside a
/// library ("there is no reactor running", or a hang).
///
/// # Panics
///
/// If the current thread holds no tokio runtime context.
#[track_caller]
pub fn tokio_context() -> tokio::runtime::Handle {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle,
        Err(e) => panic!(
            "no tokio runtime context on crew thread {:?} ({e}): crew's `tokio` feature gives every \
             crew thread one; this build has it {}",
            std::thread::current().name().unwrap_or("<unnamed>"),
            if cfg!(feature = "context") { "on, so crew failed to enter it" } else { "off (--no-default-features)" },
        ),
    }
}

/// `builder.tokio_handle(handle)`: the pool enters `handle` instead of crew's own runtime.
///
/// `Builder::tokio_handle` exists only with crew's `tokio` feature; without it this panics, so
/// that the test using it builds and fails like the others rather than not building at all.
pub fn tokio_handle(builder: crew::Builder, handle: tokio::runtime::Handle) -> crew::Builder {
    #[cfg(feature = "context")]
    return builder.tokio_handle(handle);
    #[cfg(not(feature = "context"))]
    {
        drop((builder, handle));
        panic!(
            "crew::Builder::tokio_handle needs crew's `tokio` feature: this build has it off (--no-default-features)"
        );
    }
}

/// Awaits a task spawned with [`crew::Catch`] and returns its output; if it panicked, panics
/// again here with its message.
///
/// The tests spawn with `Catch` the tasks whose end a test's own thread awaits, so that a
/// failure inside one (a missing context first of all) is reported in that test's output: with
/// the default `Propagate` policy the awaiter resumes the payload without printing it, and the
/// panic hook's report on a global pool's worker goes to the captured output of whichever test
/// started that worker.
pub async fn join<T>(task: crew::JoinHandle<T, crew::Catch>) -> T {
    match task.await {
        Ok(output) => output,
        Err(error) => panic!("{error}"),
    }
}
