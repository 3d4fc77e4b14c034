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
//! - Entries are spread over shards by the spawning thread (round robin), so workers spawning
//!   concurrently rarely share a lock; and there are many shards (32 per worker, up to 64), so
//!   a thread spawning and the workers removing the entries of tasks that ended seldom meet on
//!   one either (4 per worker cost `remote_spawn_join` about 15%, see `BENCHMARKS.md`). The
//!   global pool has a registry only with the task dump on: it is never dropped.
//! - Each shard's count of entries is mirrored, under its lock, in a counter that the metrics
//!   read without locking ([`Registry::live`]).

use std::task::Waker;

use crate::sync::{lock, CachePadded, Counter, Mutex};
use crate::task::TaskInfo;

const SHARD_BITS: u32 = 6;
const MAX_SHARDS: usize = 1 << SHARD_BITS;
/// Entries each shard has room for when the pool starts (16 bytes each): with many shards, a
/// pool's first spawns would otherwise each grow an empty shard, one allocation per shard
/// (`tests/alloc.rs` counts a task's allocations).
const ENTRIES_PER_SHARD: usize = 8;

#[derive(Debug)]
pub(crate) struct Registry {
    shards: Box<[CachePadded<ShardCell>]>,
}

/// A shard and its count of registered tasks, which `register` and `remove` set under the
/// shard's lock, so that [`Registry::live`] reads it without taking any lock.
#[derive(Debug)]
struct ShardCell {
    shard: Mutex<Shard>,
    live: Counter,
}

#[derive(Debug, Default)]
struct Shard {
    closed: bool,
    entries: Vec<Entry>,
    /// With task records on (the task dump): each occupied entry's task identity, by entry
    /// index; empty otherwise, so that an entry stays two words.
    infos: Vec<Option<TaskInfo>>,
    /// Head of the free list of vacant entries (`usize::MAX` if none).
    free: usize,
    /// Occupied entries.
    occupied: usize,
}

#[derive(Debug)]
enum Entry {
    Vacant {
        next_free: usize,
    },
    /// A live task's waker.
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
    /// A registry with enough shards for `workers` threads spawning and removing at once.
    pub(crate) fn new(workers: usize) -> Registry {
        // Under loom, 4 per worker: `close` locks every shard, and each lock is a step the
        // models explore.
        let per_worker = crate::sync::shrunk_under_loom(32, 4);
        let shards = (workers * per_worker).next_power_of_two().min(MAX_SHARDS);
        let cell = || {
            let shard = Shard::with_capacity(ENTRIES_PER_SHARD);
            CachePadded::new(ShardCell { shard: Mutex::new(shard), live: Counter::default() })
        };
        Registry { shards: (0..shards).map(|_| cell()).collect() }
    }

    /// Registers a task created by `spawn(key)`, keeping the waker that `waker_of` returns.
    /// Once the registry is closed, gives `spawn` back uncalled, to be dropped by the caller
    /// outside the lock.
    pub(crate) fn register<S, R>(
        &self,
        hint: usize,
        spawn: S,
        waker_of: impl FnOnce(&R) -> (Waker, Option<TaskInfo>),
    ) -> Result<R, S>
    where
        S: FnOnce(Key) -> R,
    {
        let shard_index = hint & (self.shards.len() - 1);
        let cell = &self.shards[shard_index];
        let mut shard = lock(&cell.shard);
        if shard.closed {
            return Err(spawn);
        }
        let entry = shard.vacant_entry();
        let spawned = spawn(Key::new(shard_index, entry));
        let (waker, info) = waker_of(&spawned);
        shard.occupy(entry, waker);
        if let Some(info) = info {
            shard.keep_info(entry, info);
        }
        // Written under the shard's lock: one writer at a time.
        cell.live.set(shard.occupied as u64);
        Ok(spawned)
    }

    /// Removes a task's entry (no-op once the registry is closed), marking its record ended.
    pub(crate) fn remove(&self, key: Key) {
        let waker = {
            let cell = &self.shards[key.shard()];
            let mut shard = lock(&cell.shard);
            if shard.closed {
                return;
            }
            let waker = shard.vacate(key.entry());
            cell.live.set(shard.occupied as u64);
            if !shard.infos.is_empty() {
                // Task records on: the identity goes too, dropped after unlocking.
                let info = shard.take_info(key.entry());
                drop(shard);
                drop(info);
            }
            waker
        };
        // Dropped outside the lock: dropping a waker can drop its task.
        drop(waker);
    }

