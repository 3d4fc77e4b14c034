//! A pool with no monitor thread (takeover and slow-poll reports both off), the thread that
//! otherwise registers the process for `membarrier`, still puts the process in membarrier mode
//! (crew-slot's `asymmetric`), on a short-lived thread of its own, without a rescue or a
//! takeover: its owners' LIFO takes then run without a `SeqCst` fence. One test, in a process of
//! its own: the mode is process-wide and one way.

mod common;

use common::wait_until;

#[test]
#[cfg_attr(miri, ignore = "miri has no membarrier: fence mode")]
fn a_pool_without_a_monitor_registers_the_process_for_membarrier() {
    use crew_slot::asymmetric::is_membarrier;
    assert!(!is_membarrier(), "no pool yet: nothing registered the process");
    let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
    // Tasks run while (or before) the registration finishes.
    assert_eq!(crew::block_on(pool.spawn(async { 7 })), 7);
    if cfg!(target_os = "linux") {
        // The kernels crew is tested on offer it (crew-slot's own test asserts so).
        wait_until("the process to register for membarrier", is_membarrier);
    }
    assert_eq!(crew::block_on(pool.spawn(async { 8 })), 8);
}
