//! The registry of a private pool's live tasks, so that dropping the pool can drop them all.
//!
//! Invariants:
//! - Every task spawned on a private pool holds one entry (its waker) from the moment it is
//!   spawned until its future is dropped — after completing, on cancellation, or at shutdown —
//!   whichever comes first; the task's future removes the entry in its `Drop`.
//! - A removal is counted at once (the count of live tasks is exact as soon as the future is
//!   dropped), but the entry is vacated in a batch: a shard's ended entries are listed on the
//!   shard's ending side, and the removal that fills the list to [`ENDED_BATCH`] vacates them
//!   all under the shard's lock at once. Until then an ended task's waker keeps its allocation
//!   (not its future, already dropped): at most `ENDED_BATCH - 1` tasks per shard. With task
//!   records on (the task dump) every removal vacates at once, so the dump lists no ended task.
//! - [`Registry::close`] marks every shard closed, vacates the ended entries, and returns every
//!   other registered waker, under the shard locks, exactly once. After that, `register` refuses
//!   (the caller drops the new task) and a removal touches no entry. Waking the returned wakers
//!   after the pool stopped makes each task be scheduled into a closed pool, which drops its
//!   future.
//! - **The futures a closed registry still waits for** ([`Registry::wait_for_futures`]): each
//!   shard's close adds the pool's futures still alive in it to one count, under its ending
//!   side's lock, and every removal after that shard's close takes one off, under the same lock:
//!   so the count never goes below zero, and reads zero once every shard has closed and every
//!   future that was alive then has been dropped, wherever that happens (a drain, a reaper
//!   thread). A local task's entry (a thread's `!Send` task, listed only for the dump) is not a
//!   future of the pool's: it is not counted (`register_local`, [`LocalRegistration`]), and the
//!   shard keeps how many of its entries are local to leave them out at the close.
//! - Locks nest in one order only: a shard's ending side, then its spawning side. No user code
//!   runs while either is held: spawning (the allocation and moving the future in) and cloning
//!   a waker run no user code, and wakers are dropped and woken after unlocking.
//! - Each shard keeps its two sides on cache lines of their own: the spawning thread registers
//!   on one and the workers that end its tasks list them on the other, so the two meet once per
//!   batch, not at every spawn and end. A spawning thread fills one shard with a run of
//!   [`SPAWN_RUN`] spawns before it moves to the next (`context::shard_hint`), so the tasks that
//!   end one after another on a worker are mostly listed on one shard's line; and there are many
//!   shards (32 per worker, up to 64), so threads spawning or ending at once rarely share one.
//!   The global pool has a registry only with the task dump on: it is never dropped.
//! - The count of live tasks is two monotonic counts per shard, registrations (written under the
//!   spawning side's lock) and removals (under the ending side's), which the metrics read
//!   without locking ([`Registry::live`]), removals first. The loads are relaxed, so while
//!   tasks come and go a snapshot may be a little off either way (never below zero); it is
//!   exact once the tasks it counts have ended and been joined. `close` evens the counts out.
//! - A task's entry holds its shard through an `Arc` (a registration's reference), whose count
//!   is on a line of its own, apart from both sides.

use std::task::Waker;

use crate::identity::{OnTaskEnd, TaskInfo};
use crate::sync::{
    fence, lock, wait_until, Arc, AtomicUsize, CachePadded, Deadline, Event, Listener, Mutex, Ordering,
    SingleWriterCounter,
};

/// The most shards a registry has.
const MAX_SHARDS: usize = 64;

/// Ended entries a shard lists before it vacates them together (see the module docs). Vacating
/// frees the tasks whose last reference was their entry's waker, blocks of one size at once:
/// glibc's per-thread cache keeps 7 blocks of a size, and the rest of a larger batch goes
/// through the arena's bins. With 32, `busy_chains` (chains of tasks each spawning the next,
/// beside yielding tasks) took 0.82 of tokio's time, with 7 0.73 (modes probe, the median of six
/// processes' medians; `docs/performance-notes.md`, "Remote spawn").
pub(in crate::scheduler) const ENDED_BATCH: usize = 7;

