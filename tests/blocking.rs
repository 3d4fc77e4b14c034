//! `crew::spawn_blocking`: values come back, jobs run on `crew-blocking-N` threads and never on
//! the async workers, the three panic policies hold and the blocking thread survives a panic,
//! detach / drop / cancel of a running job, nesting, and every one of many jobs runs exactly
//! once. (A queued job whose handle is dropped before it starts: `blocking_saturated.rs`, which
//! needs the whole global blocking pool to itself.)
//!
//! Every wait is bounded only by the hang timeout of `tests/common`; nothing depends on timing.

mod common;

use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread::{self, ThreadId};

use common::{await_panic, payload_message, wait_until, with_timeout, DropCounter, HANG_TIMEOUT};

/// Jobs in the many-jobs test.
const JOBS: usize = if cfg!(miri) { 50 } else { 1_000 };
/// Blocking jobs held at once while the async worker must keep running tasks.
const HELD: usize = if cfg!(miri) { 3 } else { 8 };

fn thread_name() -> String {
    thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[test]
fn spawn_blocking_returns_the_closure_value() {
    with_timeout(|| {
        assert_eq!(crew::block_on(crew::spawn_blocking(|| 6 * 7)), 42);
        let text = crew::block_on(crew::spawn_blocking(|| "owned".to_owned()));
        assert_eq!(text, "owned");
        // Awaited from a task of the global pool.
        let from_task = crew::block_on(crew::spawn(async { crew::spawn_blocking(|| vec![1, 2, 3]).await }));
        assert_eq!(from_task, [1, 2, 3]);
        // And from another executor: the handle is a plain future.
        assert_eq!(futures::executor::block_on(crew::spawn_blocking(|| 'x')), 'x');
    });
}

#[test]
fn jobs_run_on_crew_blocking_threads() {
    with_timeout(|| {
        let name = crew::block_on(crew::spawn_blocking(thread_name));
        assert!(name.starts_with("crew-blocking-"), "a job ran on {name:?}");
        // Spawned from a worker, a job still leaves the worker.
        let (worker, job) =
            crew::block_on(crew::spawn(async { (thread_name(), crew::spawn_blocking(thread_name).await) }));
        assert!(worker.starts_with("crew-worker-"), "the task ran on {worker:?}");
        assert!(job.starts_with("crew-blocking-"), "the job ran on {job:?}");
    });
}

#[test]
fn blocked_jobs_never_occupy_the_async_workers() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).thread_name("one").build().unwrap());
        // HELD jobs that all wait at one barrier with this thread: they finish only if HELD
        // distinct blocking threads run them at once.
        let gate = Arc::new(Barrier::new(HELD + 1));
        let started = Arc::new(AtomicUsize::new(0));
        let spawner = {
            let (gate, started) = (gate.clone(), started.clone());
            pool.spawn(async move {
                let jobs: Vec<_> = (0..HELD)
                    .map(|i| {
                        let (gate, started) = (gate.clone(), started.clone());
                        crew::spawn_blocking(move || {
                            started.fetch_add(1, Ordering::SeqCst);
                            gate.wait();
                            (i, thread_name())
                        })
                    })
                    .collect();
                // Awaiting them parks this task, not the worker.
                let mut results = Vec::new();
                for job in jobs {
                    results.push(job.await);
                }
                results
            })
        };
        wait_until("every blocking job is running", || started.load(Ordering::SeqCst) == HELD);

        // While all of them block, the single worker runs other tasks to completion.
        let ran = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..100)
            .map(|i| {
                let ran = ran.clone();
                pool.spawn(async move {
                    crew::yield_now().await;
                    ran.fetch_add(1, Ordering::SeqCst);
                    (i, thread_name())
                })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(crew::block_on(task), (i, "one-0".to_owned()));
        }
        assert_eq!(ran.load(Ordering::SeqCst), 100);
        assert!(!spawner.is_finished(), "the blocking jobs are still held");

        gate.wait();
        let results = crew::block_on(spawner);
        let mut names: Vec<String> = results.iter().map(|(_, name)| name.clone()).collect();
        assert_eq!(results.iter().map(|(i, _)| *i).collect::<Vec<_>>(), (0..HELD).collect::<Vec<_>>());
        assert!(names.iter().all(|name| name.starts_with("crew-blocking-")), "{names:?}");
        names.sort();
        names.dedup();
        assert_eq!(names.len(), HELD, "each held job had a thread of its own");
    });
}

/// Thread ids of blocking threads that exited, recorded by a thread-local's destructor.
static EXITED: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

struct ExitRecorder;

