//! A membarrier that fails after the registration (a seccomp filter installed later) never
//! panics: the heavy half says so, and a thief takes nothing (the owner still gets the task).
//! A binary of its own: it decides the process's mode (membarrier, on Linux).

use std::sync::Arc;

use crew_slot::{asymmetric, RunnableSlot};

#[test]
fn a_failed_barrier_makes_a_thief_take_nothing_instead_of_panicking() {
    asymmetric::prepare();
    if !asymmetric::is_membarrier() {
        // Fence mode (not Linux, an old kernel, miri): no barrier to fail.
        assert!(asymmetric::heavy());
        return;
    }
    let slot = Arc::new(RunnableSlot::new());
    let mut owner = slot.claim().unwrap();
    let (runnable, _task) = async_task::spawn(async {}, |_| {});
    assert!(owner.push(runnable).is_none());
    asymmetric::fail_next_barriers(1);
    assert!(slot.take().is_none(), "the barrier failed: the thief took nothing");
    assert!(slot.is_occupied(), "the task stays in the slot");
    asymmetric::fail_next_barriers(1);
    assert!(!asymmetric::heavy(), "a failed barrier says so");
    assert!(asymmetric::heavy(), "and the next one works again");
    assert!(slot.take().is_some(), "a later thief takes it");
    assert!(owner.take().is_none());
}