/// Spawns a thread registers on one shard before it moves to the next: as many as a batch of
/// ended entries, so that a run of tasks ending on one worker fills one shard's list.
pub(in crate::scheduler) const SPAWN_RUN: usize = ENDED_BATCH;

/// A task's entry in its pool's registry, which is also its count of live tasks: removed when
/// the task ends.
#[derive(Debug)]
pub(crate) struct Registration {
    shard: Arc<ShardPair>,
    entry: usize,
}

impl OnTaskEnd for Registration {
    fn task_ended(&mut self) {
        self.shard.remove(self.entry, Owner::Pool);
    }
}

/// A local task's entry (see `register_local`): listed for the dump, never waited for.
#[derive(Debug)]
pub(crate) struct LocalRegistration(Registration);

impl OnTaskEnd for LocalRegistration {
    fn task_ended(&mut self) {
        self.0.shard.remove(self.0.entry, Owner::Local);
    }
}

/// Whose future an entry's task is: the pool's (waited for once the registry closed), or a
/// thread's local task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Pool,
    Local,
}

/// The pool's futures still alive since the registry closed (see the module docs), shared by
/// every shard.
#[derive(Debug, Default)]
struct Unended {
    count: AtomicUsize,
    /// Notified when a removal brings `count` to zero.
    zero: Event,
}

/// Entries each shard has room for when the pool starts (16 bytes each): with many shards, a
/// pool's first spawns would otherwise each grow an empty shard, one allocation per shard
/// (`tests/alloc.rs` counts a task's allocations).
const ENTRIES_PER_SHARD: usize = 8;

#[derive(Debug)]
pub(crate) struct Registry {
    /// Read at every spawn (never written after the registry is made): each shard's `Arc`
    /// count, written by every registration made and dropped, is in the shard's allocation.
    shards: Box<[Arc<ShardPair>]>,
    /// Also in every shard: what `wait_for_futures` reads.
    unended: Arc<Unended>,
}

/// A shard: its spawning side and its ending side, each on cache lines of its own (see the
/// module docs).
#[derive(Debug)]
struct ShardPair {
    spawning: CachePadded<Spawning>,
    ending: CachePadded<Ending>,
    /// Entries listed before they are vacated: [`ENDED_BATCH`], or 1 with task records on.
    batch: usize,
    /// The registry's count of futures alive since it closed.
    unended: Arc<Unended>,
}

/// Where spawns register.
#[derive(Debug)]
struct Spawning {
    shard: Mutex<Shard>,
    /// Registrations ever made, written under `shard`'s lock.
    registered: SingleWriterCounter,
}

/// Where ended tasks are listed until their entries are vacated in a batch.
#[derive(Debug)]
struct Ending {
    ended: Mutex<Ended>,
    /// Removals ever counted, written under `ended`'s lock.
    removed: SingleWriterCounter,
}

/// The entries of tasks that ended, not yet vacated.
#[derive(Debug)]
struct Ended {
    entries: [usize; ENDED_BATCH],
    len: usize,
    closed: bool,
    /// Local tasks' removals ever made, wrapping (see `Shard::locals`).
    locals_removed: u32,
}

#[derive(Debug)]
struct Shard {
    entries: Vec<Entry>,
    /// Head of the free list of vacant entries (`usize::MAX` if none).
    free: usize,
    /// With task records on (the task dump): each occupied entry's task identity, by entry
    /// index; `None` otherwise, so that an entry stays two words. Boxed: one word here instead
    /// of a vector's three keeps the spawning side on one line (a unit test checks it).
    #[allow(clippy::box_collection)]
    infos: Option<Box<Vec<Option<TaskInfo>>>>,
    closed: bool,
    /// Local tasks' registrations ever made, wrapping: with `Ended::locals_removed`, how many
    /// of the entries are local ones (fewer than 2^32 at once), which the close leaves out of
    /// the futures it waits for. 32 bits keep the spawning side on one line.
    locals: u32,
}

