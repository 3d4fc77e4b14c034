//! The modes probe (`CREW_BENCH_MODES=<workload>`, see [`main`](super::main)): it looks for a
//! workload's *modes*, spells in which it runs far slower than usual, on one executor or on all
//! of them. For [`MODE_ROUNDS`] rounds it runs the workload on each executor in turn, each
//! round starting with the next one ([`MODE_ITERS`] timed iterations after [`MODE_WARM_UP`]),
//! and prints the median of each, with the machine's [`cache_line_round_trip_ns`] measured
//! before and after the round (a slow round whose round trips are slow too is the machine's,
//! not an executor's), and what crew's workers did per iteration (from its metrics).

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::cache_line::cache_line_round_trip_ns;
use super::executors::{with_executor, workers, Exec, ExecJob, EXECUTORS};
use super::workload::Workload;

/// Rounds of the `CREW_BENCH_MODES` probe, and timed and warm-up iterations per executor and round.
const MODE_ROUNDS: usize = 20;
const MODE_ITERS: usize = 100;
const MODE_WARM_UP: usize = 10;

/// The median time of [`MODE_ITERS`] iterations of `W` (see the module docs), as an
/// [`ExecJob`]; for crew, with what its workers did per iteration.
struct Median<W>(PhantomData<W>);

impl<W: Workload> ExecJob for Median<W> {
    type Output = (Duration, Option<String>);

    fn run<E: Exec>(self, ex: &E, pool: Option<&crew::Pool>) -> (Duration, Option<String>) {
        let stop = W::background(ex);
        for _ in 0..MODE_WARM_UP {
            W::iter(ex);
        }
        let before = pool.map(crew::Pool::metrics);
        let mut times: Vec<Duration> = (0..MODE_ITERS)
            .map(|_| {
                let start = Instant::now();
                W::iter(ex);
                start.elapsed()
            })
            .collect();
        let after = pool.map(crew::Pool::metrics);
        if let Some(stop) = stop {
            stop();
        }
        times.sort_unstable();
        (times[MODE_ITERS / 2], before.zip(after).map(|(before, after)| per_iteration(&before, &after)))
    }
}

/// What crew's workers did per iteration between two snapshots of its metrics, worker by
/// worker: polls, LIFO runs, tasks stolen, steal sweeps, parks, and the time out of park.
fn per_iteration(before: &crew::Metrics, after: &crew::Metrics) -> String {
    let per = |n: u64| n as f64 / MODE_ITERS as f64;
    let workers: Vec<String> = after
        .workers
        .iter()
        .zip(&before.workers)
        .map(|(a, b)| {
            format!(
                "{:.0} polls, {:.0} LIFO, {:.0} stolen, {:.0} sweeps, {:.1} parks, busy {:.3} ms",
                per(a.polls - b.polls),
                per(a.lifo_runs - b.lifo_runs),
                per(a.stolen - b.stolen),
                per(a.steal_attempts - b.steal_attempts),
                per(a.parks - b.parks),
                (a.busy - b.busy).as_secs_f64() * 1e3 / MODE_ITERS as f64,
            )
        })
        .collect();
    workers.join(" | ")
}

/// The `CREW_BENCH_MODES` probe of `W` (see the module docs).
pub fn modes<W: Workload>() {
    let workers = workers();
    println!(
        "{}, {workers} workers: per round, each executor's median of {MODE_ITERS} iterations (after \
         {MODE_WARM_UP}), and one cache-line round trip between two spinning threads before and after",
        W::NAME
    );
    for round in 1..=MODE_ROUNDS {
        let before = cache_line_round_trip_ns();
        let mut crew = None;
        let mut medians = [Duration::ZERO; EXECUTORS.len()];
        // Each round starts with the next executor, so that none always runs first (right after
        // the round trip's spinning threads) or last.
        let first = round % EXECUTORS.len();
        for turn in 0..EXECUTORS.len() {
            let index = (first + turn) % EXECUTORS.len();
            let (median, counts) = with_executor(EXECUTORS[index], workers, Median::<W>(PhantomData));
            medians[index] = median;
            crew = crew.or(counts);
        }
        let after = cache_line_round_trip_ns();
        let medians: Vec<String> = EXECUTORS
            .iter()
            .zip(medians)
            .map(|(name, median)| format!("{name} {:.3} ms", median.as_secs_f64() * 1e3))
            .collect();
        println!(
            "round {round:>2}: {}; round trip {before} ns before, {after} ns after; {} first",
            medians.join(", "),
            EXECUTORS[first]
        );
        if let Some(crew) = crew {
            println!("          crew per iteration: {crew}");
        }
    }
}
