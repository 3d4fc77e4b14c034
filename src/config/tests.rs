//! The `Builder`'s checks: every bad value named, the `CREW_` variables' precedence.

use super::*;

fn with_workers(value: &str) -> Env {
    Env { workers: Some(Ok(value.to_owned())), ..Env::none() }
}

#[test]
fn builder_rejects_bad_settings_by_name() {
    let msg = Builder::new().workers(0).check(Env::none()).unwrap_err().to_string();
    assert_eq!(msg, "Builder::workers(0) is invalid: expected a number of worker threads in 1..=1024");
    let msg = Builder::new().workers(1).stack_size(10).check(Env::none()).unwrap_err().to_string();
    assert_eq!(msg, "Builder::stack_size(10) is invalid: expected a size in bytes in 65536..=1073741824");
    for bad in ["a\0b", "a\nb", "a\rb", "\u{1b}[31m", "a\u{2028}b", "a\u{202e}b", "a\\b"] {
        let msg = Builder::new().workers(1).thread_name(bad).check(Env::none()).unwrap_err().to_string();
        assert_eq!(msg, format!("Builder::thread_name({bad:?}) is invalid: {THREAD_NAME_EXPECTED}"));
        assert!(!msg.chars().any(char::is_control), "{msg}");
    }
    let config = Builder::new().workers(1).thread_name("db pool #2 (café)").check(Env::none()).unwrap();
    assert_eq!(config.thread_name, "db pool #2 (café)");
    let msg = Builder::new().workers(1).takeover_after(Duration::ZERO).check(Env::none()).unwrap_err().to_string();
    assert_eq!(msg, "Builder::takeover_after(0ns) is invalid: expected a duration in 1ms..=3600s");
    let msg = Builder::new().slow_poll_threshold(Duration::from_secs(3601)).check(Env::none()).unwrap_err();
    assert!(msg.to_string().starts_with("Builder::slow_poll_threshold(3601s) is invalid"), "{msg}");
    let msg = Builder::new().max_stuck_threads(5000).check(Env::none()).unwrap_err().to_string();
    assert_eq!(msg, "Builder::max_stuck_threads(5000) is invalid: expected a number of threads in 0..=1024");
}

#[test]
fn a_pool_with_more_workers_than_cpus_parks_without_spinning_unless_told() {
    let cpus = |n| std::num::NonZeroUsize::new(n);
    assert_eq!(default_spin_before_park(2, cpus(2)), DEFAULT_SPIN_BEFORE_PARK);
    assert_eq!(default_spin_before_park(3, cpus(2)), Duration::ZERO);
    assert_eq!(default_spin_before_park(64, None), DEFAULT_SPIN_BEFORE_PARK, "unknown: as if enough");
    if cfg!(miri) {
        return; // no spin by default under miri
    }
    let available = num_cpus::get();
    let config = Builder::new().workers(available).check(Env::none()).unwrap();
    assert_eq!(config.spin_before_park, DEFAULT_SPIN_BEFORE_PARK);
    let config = Builder::new().workers(available + 1).check(Env::none()).unwrap();
    assert_eq!(config.spin_before_park, Duration::ZERO);
    let spin = Duration::from_micros(5);
    let config = Builder::new().workers(available + 1).spin_before_park(spin).check(Env::none()).unwrap();
    assert_eq!(config.spin_before_park, spin, "a spin set on the builder is kept");
    assert!(config.spin_despite_io, "and applies while the driver has sources");
    let config = Builder::new().workers(available).check(Env::none()).unwrap();
    assert!(!config.spin_despite_io, "a default spin is skipped while the driver has sources");
}

#[test]
fn the_messages_ranges_are_the_constants() {
    assert_eq!(STACK_EXPECTED, format!("expected a size in bytes in {MIN_STACK_SIZE}..={MAX_STACK_SIZE}"));
    assert_eq!(WORKERS_EXPECTED, format!("expected a number of worker threads in 1..={MAX_WORKERS}"));
    assert_eq!(THRESHOLD_EXPECTED, format!("expected a duration in {MIN_TAKEOVER_AFTER:?}..={MAX_TAKEOVER_AFTER:?}"));
    assert_eq!(STUCK_EXPECTED, format!("expected a number of threads in 0..={MAX_STUCK_THREADS}"));
}

#[test]
fn explicit_settings_win_over_the_environment() {
    let config = Builder::new().workers(3).check(with_workers("abc")).unwrap();
    assert_eq!(config.workers, 3);
    let config = Builder::new().check(with_workers("5")).unwrap();
    assert_eq!(config.workers, 5);
    let err = Builder::new().check(with_workers("0")).unwrap_err();
    assert!(err.to_string().starts_with("CREW_WORKERS=\"0\""));
    let env = || Env { takeover: Some(Ok("off".into())), max_stuck_threads: Some(Ok("7".into())), ..Env::none() };
    let config = Builder::new().workers(2).check(env()).unwrap();
    assert_eq!((config.takeover_after, config.max_stuck_threads), (None, 0), "no takeover: no spare core");
    let env = || Env { takeover: Some(Ok("20".into())), max_stuck_threads: Some(Ok("7".into())), ..Env::none() };
    let config = Builder::new().workers(2).check(env()).unwrap();
    assert_eq!((config.takeover_after, config.max_stuck_threads), (Some(Duration::from_millis(20)), 7));
    let config = Builder::new().workers(2).takeover(true).max_stuck_threads(1).check(env()).unwrap();
    assert_eq!((config.takeover_after, config.max_stuck_threads), (Some(Duration::from_millis(20)), 1));
}