#[derive(Debug)]
enum Entry {
    Vacant {
        next_free: usize,
    },
    /// A live task's waker (or, listed on the ending side, an ended one's).
    Occupied(Waker),
}

impl Registry {
    /// A registry with enough shards for `workers` threads spawning and removing at once;
    /// `records`: the pool keeps task records (every removal then vacates at once).
    pub(crate) fn new(workers: usize, records: bool) -> Registry {
        // Under loom, 4 per worker: `close` locks every shard, and each lock is a step the
        // models explore.
        let per_worker = crate::sync::shrunk_under_loom(32, 4);
        let shards = (workers * per_worker).next_power_of_two().min(MAX_SHARDS);
        let batch = if records { 1 } else { crate::sync::shrunk_under_loom(ENDED_BATCH, 2) };
        let unended = Arc::new(Unended::default());
        let pair = || {
            Arc::new(ShardPair {
                spawning: CachePadded::new(Spawning {
                    shard: Mutex::new(Shard::with_capacity(ENTRIES_PER_SHARD)),
                    registered: SingleWriterCounter::default(),
                }),
                ending: CachePadded::new(Ending {
                    ended: Mutex::new(Ended { entries: [0; ENDED_BATCH], len: 0, closed: false, locals_removed: 0 }),
                    removed: SingleWriterCounter::default(),
                }),
                batch,
                unended: unended.clone(),
            })
        };
        Registry { shards: (0..shards).map(|_| pair()).collect(), unended }
    }

    /// Registers a task created by `spawn(registration)`, keeping the waker that `waker_of`
    /// returns. Once the registry is closed, gives `spawn` back uncalled, to be dropped by the
    /// caller outside the lock.
    pub(crate) fn register<S, R>(
        &self,
        hint: usize,
        spawn: S,
        waker_of: impl FnOnce(&R) -> (Waker, Option<TaskInfo>),
    ) -> Result<R, S>
    where
        S: FnOnce(Registration) -> R,
    {
        self.register_as(Owner::Pool, hint, spawn, |registration| registration, waker_of)
    }

    /// [`register`](Registry::register) for a local task of a thread: listed (for the dump),
    /// never waited for once the registry is closed (see the module docs).
    pub(crate) fn register_local<S, R>(
        &self,
        hint: usize,
        spawn: S,
        waker_of: impl FnOnce(&R) -> (Waker, Option<TaskInfo>),
    ) -> Result<R, S>
    where
        S: FnOnce(LocalRegistration) -> R,
    {
        self.register_as(Owner::Local, hint, spawn, LocalRegistration, waker_of)
    }

    fn register_as<S, R, G>(
        &self,
        owner: Owner,
        hint: usize,
        spawn: S,
        wrap: impl FnOnce(Registration) -> G,
        waker_of: impl FnOnce(&R) -> (Waker, Option<TaskInfo>),
    ) -> Result<R, S>
    where
        S: FnOnce(G) -> R,
    {
        let pair = &self.shards[hint & (self.shards.len() - 1)];
        let mut shard = lock(&pair.spawning.shard);
        if shard.closed {
            return Err(spawn);
        }
        if owner == Owner::Local {
            shard.locals = shard.locals.wrapping_add(1);
        }
        let entry = shard.vacant_entry();
        let spawned = spawn(wrap(Registration { shard: pair.clone(), entry }));
        let (waker, info) = waker_of(&spawned);
        shard.occupy(entry, waker);
        if let Some(info) = info {
            shard.keep_info(entry, info);
        }
        // Written under the shard's lock: one writer at a time.
        pair.spawning.registered.incr();
        Ok(spawned)
    }

