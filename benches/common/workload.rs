//! [`Workload`]: what a bench measures, as the criterion harness (`harness.rs`) and the modes
//! probe (`modes.rs`) both run it.

use super::executors::Exec;

/// One workload: a timed iteration, run on each executor in turn, and optional background load.
pub trait Workload {
    const NAME: &'static str;

    /// Starts background load before the member is measured; the returned closure stops it.
    fn background<E: Exec>(_ex: &E) -> Option<Box<dyn FnOnce()>> {
        None
    }

    /// One timed iteration.
    fn iter<E: Exec>(ex: &E);
}