impl Drop for ExitRecorder {
    fn drop(&mut self) {
        EXITED.lock().unwrap_or_else(|e| e.into_inner()).push(thread::current().id());
    }
}

thread_local! {
    static EXIT_RECORDER: RefCell<Option<ExitRecorder>> = const { RefCell::new(None) };
}

/// Registers the calling thread's exit in [`EXITED`] and returns its id.
fn record_exit() -> ThreadId {
    // Only once per thread: replacing a recorder would drop the old one, which records an exit
    // of a thread that is alive (two panic tests whose jobs ran on the same thread).
    EXIT_RECORDER.with(|recorder| {
        recorder.borrow_mut().get_or_insert_with(|| ExitRecorder);
    });
    thread::current().id()
}

/// Runs `job` (which panics) under each policy's handle builder, and checks that the thread
/// that ran it is still alive after the awaiter saw the panic and after more jobs ran.
fn assert_thread_survives(panicked_on: ThreadId) {
    for i in 0..10 {
        assert_eq!(crew::block_on(crew::spawn_blocking(move || i)), i);
    }
    let exited = EXITED.lock().unwrap_or_else(|e| e.into_inner());
    assert!(!exited.contains(&panicked_on), "the blocking thread died of its job's panic");
}

#[test]
fn propagate_resumes_the_original_payload_and_the_thread_survives() {
    with_timeout(|| {
        let (tx, rx) = mpsc::channel();
        let payload = await_panic(crew::spawn_blocking(move || {
            tx.send(record_exit()).unwrap();
            panic!("expected: a blocking job panicked");
        }));
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"expected: a blocking job panicked"));
        assert_thread_survives(rx.recv_timeout(HANG_TIMEOUT).unwrap());

        // A non-string payload comes back as itself.
        let payload = await_panic(crew::spawn_blocking(|| std::panic::panic_any(17u64)));
        assert_eq!(payload.downcast_ref::<u64>(), Some(&17));
    });
}

#[test]
fn catch_gives_err_with_the_panic_message_and_the_thread_survives() {
    with_timeout(|| {
        let (tx, rx) = mpsc::channel();
        let err = crew::block_on(crew::spawn_blocking_with(crew::Catch, move || -> u8 {
            tx.send(record_exit()).unwrap();
            panic!("expected: caught {}", 3);
        }))
        .unwrap_err();
        assert!(err.is_panic());
        assert!(!err.is_cancelled());
        assert_eq!(err.panic_message(), Some("expected: caught 3"));
        assert_thread_survives(rx.recv_timeout(HANG_TIMEOUT).unwrap());
        assert_eq!(crew::block_on(crew::spawn_blocking_with(crew::Catch, || 4)).unwrap(), 4);
    });
}

#[test]
fn ignore_panics_the_awaiter_with_its_message_and_the_thread_survives() {
    with_timeout(|| {
        let (tx, rx) = mpsc::channel();
        let payload = await_panic(crew::spawn_blocking_with(crew::Ignore, move || {
            tx.send(record_exit()).unwrap();
            panic!("expected: ignored");
        }));
        assert_eq!(payload_message(&*payload), Some(crew::IGNORED_PANIC_MESSAGE));
        assert_thread_survives(rx.recv_timeout(HANG_TIMEOUT).unwrap());
        assert_eq!(crew::block_on(crew::spawn_blocking_with(crew::Ignore, || 5)), 5);

        // Detached, the panic affects nothing.
        let (tx, rx) = mpsc::channel();
        crew::spawn_blocking_with(crew::Ignore, move || {
            tx.send(()).unwrap();
            panic!("expected: ignored and detached");
        })
        .detach();
        rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(crew::block_on(crew::spawn_blocking(|| 6)), 6);
    });
}

/// A running job held at a gate: returns its handle once it runs, the gate's sender, and the
/// counters of its completion and of its output's drop.
fn held_job() -> (crew::JoinHandle<DropCounter>, mpsc::Sender<()>, Arc<AtomicBool>, Arc<AtomicUsize>) {
    let (started_tx, started_rx) = mpsc::channel();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let finished = Arc::new(AtomicBool::new(false));
    let output_drops = Arc::new(AtomicUsize::new(0));
    let handle = {
        let (finished, output_drops) = (finished.clone(), output_drops.clone());
        crew::spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = gate_rx.recv();
            finished.store(true, Ordering::SeqCst);
            DropCounter(output_drops)
        })
    };
    started_rx.recv_timeout(HANG_TIMEOUT).expect("the held job never started");
    (handle, gate_tx, finished, output_drops)
}

