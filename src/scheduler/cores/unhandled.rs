//! A pool built with `unhandled_panic(ShutdownPool)`: the note of the first panic that no
//! awaiter will see, and the shutdown it starts (`config/unhandled.rs` says what counts).
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

use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::Shared;
use crate::sync::{thread, Arc};

/// The state of a pool that shuts down on an unhandled panic.
#[derive(Debug, Default)]
pub(crate) struct Unhandled {
    note: Mutex<Option<String>>,
    noted: Event,
    shutdown: Mutex<Option<thread::JoinHandle<()>>>,
}

/// Notes a panic no awaiter will see in `pool`, described by `what`, and starts the pool's
/// shutdown on a thread of its own (see the module docs). Nothing if the pool does not shut down
/// on one.
pub(crate) fn note_unhandled_panic(pool: &Arc<Shared>, what: String) {
    let Some(unhandled) = &pool.unhandled else { return };
    {
        let mut note = unhandled.note.lock().unwrap_or_else(PoisonError::into_inner);
        if note.is_some() {
            return;
        }
        *note = Some(what);
    }
    unhandled.noted.notify(usize::MAX);
    let pool = pool.clone();
    let started = thread::Builder::new().name("crew-unhandled".to_owned()).spawn(move || pool.shutdown());
    // No thread (`Err`): the pool's drop shuts it down; meanwhile `block_on` panics with
    // the note.
    if let Ok(thread) = started {
        *unhandled.shutdown.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
    }
}

impl Shared {
    /// Whether the pool was built with `unhandled_panic(ShutdownPool)`.
    pub(crate) fn shuts_down_on_unhandled_panic(&self) -> bool {
        self.unhandled.is_some()
    }

    /// The note of the panic that shut the pool down, if any.
    pub(crate) fn unhandled_note(&self) -> Option<String> {
        self.unhandled.as_ref()?.note.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A registration for the note, if the pool shuts down on an unhandled panic: look at
    /// [`unhandled_note`](Shared::unhandled_note) after it.
    pub(crate) fn listen_unhandled(&self) -> Option<EventListener> {
        Some(self.unhandled.as_ref()?.noted.listen())
    }

    /// Waits for the shutdown an unhandled panic started, if any (the pool's drop).
    pub(crate) fn join_unhandled_shutdown(&self) {
        let Some(unhandled) = &self.unhandled else { return };
        let thread = unhandled.shutdown.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// The pool this thread works for or blocks in, if it shuts down on an unhandled panic: where a
/// panic caught on this thread is noted.
pub(crate) fn current_watching_pool() -> Option<Arc<Shared>> {
    context::current_pool().filter(|pool| pool.unhandled.is_some())
}