    /// The identities of the registered tasks that have a record (see `Pool::dump`). Each shard
    /// is locked only while its entries' identities are cloned (a reference count each): no
    /// user code runs, and spawns on other shards go on meanwhile.
    pub(crate) fn recorded(&self) -> Vec<TaskInfo> {
        let mut infos = Vec::new();
        for cell in self.shards.iter() {
            let shard = lock(&cell.shard);
            infos.extend(shard.infos.iter().flatten().cloned());
        }
        infos
    }

    /// Closes every shard and returns the wakers of every still-registered task.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for cell in self.shards.iter() {
            let mut shard = lock(&cell.shard);
            shard.closed = true;
            shard.free = usize::MAX;
            shard.occupied = 0;
            cell.live.set(0);
            wakers.extend(shard.entries.drain(..).filter_map(|entry| match entry {
                Entry::Occupied(waker) => Some(waker),
                Entry::Vacant { .. } => None,
            }));
            shard.infos.clear();
        }
        wakers
    }

    /// The number of registered tasks, counted under the shards' locks.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|cell| lock(&cell.shard).entries.iter().filter(|s| matches!(s, Entry::Occupied(..))).count())
            .sum()
    }

    /// The number of registered tasks (0 once closed), without taking a lock: each shard's count
    /// as last written, so a little behind while tasks come and go.
    pub(crate) fn live(&self) -> u64 {
        self.shards.iter().map(|cell| cell.live.get()).sum()
    }
}

impl Shard {
    /// An empty shard with room for `entries` entries before its first growth.
    fn with_capacity(entries: usize) -> Shard {
        Shard { closed: false, entries: Vec::with_capacity(entries), infos: Vec::new(), free: usize::MAX, occupied: 0 }
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
            Entry::Vacant { next_free } => {
                self.free = next_free;
                self.occupied += 1;
            }
            Entry::Occupied(..) => unreachable!("registry entry {entry} was handed out twice"),
        }
    }

    /// Keeps `info` as entry `entry`'s task identity (task records on).
    #[cold]
    #[inline(never)]
    fn keep_info(&mut self, entry: usize, info: TaskInfo) {
        if self.infos.len() <= entry {
            self.infos.resize(entry + 1, None);
        }
        self.infos[entry] = Some(info);
    }

    /// Takes entry `entry`'s task identity (task records on), marking its record ended.
    #[cold]
    #[inline(never)]
    fn take_info(&mut self, entry: usize) -> Option<TaskInfo> {
        let info = self.infos.get_mut(entry)?.take()?;
        if let Some(record) = info.record() {
            record.ended();
        }
        Some(info)
    }

    fn vacate(&mut self, entry: usize) -> Option<Waker> {
        match std::mem::replace(&mut self.entries[entry], Entry::Vacant { next_free: self.free }) {
            Entry::Occupied(waker) => {
                self.free = entry;
                self.occupied -= 1;
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
        registry.register(hint, |k| k, |_| (noop(), None)).ok().expect("the registry is open")
    }

    #[test]
    fn keys_round_trip_and_entries_are_reused() {
        let registry = Registry::new(2);
        let a = register(&registry, 1);
        let b = register(&registry, 1);
        assert_ne!(a, b);
        assert_eq!((a.shard(), b.shard()), (1, 1));
        assert_eq!((registry.len(), registry.live()), (2, 2));
        registry.remove(a);
        assert_eq!(registry.live(), 1);
        let c = register(&registry, 1);
        assert_eq!(c, a, "the vacated entry is reused");
        assert_eq!((registry.len(), registry.live()), (2, 2));
    }

    #[test]
    fn close_returns_each_waker_once_and_refuses_new_tasks() {
        let registry = Registry::new(1);
        let keys: Vec<Key> = (0..10).map(|i| register(&registry, i)).collect();
        registry.remove(keys[3]);
        assert_eq!(registry.live(), 9);
        assert_eq!(registry.close().len(), 9);
        assert_eq!(registry.live(), 0);
        assert!(registry.close().is_empty());
        assert!(registry.register(0, |k| k, |_| (noop(), None)).is_err());
        registry.remove(keys[4]); // no-op after close
    }
}