/// Every combination of the takeover's two Builder settings with `CREW_TAKEOVER_MS`: the
/// variable fills what the Builder left unset, and is an error when bad and applied.
#[test]
fn takeover_ms_applies_to_what_the_builder_left_unset() {
    type Make = fn() -> Builder;
    let ms = Duration::from_millis;
    let builders: [(&str, Make); 5] = [
        ("unset", Builder::new),
        ("takeover(true)", || Builder::new().takeover(true)),
        ("takeover(false)", || Builder::new().takeover(false)),
        ("takeover_after(30ms)", || Builder::new().takeover_after(Duration::from_millis(30))),
        ("takeover(true).takeover_after(30ms)", || {
            Builder::new().takeover(true).takeover_after(Duration::from_millis(30))
        }),
    ];
    // (variable, then the outcome for each builder above in order: Ok(threshold) or Err).
    let unset_default = (!cfg!(miri)).then_some(DEFAULT_TAKEOVER_AFTER);
    type Outcome = Result<Option<Duration>, ()>;
    let table: [(Option<&str>, [Outcome; 5]); 4] = [
        (None, [Ok(unset_default), Ok(Some(DEFAULT_TAKEOVER_AFTER)), Ok(None), Ok(Some(ms(30))), Ok(Some(ms(30)))]),
        (Some("500"), [Ok(Some(ms(500))), Ok(Some(ms(500))), Ok(None), Ok(Some(ms(30))), Ok(Some(ms(30)))]),
        (Some("off"), [Ok(None), Ok(Some(DEFAULT_TAKEOVER_AFTER)), Ok(None), Ok(Some(ms(30))), Ok(Some(ms(30)))]),
        (Some("abc"), [Err(()), Err(()), Ok(None), Ok(Some(ms(30))), Ok(Some(ms(30)))]),
    ];
    for (var, outcomes) in table {
        for ((name, builder), expected) in builders.iter().zip(outcomes) {
            let env = Env { takeover: var.map(|v| Ok(v.to_owned())), ..Env::none() };
            let got = builder().workers(2).check(env);
            match (got, expected) {
                (Ok(config), Ok(threshold)) => {
                    assert_eq!(config.takeover_after, threshold, "{name} with CREW_TAKEOVER_MS={var:?}")
                }
                (Err(err), Err(())) => {
                    assert_eq!(
                        err.to_string(),
                        "CREW_TAKEOVER_MS=\"abc\" is invalid: expected a whole number of milliseconds in \
                         1..=3600000 (decimal digits only), or `off`",
                    )
                }
                (got, expected) => panic!("{name} with CREW_TAKEOVER_MS={var:?}: {got:?}, expected {expected:?}"),
            }
        }
    }
}

/// The other variables: each applies where its setting is unset (a bad value is then an
/// error), and is not read where the Builder set it.
#[test]
fn every_variable_is_an_error_when_bad_and_applied_and_ignored_when_overridden() {
    let bad = |env: Env, builder: Builder| builder.workers(2).check(env).map(|_| ()).map_err(|e| e.to_string());
    let stuck = || Env { max_stuck_threads: Some(Ok("x".into())), ..Env::none() };
    assert!(bad(stuck(), Builder::new().takeover(true)).unwrap_err().starts_with("CREW_MAX_STUCK_THREADS=\"x\""));
    assert!(bad(stuck(), Builder::new().takeover(true).max_stuck_threads(3)).is_ok());
    let dump = || Env { task_dump: Some(Ok("yes".into())), ..Env::none() };
    assert!(bad(dump(), Builder::new()).unwrap_err().starts_with("CREW_TASK_DUMP=\"yes\""));
    assert!(bad(dump(), Builder::new().task_dump(false)).is_ok());
    let workers = Env { workers: Some(Ok("0".into())), ..Env::none() };
    assert!(Builder::new().check(workers).unwrap_err().to_string().starts_with("CREW_WORKERS=\"0\""));
}

#[test]
fn takeover_defaults_on_with_at_least_16_stuck_threads() {
    let config = Builder::new().workers(3).takeover(true).check(Env::none()).unwrap();
    assert_eq!((config.takeover_after, config.max_stuck_threads), (Some(DEFAULT_TAKEOVER_AFTER), 16));
    let config = Builder::new().workers(40).takeover(true).check(Env::none()).unwrap();
    assert_eq!(config.max_stuck_threads, 40);
    // Unset, it is on, except under miri (see `check`).
    let config = Builder::new().workers(3).check(Env::none()).unwrap();
    assert_eq!(config.takeover_after.is_some(), !cfg!(miri));
    let config = Builder::new().workers(3).max_stuck_threads(0).check(Env::none()).unwrap();
    assert_eq!(config.takeover_after, None, "no spare thread: no takeover");
}
