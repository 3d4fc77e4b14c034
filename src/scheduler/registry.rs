//! The registry of a private pool's live tasks, so that dropping the pool can drop them all.
//!
//! Invariants:
//! - Every task spawned on a private pool holds one entry (its waker) from the moment it is
//!   spawned until its future is dropped — after completing, on cancellation, or at shutdown —
//!   whichever comes first; the task's future removes the entry in its `Drop`.
//! - [`Registry::close`] marks every shard closed and returns every registered waker, under the
//!   shard locks, exactly once. After that, `register` refuses (the caller drops the new task)
//!   and `remove` is a no-op. Waking the returned wakers after the pool stopped makes each task
//!   be scheduled into a closed pool, which drops its future.
//! - No user code runs while a shard lock is held: spawning (the allocation and moving the
//!   future in) and cloning a waker run no user code, and wakers are woken after unlocking.
//! - Entries are spread over shards by the spawning thread, so workers spawning concurrently
//!   rarely share a lock. The global pool has no registry: it is never dropped.

use std::task::Waker;

use crate::sync::{lock, CachePadded, Mutex};

const SHARD_BITS: u32 = 6;
const MAX_SHARDS: usize = 1 << SHARD_BITS;

#[derive(Debug)]
pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
}

#[derive(Debug, Default)]
struct Shard {
    closed: bool,
    entries: Vec<Entry>,
    /// Head of the free list of vacant entries (`usize::MAX` if none).
    free: usize,
}

#[derive(Debug)]
enum Entry {
    Vacant { next_free: usize },
    Occupied(Waker),
}

/// Where a registered task's entry lives: a shard and an index into its entries, packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key(usize);

impl Key {
    fn new(shard: usize, entry: usize) -> Key {
        Key((entry << SHARD_BITS) | shard)
    }

    fn shard(self) -> usize {
        self.0 & (MAX_SHARDS - 1)
    }

    fn entry(self) -> usize {
        self.0 >> SHARD_BITS
    }
}

impl Registry {
    /// A registry with enough shards for `workers` threads spawning at once.
    pub(crate) fn new(workers: usize) -> Registry {
        let shards = (workers * 4).next_power_of_two().min(MAX_SHARDS);
        Registry { shards: (0..shards).map(|_| CachePadded::new(Mutex::new(Shard::empty()))).collect() }
    }

    /// Registers a task created by `spawn(key)`, keeping the waker that `waker_of` returns.
    /// Once the registry is closed, gives `spawn` back uncalled, to be dropped by the caller
    /// outside the lock.
    pub(crate) fn register<S, R>(&self, hint: usize, spawn: S, waker_of: impl FnOnce(&R) -> Waker) -> Result<R, S>
    where
        S: FnOnce(Key) -> R,
    {
        let shard_index = hint & (self.shards.len() - 1);
        let mut shard = lock(&self.shards[shard_index]);
        if shard.closed {
            return Err(spawn);
        }
        let entry = shard.vacant_entry();
        let spawned = spawn(Key::new(shard_index, entry));
        shard.occupy(entry, waker_of(&spawned));
        Ok(spawned)
    }

    /// Removes a task's entry (no-op once the registry is closed).
    pub(crate) fn remove(&self, key: Key) {
        let waker = {
            let mut shard = lock(&self.shards[key.shard()]);
            if shard.closed {
                return;
            }
            shard.vacate(key.entry())
        };
        // Dropped outside the lock: dropping a waker can drop its task.
        drop(waker);
    }

    /// Closes every shard and returns the wakers of every still-registered task.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = lock(shard);
            shard.closed = true;
            shard.free = usize::MAX;
            wakers.extend(shard.entries.drain(..).filter_map(|entry| match entry {
                Entry::Occupied(waker) => Some(waker),
                Entry::Vacant { .. } => None,
            }));
        }
        wakers
    }

    /// The number of registered tasks.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| lock(shard).entries.iter().filter(|s| matches!(s, Entry::Occupied(_))).count())
            .sum()
    }
}

impl Shard {
    fn empty() -> Shard {
        Shard { closed: false, entries: Vec::new(), free: usize::MAX }
    }

    /// The entry the next `occupy` should fill; pushes a vacant entry if none is free.
    fn vacant_entry(&mut self) -> usize {
        if self.free == usize::MAX {
            self.entries.push(Entry::Vacant { next_free: usize::MAX });
            self.free = self.entries.len() - 1;
        }
        self.free
    }

    fn occupy(&mut self, entry: usize, waker: Waker) {
        match std::mem::replace(&mut self.entries[entry], Entry::Occupied(waker)) {
            Entry::Vacant { next_free } => self.free = next_free,
            Entry::Occupied(_) => unreachable!("registry entry {entry} was handed out twice"),
        }
    }

    fn vacate(&mut self, entry: usize) -> Option<Waker> {
        match std::mem::replace(&mut self.entries[entry], Entry::Vacant { next_free: self.free }) {
            Entry::Occupied(waker) => {
                self.free = entry;
                Some(waker)
            }
            vacant @ Entry::Vacant { .. } => {
                // Removing twice is a bug in crew; keep the free list intact all the same.
                self.entries[entry] = vacant;
                debug_assert!(false, "registry entry {entry} removed twice");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Waker {
        futures::task::noop_waker()
    }

    fn register(registry: &Registry, hint: usize) -> Key {
        registry.register(hint, |k| k, |_| noop()).ok().expect("the registry is open")
    }

    #[test]
    fn keys_round_trip_and_entries_are_reused() {
        let registry = Registry::new(2);
        let a = register(&registry, 1);
        let b = register(&registry, 1);
        assert_ne!(a, b);
        assert_eq!((a.shard(), b.shard()), (1, 1));
        assert_eq!(registry.len(), 2);
        registry.remove(a);
        let c = register(&registry, 1);
        assert_eq!(c, a, "the vacated entry is reused");
        assert_eq!(registry.len(), 2);
    }

    #[test]
    fn close_returns_each_waker_once_and_refuses_new_tasks() {
        let registry = Registry::new(1);
        let keys: Vec<Key> = (0..10).map(|i| register(&registry, i)).collect();
        registry.remove(keys[3]);
        assert_eq!(registry.close().len(), 9);
        assert!(registry.close().is_empty());
        assert!(registry.register(0, |k| k, |_| noop()).is_err());
        registry.remove(keys[4]); // no-op after close
    }
}
