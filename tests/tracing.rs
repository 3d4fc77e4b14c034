//! The `tracing` feature: what a task logs carries the task's span, with its id, name and spawn
//! location, on every poll and on every pool (run with `cargo test --features tracing`).
#![cfg(feature = "tracing")]

mod common;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use common::with_timeout;

/// A span's or an event's fields, as text.
type Fields = HashMap<String, String>;

#[derive(Default)]
struct Collect(Fields);

impl Visit for Collect {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// A subscriber that keeps every span's fields and, for every event, its message and the
/// fields of the span the emitting thread was in.
#[derive(Default)]
struct Recorder {
    next_id: AtomicU64,
    spans: Mutex<HashMap<u64, (&'static str, Fields)>>,
    events: Mutex<Vec<(String, Option<Fields>)>>,
}

thread_local! {
    static STACK: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = Collect::default();
        span.record(&mut fields);
        self.spans.lock().unwrap().insert(id, (span.metadata().target(), fields.0));
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = Collect::default();
        values.record(&mut fields);
        if let Some((_, known)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            known.extend(fields.0);
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Collect::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let current = STACK.with(|stack| stack.borrow().last().copied());
        let span = current.and_then(|id| self.spans.lock().unwrap().get(&id).map(|(_, fields)| fields.clone()));
        self.events.lock().unwrap().push((message, span));
    }

    fn enter(&self, span: &Id) {
        STACK.with(|stack| stack.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, _: &Id) {
        STACK.with(|stack| stack.borrow_mut().pop());
    }
}

fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<&'static Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let recorder: &'static Recorder = Box::leak(Box::default());
        // The workers are other threads: only a global default reaches them.
        tracing::subscriber::set_global_default(Forward(recorder)).expect("no other subscriber in this test binary");
        recorder
    })
}

/// The leaked recorder as a subscriber.
struct Forward(&'static Recorder);

impl Subscriber for Forward {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.0.enabled(metadata)
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.0.new_span(span)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        self.0.record(span, values)
    }
    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.0.record_follows_from(span, follows)
    }
    fn event(&self, event: &Event<'_>) {
        self.0.event(event)
    }
    fn enter(&self, span: &Id) {
        self.0.enter(span)
    }
    fn exit(&self, span: &Id) {
        self.0.exit(span)
    }
}

/// The span fields of every event whose message is `message`.
fn spans_of(message: &str) -> Vec<Option<Fields>> {
    let events = recorder().events.lock().unwrap();
    events.iter().filter(|(m, _)| m == message).map(|(_, span)| span.clone()).collect()
}

#[test]
fn what_a_task_logs_carries_its_id_name_and_spawn_location_on_every_poll() {
    recorder();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let builder = crew::task::Builder::new().name("fetch");
        let task = async {
            tracing::info!("first poll");
            crew::yield_now().await;
            tracing::info!("second poll");
        };
        let (handle, line) = (builder.spawn_on(&pool, task), line!());
        let id = handle.id();
        crew::block_on(handle);
        for message in ["first poll", "second poll"] {
            let spans = spans_of(message);
            assert_eq!(spans.len(), 1, "{message}");
            let span = spans[0].as_ref().unwrap_or_else(|| panic!("{message}: logged outside any span"));
            assert_eq!(span["task.id"], id.as_u64().to_string(), "{message}");
            assert_eq!(span["task.name"], "fetch", "{message}");
            assert_eq!(span["loc.file"], file!(), "{message}");
            assert_eq!(span["loc.line"], line.to_string(), "{message}");
        }
        let targets: Vec<&str> = recorder().spans.lock().unwrap().values().map(|(target, _)| *target).collect();
        assert!(targets.contains(&"crew::task"), "{targets:?}");
    });
}

#[test]
fn unnamed_tasks_on_the_global_pool_and_blocking_jobs_have_spans_too() {
    recorder();
    with_timeout(|| {
        let handle = crew::spawn(async { tracing::info!("global task") });
        let id = handle.id();
        crew::block_on(handle);
        let spans = spans_of("global task");
        let span = spans[0].as_ref().expect("logged inside the task's span");
        assert_eq!(span["task.id"], id.as_u64().to_string());
        assert!(!span.contains_key("task.name"), "an unnamed task's span has no name: {span:?}");

        let job = crew::spawn_blocking(|| tracing::info!("blocking job"));
        let id = job.id();
        crew::block_on(job);
        let spans = spans_of("blocking job");
        assert_eq!(spans[0].as_ref().expect("logged inside the job's span")["task.id"], id.as_u64().to_string());
    });
}
