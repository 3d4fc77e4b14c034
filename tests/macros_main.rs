//! `#[crew::main]`: with options it configures the global pool before its body runs (a test
//! binary of its own, since the global pool starts once per process).
#![cfg(feature = "macros")]

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[crew::main(workers = 3, thread_name = "main-pool")]
async fn configured() -> (String, usize) {
    let ran_on = crew::spawn(async { thread_name() }).await;
    (ran_on, crew::metrics().workers.len())
}

#[crew::main]
async fn plain() -> u32 {
    crew::spawn(async { 40 }).await + 2
}

#[test]
fn main_with_options_configures_the_global_pool_and_without_them_just_runs() {
    let (ran_on, workers) = configured();
    assert!(ran_on.starts_with("main-pool-"), "ran on {ran_on}");
    assert_eq!(workers, 3);
    assert_eq!(plain(), 42);
    // The global pool started already: configuring it again is refused, with crew's error.
    let again = std::panic::catch_unwind(configured).unwrap_err();
    let message = again.downcast_ref::<String>().expect("a formatted message");
    assert!(message.starts_with("#[crew::main]: the global pool cannot start:"), "{message}");
}
