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
//!   one either (fewer shards measured: `docs/performance-notes.md`, "Remote spawn"). The
//!   global pool has a registry only with the task dump on: it is never dropped.
//! - Each shard's count of entries is kept, under its lock, in a counter that the metrics read
//!   without locking ([`Registry::live`]).
//! - A spawn registers on the spawning thread and the task's end removes on the thread that ran
//!   it, so the lines a registration touches move between threads at nearly every spawn and
//!   end: a shard (its lock, its fields, its count) is one cache line on 64-bit Linux, and the
//!   registry's `Arc` counts, written at every spawn and end, share no line with the shard
//!   table's pointer, read at both (`docs/performance-notes.md`, "Remote spawn").

use std::task::Waker;

use crate::sync::{lock, Arc, CachePadded, Mutex, SingleWriterCounter};
use crate::task::{OnTaskEnd, TaskInfo};

const SHARD_BITS: u32 = 6;
const MAX_SHARDS: usize = 1 << SHARD_BITS;
/// A task's entry in its pool's registry, which is also its count of live tasks: removed when
/// the task ends.
#[derive(Debug)]
pub(crate) struct Registration {
    registry: Arc<Registry>,
    key: Key,
}

impl Registration {
    pub(super) fn new(registry: Arc<Registry>, key: Key) -> Registration {
        Registration { registry, key }
    }
}

impl OnTaskEnd for Registration {
    fn task_ended(&mut self) {
        self.registry.remove(self.key);
    }
}

/// Entries each shard has room for when the pool starts (16 bytes each): with many shards, a
/// pool's first spawns would otherwise each grow an empty shard, one allocation per shard
/// (`tests/alloc.rs` counts a task's allocations).
const ENTRIES_PER_SHARD: usize = 8;

#[derive(Debug)]
pub(crate) struct Registry {
    /// Padded: the registry lives in an `Arc` whose count every spawn raises and every task's
    /// end lowers, from different threads; every `register` and `remove` reads this pointer,
    /// which must not share that line.
    shards: CachePadded<Box<[CachePadded<ShardCell>]>>,
}

/// A shard and its count of registered tasks, which `register` and `remove` set under the
/// shard's lock, so that [`Registry::live`] reads it without taking any lock. One cache line
/// on 64-bit Linux (a unit test checks it): the spawning thread and the workers that end its
/// tasks hand the lock back and forth, and each hand-over moves every line the cell spans.
#[derive(Debug)]
struct ShardCell {
    shard: Mutex<Shard>,
    live: SingleWriterCounter,
}

#[derive(Debug)]
struct Shard {
    entries: Vec<Entry>,
    /// Head of the free list of vacant entries (`usize::MAX` if none).
    free: usize,
    /// With task records on (the task dump): each occupied entry's task identity, by entry
    /// index; `None` otherwise, so that an entry stays two words. Boxed: one word here instead
    /// of a vector's three keeps the cell on one line.
    #[allow(clippy::box_collection)]
    infos: Option<Box<Vec<Option<TaskInfo>>>>,
    closed: bool,
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
            CachePadded::new(ShardCell { shard: Mutex::new(shard), live: SingleWriterCounter::default() })
        };
        Registry { shards: CachePadded::new((0..shards).map(|_| cell()).collect()) }
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
        cell.live.incr();
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
            if waker.is_some() {
                // Under the shard's lock, as in `register`.
                cell.live.decr();
            }
            if shard.infos.is_some() {
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
            infos.extend(shard.infos.iter().flat_map(|infos| infos.iter()).flatten().cloned());
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
            cell.live.set(0);
            wakers.extend(shard.entries.drain(..).filter_map(|entry| match entry {
                Entry::Occupied(waker) => Some(waker),
                Entry::Vacant { .. } => None,
            }));
            shard.infos = None;
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
        Shard { entries: Vec::with_capacity(entries), free: usize::MAX, infos: None, closed: false }
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
            Entry::Occupied(..) => unreachable!("registry entry {entry} was handed out twice"),
        }
    }

    /// Keeps `info` as entry `entry`'s task identity (task records on).
    #[cold]
    #[inline(never)]
    fn keep_info(&mut self, entry: usize, info: TaskInfo) {
        let infos = self.infos.get_or_insert_with(Box::default);
        if infos.len() <= entry {
            infos.resize(entry + 1, None);
        }
        infos[entry] = Some(info);
    }

    /// Takes entry `entry`'s task identity (task records on), marking its record ended.
    #[cold]
    #[inline(never)]
    fn take_info(&mut self, entry: usize) -> Option<TaskInfo> {
        let info = self.infos.as_mut()?.get_mut(entry)?.take()?;
        if let Some(record) = info.record() {
            record.ended();
        }
        Some(info)
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
        registry.register(hint, |k| k, |_| (noop(), None)).ok().expect("the registry is open")
    }

    /// The layout `ShardCell`'s docs promise, where std's mutex is a futex word and a flag.
    #[test]
    #[cfg(all(not(loom), target_os = "linux", target_pointer_width = "64"))]
    fn a_shard_cell_fits_one_cache_line() {
        assert!(std::mem::size_of::<ShardCell>() <= 64, "{} bytes", std::mem::size_of::<ShardCell>());
        assert_eq!(std::mem::align_of::<Registry>(), std::mem::align_of::<CachePadded<u8>>());
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
