//! What keeps a pool moving when a worker is stuck in one poll: the watcher's rescue of a LIFO
//! task (`watch.rs`), the monitor thread's slow-poll reports and takeovers (`monitor.rs`), the
//! reporter thread and its queue (`reporter.rs`, `reports.rs`), the spare threads a hand-off or
//! takeover leaves (`spare_threads.rs`), and the progress word they all read (`progress.rs`).

pub(in crate::scheduler) mod monitor;
pub(in crate::scheduler) mod progress;
pub(in crate::scheduler) mod reporter;
pub(in crate::scheduler) mod reports;
pub(in crate::scheduler) mod spare_threads;
pub(in crate::scheduler) mod watch;
