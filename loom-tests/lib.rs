//! loom model checks of crew's protocols live in `tests/`; run them with
//! `RUSTFLAGS="--cfg loom" cargo test --release -p crew-loom-tests` (see README.md here).
//! Without `--cfg loom` this crate builds nothing but this file.

/// What the models share: a checker with a preemption bound, and drop counters.
#[cfg(loom)]
pub mod support {
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use loom::sync::{Arc, Condvar, Mutex};

    /// Checks `f` under every interleaving loom explores with at most `bound` preemptions
    /// (`LOOM_MAX_PREEMPTIONS` overrides it).
    pub fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(bound);
        }
        builder.check(f);
    }

    /// As [`model`], for a model that takes a worker over in some executions (the monitor's
    /// `take_over`, called by hand): `f` returns whether this execution did. Returns how many
    /// executions did and how many ran (printed too), for the model to assert that it reached
    /// the cases it must.
    pub fn model_counting_takeovers(bound: usize, f: impl Fn() -> bool + Sync + Send + 'static) -> (usize, usize) {
        // Plain `std` atomics: counts across executions, outside what loom explores.
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let counts = std::sync::Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let inside = counts.clone();
        model(bound, move || {
            inside.1.fetch_add(1, Relaxed);
            if f() {
                inside.0.fetch_add(1, Relaxed);
            }
        });
        let (taken, executions) = (counts.0.load(Relaxed), counts.1.load(Relaxed));
        println!("{taken} of {executions} executions took the worker over");
        (taken, executions)
    }

    /// A counter shared between a model's threads.
    #[derive(Clone, Debug, Default)]
    pub struct Count(Arc<AtomicUsize>);

    impl Count {
        pub fn new() -> Count {
            Count::default()
        }

        pub fn add(&self) {
            self.0.fetch_add(1, SeqCst);
        }

        /// The count. Read with a read-modify-write, which always sees the last value in the
        /// modification order: the model often learns that a task finished through async-task's
        /// atomics, which are plain std atomics invisible to loom, so loom would otherwise let a
        /// plain load return a value older than what the finished task wrote.
        pub fn get(&self) -> usize {
            self.0.fetch_add(0, SeqCst)
        }
    }

    /// Yields to the model's other threads until `done` holds: for an end reached on another
    /// thread than the model's (a task dropped by a pool's reaper thread). A state never reached
    /// fails the model through loom's branch limit.
    pub fn wait_until(mut done: impl FnMut() -> bool) {
        while !done() {
            loom::thread::yield_now();
        }
    }

    /// Adds one to its counter when dropped. Holds a loom `Arc`, so a `Dropped` that is never
    /// dropped is also reported by loom's leak check at the end of the execution.
    #[derive(Debug)]
    pub struct Dropped(pub Count);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.add();
        }
    }

    /// The drops of one task spawned by [`Counted::spawn`]: its future, and each output it made.
    #[derive(Debug, Default)]
    pub struct Counted {
        /// Drops of the task's future.
        pub future_drops: Count,
        /// Outputs the task made (0 or 1).
        pub outputs: Count,
        /// Drops of those outputs.
        pub output_drops: Count,
    }

    impl Counted {
        pub fn new() -> Counted {
            Counted::default()
        }

        /// Spawns on `pool` a task whose future and output count their drops here.
        pub fn spawn(&self, pool: &crew::Pool) -> crew::JoinHandle<Dropped> {
            let guard = Dropped(self.future_drops.clone());
            let (outputs, output_drops) = (self.outputs.clone(), self.output_drops.clone());
            pool.spawn(async move {
                let _guard = guard;
                outputs.add();
                Dropped(output_drops)
            })
        }

        /// Asserts that the future was dropped exactly once, and each output made exactly once.
        pub fn assert_each_dropped_once(&self) {
            assert_eq!(self.future_drops.get(), 1, "the future is dropped exactly once");
            assert_eq!(self.output_drops.get(), self.outputs.get(), "an output made is dropped exactly once");
        }
    }

    /// A one-way signal between a model's threads that blocks the waiting thread itself (a
    /// worker's too, inside a task: a poll stuck in a blocking call).
    #[derive(Clone, Default)]
    pub struct Flag(Arc<(Mutex<bool>, Condvar)>);

    impl Flag {
        pub fn new() -> Flag {
            Flag::default()
        }

        /// Raises the flag, waking every thread blocked in [`Flag::wait`].
        pub fn raise(&self) {
            *self.0 .0.lock().unwrap() = true;
            self.0 .1.notify_all();
        }

        /// Blocks this thread until the flag is raised.
        pub fn wait(&self) {
            let mut raised = self.0 .0.lock().unwrap();
            while !*raised {
                raised = self.0 .1.wait(raised).unwrap();
            }
        }
    }
}
