//! The watcher: rescues the task in a core's LIFO slot when its owner is stuck inside one poll.
//!
//! Invariants:
//! - A core's LIFO slot (in its `Remote`, `shared.rs`) is *private*: taken from by its owner, which never
//!   parks while it holds a task, and by the watcher only. A push into it wakes nobody if a
//!   watcher exists (`Sleepers::notify_private`): that is what keeps a chain of tasks waking
//!   each other on one worker, its cache warm, while the other workers sleep. (Deques, the
//!   injector and deferred lists are shared: any searcher steals from them.)
//! - The watcher is a parked worker that holds the role in `Sleepers` (at most one at a time),
//!   parked with a deadline [`WATCH_INTERVAL`] away. At the deadline it wakes itself (dropping
//!   the role); any other wake drops the role as well. A worker takes the role in its re-scan
//!   before parking (the last searcher to park, with no shared work found) when it sees a task
//!   in another core's LIFO slot, or when an owner is at work: it was woken by a private push
//!   (the *heir*, `Sleepers::list_parked`), or its own last term saw another core begin or end
//!   a poll, or a push woke it before its deadline. So an owner that runs chain after chain of
//!   wakes through its slot wakes a parked worker once, which then watches in terms of one
//!   interval for as long as the owner polls, instead of a wake at every push into an empty
//!   slot. Taking the role is always safe: it only adds a look.
//! - On waking at or after its deadline, the watcher moves into its own deque the task in the
//!   LIFO slot of each core whose progress word (`progress.rs`, the same sign of life the
//!   monitor reads) shows no poll begun or ended since the role began. An owner takes from its
//!   slot at every pick once a task is pushed there, and never parks with it full, so an
//!   unchanged word means the owner picked nothing for the whole interval: it was inside one
//!   poll (blocked, or busy with long work), in a reactor turn, or not scheduled by the OS. The
//!   word is read `Relaxed`, so it may also be stale and the owner live. None of this is proof
//!   of a stuck owner, and none needs to be: the slot hands each task out exactly once
//!   (`sync/slot.rs`), so the task runs exactly once whoever takes it; a wrong guess only moves
//!   it off a warm worker (and costs the watcher a process-wide barrier). A take that finds the
//!   owner inside its own take gets nothing: the owner is not stuck. Then the watcher searches
//!   and parks as any worker does, taking the role again if a LIFO slot still holds a task or
//!   an owner was at work.
//! - So a task in a LIFO slot runs at most about two intervals after its owner got stuck, while
//!   any other worker is idle. A term that sees no other core poll (and no LIFO task) is the
//!   last: once the pool is idle, the watcher wakes at most twice more, and then no worker
//!   wakes until work comes.
//! - Under loom, which has no clock, the deadline has always passed (`sync::Deadline`): the
//!   watcher checks right after taking the role, so the models explore its steals racing the
//!   owner's own takes.

use std::time::Duration;

use crate::identity::Activity;
use crate::scheduler::cores::shared::Runnable;

use crate::scheduler::cores::shared::Shared;
use crate::scheduler::takeover::progress::Watch;
use crate::sync::{Deadline, Worker};

/// How long the watcher lets an owner sit inside one poll, its LIFO slot holding a task, before
/// it takes the task.
pub(in crate::scheduler) const WATCH_INTERVAL: Duration = Duration::from_micros(250);

/// Starts a term of the watcher role now (`Core::watch`).
pub(in crate::scheduler) fn start_term(shared: &Shared) -> Watch {
    Watch {
        deadline: Deadline::after(WATCH_INTERVAL),
        progress: shared.remotes[..shared.active_slots()].iter().map(|remote| remote.progress.load()).collect(),
    }
}

/// After the watcher woke: if the interval is over, moves into `local` the LIFO task of every
/// other core that began no poll since the term began. Returns whether an owner was at work
/// meanwhile (some other core began or ended a poll, or a push woke the watcher early): then
/// the watcher takes the role again when it next parks with nothing to do.
pub(in crate::scheduler) fn rescue(term: Watch, shared: &Shared, me: usize, local: &Worker<Runnable>) -> bool {
    if !term.deadline.has_passed() {
        // Woken early (by a notify): the owners had less than an interval.
        return true;
    }
    let mut at_work = false;
    // A core a takeover handed out during the term is not in `progress`: the next term's.
    for (index, remote) in shared.remotes[..term.progress.len()].iter().enumerate() {
        if index == me || !shared.is_active(index) {
            continue;
        }
        if !remote.progress.load().same_as(term.progress[index]) {
            at_work = true;
            continue;
        }
        if let Some(runnable) = remote.lifo.take() {
            shared.record_queued(&runnable, Activity::Deque(me));
            local.push(runnable);
            shared.counters[me].rescues.incr();
        }
    }
    at_work
}