    /// The identities of the registered tasks that have a record (see `Pool::dump`). Each shard
    /// is locked only while its entries' identities are cloned (a reference count each): no
    /// user code runs, and spawns on other shards go on meanwhile.
    pub(crate) fn recorded(&self) -> Vec<TaskInfo> {
        let mut infos = Vec::new();
        for pair in self.shards.iter() {
            let shard = lock(&pair.spawning.shard);
            infos.extend(shard.infos.iter().flat_map(|infos| infos.iter()).flatten().cloned());
        }
        infos
    }

    /// Closes every shard and returns the wakers of every still-registered task.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for pair in self.shards.iter() {
            let ended = {
                let mut listed = lock(&pair.ending.ended);
                let mut shard = lock(&pair.spawning.shard);
                listed.closed = true;
                let ended = listed.drain_into(&mut shard);
                shard.closed = true;
                shard.free = usize::MAX;
                let before = wakers.len();
                wakers.extend(shard.entries.drain(..).filter_map(|entry| match entry {
                    Entry::Occupied(waker) => Some(waker),
                    Entry::Vacant { .. } => None,
                }));
                // Every live local task's entry is among these (its removal would have counted).
                let locals = shard.locals.wrapping_sub(listed.locals_removed) as usize;
                // SeqCst: pairs with the loads in `wait_for_futures`; under the ending side's
                // lock, before any removal this shard counts after its close.
                self.unended.count.fetch_add(wakers.len() - before - locals, Ordering::SeqCst);
                shard.infos = None;
                // Under both locks: the counts even out, and nothing counts after this.
                pair.spawning.registered.set(pair.ending.removed.get());
                ended
            };
            // Dropped outside the locks: dropping a waker can drop its task.
            drop(ended);
        }
        wakers
    }

    /// The number of registered tasks, counted under the shards' locks.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|pair| {
                let listed = lock(&pair.ending.ended).len;
                let shard = lock(&pair.spawning.shard);
                shard.entries.iter().filter(|s| matches!(s, Entry::Occupied(..))).count() - listed
            })
            .sum()
    }

    /// True once [`close`](Registry::close) has begun (its first shard closed).
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.shards[0].spawning.shard).closed
    }

    /// Waits until every future of the pool's that was alive when [`close`](Registry::close)
    /// returned has been dropped, and at most `allowed` are left (the futures the waiting
    /// thread is itself inside of, which it cannot wait for): true, or false once `deadline`
    /// passed first. Call it after `close`.
    pub(crate) fn wait_for_futures(&self, allowed: usize, deadline: Option<&Deadline>) -> bool {
        debug_assert!(allowed <= 1, "a removal notifies only once the count is at most 1");
        // SeqCst: pairs with the close's increments and the removals' decrements.
        let done = || self.unended.count.load(Ordering::SeqCst) <= allowed;
        loop {
            if done() {
                return true;
            }
            let listener = self.unended.zero.listen();
            // Pairs with `notify`'s fence: the listener is registered before the re-check.
            fence(Ordering::SeqCst);
            if done() {
                return true;
            }
            match deadline {
                None => listener.wait(),
                Some(deadline) => {
                    if !wait_until(listener, deadline) && deadline.has_passed() {
                        return done();
                    }
                }
            }
        }
    }

    /// The number of registered tasks (0 once closed), without taking a lock: each shard's
    /// counts as last written, so a little behind while tasks come and go.
    pub(crate) fn live(&self) -> u64 {
        // Removals first (see the module docs for what a snapshot promises).
        let removed: u64 = self.shards.iter().map(|pair| pair.ending.removed.get()).sum();
        let registered: u64 = self.shards.iter().map(|pair| pair.spawning.registered.get()).sum();
        registered.saturating_sub(removed)
    }
}

