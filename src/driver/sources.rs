//! The driver's registered sources, by token ([`Sources`]): a slab whose slots carry a
//! generation, so that an event for a source that is gone never reaches the one that reused its
//! slot.
//!
//! Invariants:
//! - A token is a slot's index (the low [`INDEX_BITS`]) and the generation the slot had when the
//!   source was added (the bits above). Removing a source moves its slot's generation on, so a
//!   token handed out before, still in an event the driver read from the kernel, no longer
//!   matches: the turn's lookup ([`Sources::with_lookup`]) gives `None` for it, and the event is
//!   dropped.
//! - Tokens above [`MAX_SOURCE_TOKEN`] are the driver's own (its waker, its timer, signals);
//!   no source ever gets one.
//! - The lock is held for a lookup batch (one per turn), an add or a removal: no user code, no
//!   syscall, no waker runs under it.
//! - `registered` counts the live sources: changed only under the lock (by an add or a
//!   removal), read without it by [`Sources::any`] and [`Sources::len`], a hint (a worker
//!   deciding whether to spin before it parks, the driver's `Debug`), never part of a hand-over.

use std::sync::Arc;

use crate::driver::scheduled_io::ScheduledIo;
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

/// Bits of a token that index the slab: 2^24 sources at once.
pub(crate) const INDEX_BITS: u32 = 24;

const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;

/// The generations a slot goes through before it wraps (a token is a `usize`).
const GENERATIONS: usize = usize::MAX >> INDEX_BITS;

/// The largest token a source can have: the tokens above are the driver's own.
pub(crate) const MAX_SOURCE_TOKEN: usize = usize::MAX - 16;

/// The sources (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Sources {
    slab: Mutex<Slab>,
    /// How many sources are registered (see the module docs).
    registered: AtomicUsize,
}

#[derive(Debug, Default)]
struct Slab {
    slots: Vec<Slot>,
    /// Vacant slots, to reuse first.
    free: Vec<usize>,
}

#[derive(Debug)]
struct Slot {
    generation: usize,
    io: Option<Arc<ScheduledIo>>,
}

impl Sources {
    /// Adds a source: its token and its readiness.
    pub(crate) fn add(&self) -> std::io::Result<(usize, Arc<ScheduledIo>)> {
        let io = Arc::new(ScheduledIo::default());
        let mut slab = lock(&self.slab);
        let index = match slab.free.pop() {
            Some(index) => index,
            None => {
                let index = slab.slots.len();
                if index > INDEX_MASK {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::OutOfMemory,
                        format!("crew's driver holds {index} sources, its limit (2^{INDEX_BITS})"),
                    ));
                }
                slab.slots.push(Slot { generation: 0, io: None });
                index
            }
        };
        let slot = &mut slab.slots[index];
        slot.io = Some(io.clone());
        let token = (slot.generation << INDEX_BITS) | index;
        // Relaxed: changed under the lock, read as a hint (module docs).
        self.registered.fetch_add(1, Ordering::Relaxed);
        debug_assert!(token <= MAX_SOURCE_TOKEN);
        Ok((token, io))
    }

    /// Removes the source of `token`, if it is still there.
    pub(crate) fn remove(&self, token: usize) {
        let removed = {
            let mut slab = lock(&self.slab);
            let index = token & INDEX_MASK;
            match slab.slots.get_mut(index) {
                Some(slot) if slot.generation == token >> INDEX_BITS && slot.io.is_some() => {
                    slot.generation = (slot.generation + 1) % GENERATIONS;
                    let io = slot.io.take();
                    slab.free.push(index);
                    // Relaxed: changed under the lock, read as a hint (module docs).
                    self.registered.fetch_sub(1, Ordering::Relaxed);
                    io
                }
                _ => None,
            }
        };
        drop(removed);
    }

    /// Runs `f` with a lookup of tokens to their sources (`None` for a stale token), under one
    /// lock: a turn's batch.
    pub(crate) fn with_lookup<R>(&self, f: impl FnOnce(&dyn Fn(usize) -> Option<Arc<ScheduledIo>>) -> R) -> R {
        let slab = lock(&self.slab);
        let lookup = |token: usize| {
            let slot = slab.slots.get(token & INDEX_MASK)?;
            if slot.generation != token >> INDEX_BITS {
                return None;
            }
            slot.io.clone()
        };
        f(&lookup)
    }

    /// The source of `token`, if it is still there.
    #[cfg(test)]
    pub(crate) fn get(&self, token: usize) -> Option<Arc<ScheduledIo>> {
        self.with_lookup(|lookup| lookup(token))
    }

    /// How many sources are registered, as of a recent add or removal.
    pub(crate) fn len(&self) -> usize {
        // Relaxed: a hint (module docs).
        self.registered.load(Ordering::Relaxed)
    }

    /// Whether any source is registered, as of a recent add or removal (a hint, without the lock).
    pub(crate) fn any(&self) -> bool {
        self.len() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_of_a_removed_source_finds_nothing_even_once_its_slot_is_reused() {
        let sources = Sources::default();
        let (old, old_io) = sources.add().unwrap();
        assert!(Arc::ptr_eq(&sources.get(old).unwrap(), &old_io));
        sources.remove(old);
        assert!(sources.get(old).is_none());
        let (new, new_io) = sources.add().unwrap();
        assert_eq!(new & INDEX_MASK, old & INDEX_MASK, "the slot is reused");
        assert_ne!(new, old);
        assert!(sources.get(old).is_none(), "the old token is stale");
        assert!(Arc::ptr_eq(&sources.get(new).unwrap(), &new_io));
        sources.remove(old); // a stale removal changes nothing
        assert!(sources.get(new).is_some());
        assert_eq!(sources.len(), 1);
    }
}
