//! The reporter: the one thread per pool that calls the slow-poll hook
//! ([`Builder::on_slow_poll`](crate::Builder::on_slow_poll)), fed by a bounded queue.
//!
//! Invariants:
//! - No thread that schedules or runs tasks calls the hook. The monitor (`Slow`, `TakenOver`,
//!   `CapReached`) and a worker whose reported poll ended (`Returned`) only queue a report and
//!   notify; the reporter thread calls the hook. A hook that is slow, blocks or never returns
//!   delays only the reports queued after it: never a takeover, a worker, or a task.
//! - Bounded: at most `QUEUE_CAPACITY` reports wait (`reports.rs`). A report made while the queue is full is
//!   dropped and counted (`Metrics::slow_poll_reports_dropped`): queuing never blocks.
//! - In order per poll: a poll's `Returned` report is queued after its `Slow` and `TakenOver`
//!   reports, because each is queued under the poll's `Remote::current` lock together with the
//!   progress-word flag that makes the owner report the poll's end (`monitor.rs`).
//! - The hook runs with the pool as the thread's current pool: `crew::spawn` in a hook spawns
//!   onto the pool whose report it is (the global pool's hook, onto the global pool), as it does
//!   on the pool's workers.
//! - Once the pool's shutdown began, nothing more is delivered: the reporter checks before each
//!   call, so it exits as soon as the hook call under way (if any) returns, and the reports
//!   still queued are dropped. The pool does not wait for it: a hook that never returns cannot
//!   hang a pool's drop.

use std::io;

use crate::scheduler::cores::shared::Shared;
use crate::sync::{fence, thread, Arc, Listener, Ordering};

/// Starts `shared`'s reporter thread (the pool has a hook). It is not joined (see the module
/// docs).
pub(in crate::scheduler) fn start(shared: &Arc<Shared>) -> io::Result<()> {
    let for_thread = shared.clone();
    thread::Builder::new().name("crew-reporter".to_owned()).spawn(move || run(for_thread))?;
    Ok(())
}

/// The reporter thread's body.
fn run(shared: Arc<Shared>) {
    let (Some(reports), Some(hook)) = (shared.reports.as_ref(), shared.config.on_slow_poll.as_ref()) else {
        return;
    };
    // `crew::spawn` in the hook targets this pool (see the module docs).
    let _entered = crate::scheduler::cores::context::enter_pool(&shared);
    // The `tokio` feature: hooks run inside the pool's tokio context, as its tasks do.
    #[cfg(feature = "tokio")]
    let tokio = shared.config.tokio_handle.clone().unwrap_or_else(crate::tokio_context::own);
    #[cfg(feature = "tokio")]
    let _tokio = tokio.enter();
    loop {
        // The shutdown is looked at before each call: nothing is delivered after it began.
        while !shared.is_shutdown() {
            let Some(report) = reports.pop() else { break };
            hook.call(&report);
        }
        if shared.is_shutdown() {
            return;
        }
        let listener = reports.queued.listen();
        // Pairs with `notify`'s own fence: a report queued (or a shutdown begun) after the
        // checks below notifies this listener.
        fence(Ordering::SeqCst);
        if !reports.is_empty() || shared.is_shutdown() {
            continue;
        }
        listener.wait();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_documented_capacity_is_the_queues() {
        // `Builder::on_slow_poll` and `Metrics::slow_poll_reports_dropped` say 1,024.
        assert_eq!(crate::scheduler::takeover::reports::QUEUE_CAPACITY, 1024);
    }
}