impl ShardPair {
    /// Removes a task's entry (no-op once the registry is closed), marking its record ended:
    /// counted now, vacated with its batch.
    fn remove(&self, entry: usize, owner: Owner) {
        let mut listed = lock(&self.ending.ended);
        if owner == Owner::Local {
            listed.locals_removed = listed.locals_removed.wrapping_add(1);
        }
        if listed.closed {
            // SeqCst: pairs with the waiter's loads. A count left at 1 or 0 may be what the waiter
            // waits for (it allows the one future it may be inside of); notified outside the lock.
            if owner == Owner::Pool && self.unended.count.fetch_sub(1, Ordering::SeqCst) <= 2 {
                drop(listed);
                self.unended.zero.notify(usize::MAX);
            }
            return;
        }
        // Written under the ending side's lock: one writer at a time.
        self.ending.removed.incr();
        let len = listed.len;
        listed.entries[len] = entry;
        listed.len = len + 1;
        if listed.len < self.batch {
            return;
        }
        let vacated = {
            let mut shard = lock(&self.spawning.shard);
            listed.drain_into(&mut shard)
        };
        drop(listed);
        // Dropped outside the locks: dropping a waker can drop its task.
        drop(vacated);
    }
}

impl Ended {
    /// Vacates every listed entry in `shard` (its lock held), returning what they held: the
    /// ended tasks' wakers, and their identities with task records on, to be dropped after
    /// unlocking.
    fn drain_into(&mut self, shard: &mut Shard) -> Vacated {
        let mut vacated = Vacated { wakers: [const { None }; ENDED_BATCH], infos: [const { None }; ENDED_BATCH] };
        for (index, &entry) in self.entries[..self.len].iter().enumerate() {
            vacated.wakers[index] = shard.vacate(entry);
            if shard.infos.is_some() {
                vacated.infos[index] = shard.take_info(entry);
            }
        }
        self.len = 0;
        vacated
    }
}

/// What vacated entries held, dropped by the caller once it holds no lock.
struct Vacated {
    wakers: [Option<Waker>; ENDED_BATCH],
    /// Their identities, with task records on.
    infos: [Option<TaskInfo>; ENDED_BATCH],
}

