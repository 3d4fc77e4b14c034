//! The worker loop inside `async_io::block_on` (`reactor.rs`, outside loom: async-io does not
//! build under it, and loom's configs never drive the reactor), and when it lets the reactor
//! turn (`reactor_turn.rs`).

#[cfg(not(loom))]
pub(in crate::scheduler) mod reactor;
pub(in crate::scheduler) mod reactor_turn;
