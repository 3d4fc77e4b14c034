//! A pool built with `unhandled_panic(ShutdownPool)`: the note of the first panic that no
//! awaiter will see, and the shutdown it starts (`config/unhandled.rs` says what counts; the
//! pool's side is `shutdown.rs`).
//!
//! Invariants:
//! - The first note wins; each later one is dropped (the pool is already going down).
//! - The shutdown runs on a thread of its own ("crew-unhandled"), never on the thread that
//!   noted the panic: that thread may be a worker inside a poll, or inside async-task dropping
//!   an output, where a blocking shutdown could wait for itself. `Pool`'s drop joins that thread
//!   after its own `shutdown` call (which returns at once once a shutdown has begun), so a drop
//!   never returns before the pool is down.
//! - Whoever waits for the note (`Pool::block_on`) listens on `noted` and looks again after it
//!   registered: no note is missed.

use std::sync::{Mutex, PoisonError};

use event_listener::{Event, EventListener};

use crate::sync::thread;

/// The state of a pool that shuts down on an unhandled panic.
#[derive(Debug, Default)]
pub(crate) struct Unhandled {
    note: Mutex<Option<String>>,
    noted: Event,
    shutdown: Mutex<Option<thread::JoinHandle<()>>>,
}

impl Unhandled {
    /// Notes a panic no awaiter will see, described by `what`, and runs `shutdown` on a thread
    /// of its own (see the module docs); nothing if a note came first.
    pub(crate) fn note(&self, what: String, shutdown: impl FnOnce() + Send + 'static) {
        {
            let mut note = self.note.lock().unwrap_or_else(PoisonError::into_inner);
            if note.is_some() {
                return;
            }
            *note = Some(what);
        }
        self.noted.notify(usize::MAX);
        let started = thread::Builder::new().name("crew-unhandled".to_owned()).spawn(shutdown);
        // No thread (`Err`): the pool's drop shuts it down; meanwhile `block_on` panics with
        // the note.
        if let Ok(thread) = started {
            *self.shutdown.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
        }
    }

    /// The note, if any.
    pub(crate) fn noted(&self) -> Option<String> {
        self.note.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A registration for the note: look at [`noted`](Unhandled::noted) after it.
    pub(crate) fn listen(&self) -> EventListener {
        self.noted.listen()
    }

    /// Waits for the shutdown a note started, if any.
    pub(crate) fn join_shutdown(&self) {
        let thread = self.shutdown.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}