#[test]
fn a_detached_job_runs_to_completion() {
    with_timeout(|| {
        let (handle, gate, finished, output_drops) = held_job();
        handle.detach();
        drop(gate);
        wait_until("the detached job finishes", || finished.load(Ordering::SeqCst));
        wait_until("its output is dropped", || output_drops.load(Ordering::SeqCst) == 1);
    });
}

#[test]
fn dropping_the_handle_of_a_running_job_lets_it_finish_and_drops_its_output() {
    with_timeout(|| {
        // A closure cannot be interrupted: once started, it runs to the end; nobody gets the output.
        let (handle, gate, finished, output_drops) = held_job();
        drop(handle);
        assert!(!finished.load(Ordering::SeqCst));
        drop(gate);
        wait_until("the job finishes", || finished.load(Ordering::SeqCst));
        wait_until("its output is dropped", || output_drops.load(Ordering::SeqCst) == 1);
    });
}

#[test]
fn cancelling_a_running_job_waits_for_it_and_gives_none() {
    with_timeout(|| {
        let (handle, gate, finished, output_drops) = held_job();
        let mut cancel = Box::pin(handle.cancel());
        // The first poll marks the task cancelled; the job still holds its thread.
        let waker = futures::task::noop_waker();
        assert!(cancel.as_mut().poll(&mut std::task::Context::from_waker(&waker)).is_pending());
        drop(gate);
        assert!(crew::block_on(cancel).is_none(), "a job cancelled while running reports no output");
        assert!(finished.load(Ordering::SeqCst), "cancel returned only after the closure did");
        // The job's thread drops the output right after it marks the task complete, and the
        // cancel can see the completion in between (ThreadSanitizer's run caught it there).
        wait_until("the output nobody awaits is dropped", || output_drops.load(Ordering::SeqCst) == 1);

        // Cancelling a finished job gives its output.
        let handle = crew::spawn_blocking(|| 9);
        wait_until("the job finishes", || handle.is_finished());
        assert_eq!(crew::block_on(handle.cancel()), Some(9));
    });
}

#[test]
fn spawn_blocking_nests_in_tasks_and_in_blocking_jobs() {
    with_timeout(|| {
        // task -> blocking job -> blocking job, each awaiting the next.
        let output = crew::block_on(crew::spawn(async {
            crew::spawn_blocking(|| {
                let inner = crew::block_on(crew::spawn_blocking(|| (thread_name(), 2)));
                (thread_name(), inner)
            })
            .await
        }));
        let (outer, (inner, two)) = output;
        assert_eq!(two, 2);
        assert!(outer.starts_with("crew-blocking-") && inner.starts_with("crew-blocking-"));
        assert_ne!(outer, inner, "the outer job holds its thread while it waits");

        // A blocking job spawns an async task on the global pool.
        let from_job = crew::block_on(crew::spawn_blocking(|| crew::block_on(crew::spawn(async { thread_name() }))));
        assert!(from_job.starts_with("crew-worker-"), "the task ran on {from_job:?}");
    });
}

#[test]
fn many_short_jobs_each_run_exactly_once() {
    with_timeout(|| {
        let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..JOBS).map(|_| AtomicUsize::new(0)).collect());
        // Half spawned from this thread, half from a task.
        let mut handles: Vec<_> = (0..JOBS / 2)
            .map(|i| {
                let runs = runs.clone();
                crew::spawn_blocking(move || runs[i].fetch_add(1, Ordering::SeqCst) + i)
            })
            .collect();
        let from_task = {
            let runs = runs.clone();
            crew::spawn(async move {
                let handles: Vec<_> = (JOBS / 2..JOBS)
                    .map(|i| {
                        let runs = runs.clone();
                        crew::spawn_blocking(move || runs[i].fetch_add(1, Ordering::SeqCst) + i)
                    })
                    .collect();
                let mut outputs = Vec::new();
                for handle in handles {
                    outputs.push(handle.await);
                }
                outputs
            })
        };
        let mut outputs: Vec<usize> = handles.drain(..).map(crew::block_on).collect();
        outputs.extend(crew::block_on(from_task));
        assert_eq!(outputs, (0..JOBS).collect::<Vec<_>>(), "each job saw its counter at 0");
        let counts: Vec<usize> = runs.iter().map(|run| run.load(Ordering::SeqCst)).collect();
        assert!(counts.iter().all(|&n| n == 1), "run counts: {counts:?}");
    });
}

#[test]
fn a_job_and_its_captures_are_dropped_once_after_it_runs() {
    with_timeout(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let captured = DropCounter(drops.clone());
        let value = crew::block_on(crew::spawn_blocking(move || {
            let _captured = captured;
            1
        }));
        assert_eq!(value, 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}
