//! A loom-visible stand-in for crossbeam-utils' `Parker`/`Unparker`.
//!
//! Invariants: one token, as in crossbeam: `unpark` sets it, `park` consumes it, blocking
//! while it is unset; an `unpark` before a `park` is never lost.

use loom::sync::{Arc, Condvar, Mutex};

#[derive(Debug)]
struct Inner {
    token: Mutex<bool>,
    cond: Condvar,
}

#[derive(Debug)]
pub(crate) struct Parker {
    unparker: Unparker,
}

#[derive(Debug, Clone)]
pub(crate) struct Unparker {
    inner: Arc<Inner>,
}

impl Parker {
    pub(crate) fn new() -> Self {
        let inner = Arc::new(Inner { token: Mutex::new(false), cond: Condvar::new() });
        Parker { unparker: Unparker { inner } }
    }

    pub(crate) fn park(&self) {
        let inner = &self.unparker.inner;
        let mut token = inner.token.lock().unwrap();
        while !*token {
            token = inner.cond.wait(token).unwrap();
        }
        *token = false;
    }

    pub(crate) fn unparker(&self) -> &Unparker {
        &self.unparker
    }
}

impl Unparker {
    pub(crate) fn unpark(&self) {
        *self.inner.token.lock().unwrap() = true;
        self.inner.cond.notify_one();
    }
}