impl Shard {
    /// An empty shard with room for `entries` entries before its first growth.
    fn with_capacity(entries: usize) -> Shard {
        Shard { entries: Vec::with_capacity(entries), free: usize::MAX, infos: None, closed: false, locals: 0 }
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
    use std::task::Wake;

    use super::*;

    /// A waker whose clones this test counts (its `Arc`'s strong count, less the test's own).
    struct Counted;

    impl Wake for Counted {
        fn wake(self: std::sync::Arc<Self>) {}
    }

    fn counted() -> (std::sync::Arc<Counted>, Waker) {
        let counted = std::sync::Arc::new(Counted);
        (counted.clone(), Waker::from(counted))
    }

    fn register(registry: &Registry, hint: usize, waker: Waker) -> Registration {
        registry.register(hint, |registration| registration, |_| (waker, None)).ok().expect("the registry is open")
    }

    fn noop(registry: &Registry, hint: usize) -> Registration {
        register(registry, hint, futures::task::noop_waker())
    }

    /// The layout the module docs promise, where std's mutex is a futex word and a flag.
    #[test]
    #[cfg(all(not(loom), target_os = "linux", target_pointer_width = "64"))]
    fn the_spawning_side_fits_one_cache_line_and_the_arc_counts_sit_apart() {
        assert!(std::mem::size_of::<Spawning>() <= 64, "{} bytes", std::mem::size_of::<Spawning>());
        // The `Arc`'s counts come before the shard, which is aligned to a line pair of its own.
        assert_eq!(std::mem::align_of::<ShardPair>(), std::mem::align_of::<CachePadded<u8>>());
    }

    #[test]
    fn with_records_each_removal_vacates_its_entry_at_once() {
        let registry = Registry::new(2, true);
        let mut a = noop(&registry, 1);
        let b = noop(&registry, 1);
        assert!(Arc::ptr_eq(&a.shard, &b.shard));
        assert_ne!(a.entry, b.entry);
        assert_eq!((registry.len(), registry.live()), (2, 2));
        a.task_ended();
        assert_eq!((registry.len(), registry.live()), (1, 1));
        let c = noop(&registry, 1);
        assert_eq!(c.entry, a.entry, "the vacated entry is reused");
        assert_eq!((registry.len(), registry.live()), (2, 2));
    }

    #[test]
    fn removals_count_at_once_and_vacate_a_batch_together() {
        let registry = Registry::new(1, false);
        let batch = registry.shards[0].batch;
        let (counted, waker) = counted();
        let mut tasks: Vec<Registration> = (0..batch).map(|_| register(&registry, 0, waker.clone())).collect();
        assert_eq!(std::sync::Arc::strong_count(&counted), batch + 2);
        for (ended, task) in tasks.iter_mut().enumerate().take(batch - 1) {
            task.task_ended();
            assert_eq!(registry.live(), (batch - ended - 1) as u64, "a removal counts at once");
        }
        assert_eq!(registry.len(), 1);
        // Listed, not yet vacated: their wakers are kept, and their entries are not reused.
        assert_eq!(std::sync::Arc::strong_count(&counted), batch + 2);
        let fresh = noop(&registry, 0);
        assert!(tasks.iter().all(|task| task.entry != fresh.entry));
        // The batch's last removal vacates them all.
        tasks[batch - 1].task_ended();
        assert_eq!((registry.len(), registry.live()), (1, 1));
        assert_eq!(std::sync::Arc::strong_count(&counted), 2);
        let reused = noop(&registry, 0);
        assert!(tasks.iter().any(|task| task.entry == reused.entry), "a vacated entry is reused");
    }

    #[test]
    fn close_returns_each_live_waker_once_and_refuses_new_tasks() {
        let registry = Registry::new(1, false);
        let (counted, waker) = counted();
        let mut tasks: Vec<Registration> = (0..10).map(|i| register(&registry, i, waker.clone())).collect();
        tasks[3].task_ended();
        assert_eq!(registry.live(), 9);
        let wakers = registry.close();
        assert_eq!(wakers.len(), 9, "the ended task's waker is dropped, not returned");
        drop(wakers);
        assert_eq!(std::sync::Arc::strong_count(&counted), 2);
        assert_eq!(registry.live(), 0);
        assert!(registry.close().is_empty());
        assert!(registry.register(0, |registration| registration, |_| (waker.clone(), None)).is_err());
        tasks[4].task_ended(); // no-op after close
        assert_eq!(registry.live(), 0);
    }

    #[test]
    fn a_closed_registry_waits_for_the_pools_futures_alive_then_and_not_for_local_ones() {
        let registry = Registry::new(1, true);
        let mut tasks: Vec<Registration> = (0..3).map(|i| noop(&registry, i)).collect();
        let mut local = registry
            .register_local(0, |registration| registration, |_| (futures::task::noop_waker(), None))
            .ok()
            .expect("the registry is open");
        tasks[0].task_ended(); // ended before the close: not waited for
        drop(registry.close());
        let now = || Deadline::after(std::time::Duration::ZERO);
        assert!(!registry.wait_for_futures(0, Some(&now())), "two of the pool's futures are alive");
        tasks[1].task_ended();
        assert!(registry.wait_for_futures(1, None), "one alive, which the waiter may be inside of");
        assert!(!registry.wait_for_futures(0, Some(&now())));
        local.task_ended();
        assert!(!registry.wait_for_futures(0, Some(&now())), "a local task's end counts nothing");
        // The last one ends on another thread while this one waits.
        let last = tasks.pop().expect("three tasks");
        let ender = std::thread::spawn(move || {
            let mut last = last;
            last.task_ended();
        });
        assert!(registry.wait_for_futures(0, None));
        ender.join().unwrap();
    }
}
