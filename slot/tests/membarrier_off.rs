//! `CREW_MEMBARRIER=off` keeps the process in fence mode: set before the first membarrier call
//! (the query included), `prepare` decides fence mode without any, and both halves still pair.
//! A binary of its own with one test: the mode is decided once per process, and the variable
//! is the process's.

use crew_slot::asymmetric;

#[test]
fn crew_membarrier_off_chooses_fence_mode_before_any_membarrier_call() {
    // Nothing in this process decided the mode yet. Each value as `env_setting` reads it:
    for (value, read) in [("on", Ok(true)), ("OFF", Err("OFF".to_owned())), (" off", Err(" off".to_owned()))] {
        std::env::set_var(asymmetric::MEMBARRIER_ENV, value);
        assert_eq!(asymmetric::env_setting(), read, "{value:?}");
    }
    std::env::set_var(asymmetric::MEMBARRIER_ENV, "off");
    assert_eq!(asymmetric::env_setting(), Ok(false));
    asymmetric::prepare();
    assert!(!asymmetric::is_membarrier(), "off: fence mode, whatever the kernel offers");
    asymmetric::light();
    assert!(asymmetric::heavy(), "a fence always orders");
    // Fence mode makes no system call: the test switch that fails barriers cannot reach it.
    asymmetric::fail_next_barriers(1);
    assert!(asymmetric::heavy());
}
