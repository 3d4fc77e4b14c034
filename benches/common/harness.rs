//! The criterion harness: a [`Workload`] (one timed iteration, and optional background load)
//! becomes one criterion group whose members are the executors ([`group`]), and a bench file's
//! [`main`] runs its workloads' groups or, with `CREW_BENCH_MODES=<workload>`, one workload's
//! modes probe (`modes.rs`).

use std::marker::PhantomData;
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;

use super::cache_line::cache_line_round_trip_ns;
use super::executors::{with_executor, workers, Exec, ExecJob, EXECUTORS};
use super::modes::modes;
use super::workload::Workload;

/// Busy-waits (yielding the OS thread) for `dur`, as tokio's benchmark does.
pub fn stall(dur: Duration) {
    let now = Instant::now();
    while now.elapsed() < dur {
        thread::yield_now();
    }
}

/// One member of a group: background load (if any), the timed loop, then teardown.
pub fn member<W: Workload, E: Exec>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    ex: &E,
) {
    let stop = W::background(ex);
    group.bench_function(name, |b| b.iter(|| W::iter(ex)));
    if let Some(stop) = stop {
        stop();
    }
}

/// The criterion member `name` of `W`'s group (see [`member`]), as an [`ExecJob`].
struct Member<'a, 'g, W> {
    group: &'a mut criterion::BenchmarkGroup<'g, criterion::measurement::WallTime>,
    name: &'static str,
    workload: PhantomData<W>,
}

impl<W: Workload> ExecJob for Member<'_, '_, W> {
    type Output = ();

    fn run<E: Exec>(self, ex: &E, _pool: Option<&crew::Pool>) {
        member::<W, E>(self.group, self.name, ex);
    }
}

/// The criterion group of `W`: one member per executor. It prints the machine's cache-line
/// round trip before and after the group ([`cache_line_round_trip_ns`]), so that each run
/// records which of the machine's states its groups were measured in (`BENCHMARKS.md`, "The
/// machine's two states").
pub fn group<W: Workload>(c: &mut Criterion) {
    let workers = workers();
    let before = cache_line_round_trip_ns();
    let mut group = c.benchmark_group(W::NAME);
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for name in EXECUTORS {
        with_executor(name, workers, Member::<W> { group: &mut group, name, workload: PhantomData });
    }
    group.finish();
    let after = cache_line_round_trip_ns();
    println!("{}: the machine's cache-line round trip {before} ns before, {after} ns after\n", W::NAME);
}

/// One workload of a bench file: its name, its criterion group ([`group`]) and its modes probe.
pub struct Bench {
    name: &'static str,
    group: fn(&mut Criterion),
    probe: fn(),
}

/// The [`Bench`] of `W`.
pub fn bench<W: Workload>() -> Bench {
    Bench { name: W::NAME, group: group::<W>, probe: modes::<W> }
}

/// The bench file's `main`: the criterion groups of `workloads`, then the `others` (groups
/// that are no single workload), or, with `CREW_BENCH_MODES=<workload>` (one of `workloads`),
/// the modes probe of that workload (what it looks for and prints: [`modes`](super::modes)).
pub fn main(workloads: &[Bench], others: &[fn(&mut Criterion)]) {
    match std::env::var("CREW_BENCH_MODES") {
        Ok(name) => match workloads.iter().find(|bench| bench.name == name) {
            Some(bench) => (bench.probe)(),
            None => {
                let names: Vec<&str> = workloads.iter().map(|bench| bench.name).collect();
                panic!("CREW_BENCH_MODES={name:?}: expected one of this file's workloads, {names:?}")
            }
        },
        Err(std::env::VarError::NotPresent) => {
            // What `criterion_group!` and `criterion_main!` do, for a list made at run time.
            let mut criterion = Criterion::default().configure_from_args();
            for bench in workloads {
                (bench.group)(&mut criterion);
            }
            for group in others {
                group(&mut criterion);
            }
            criterion.final_summary();
        }
        Err(std::env::VarError::NotUnicode(value)) => {
            panic!("CREW_BENCH_MODES={value:?} is not UTF-8; expected a workload's name")
        }
    }
}
