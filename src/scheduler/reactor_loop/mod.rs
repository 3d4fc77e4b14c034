//! The worker loop as a future that turns crew's I/O driver (`reactor.rs`, run by
//! `driver::run`; outside loom: mio does not build under it, and loom's configs never turn the
//! driver), and when it lets the driver turn (`reactor_turn.rs`).

#[cfg(not(loom))]
pub(in crate::scheduler) mod reactor;
pub(in crate::scheduler) mod reactor_turn;
