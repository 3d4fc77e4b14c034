//! The `tracing` feature: what a task logs carries the task's span, with its id, name and spawn
//! location, on every poll and on every pool (run with `cargo test --features tracing`); with
//! the `console` feature, each task's wakers report their clones, wakes and drops.
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

/// What the recorder keeps of a span.
#[derive(Clone, Debug)]
struct SpanRecord {
    target: &'static str,
    name: &'static str,
    /// Made with no parent (explicit `parent: None`, or no current span).
    root: bool,
    fields: Fields,
    /// How many times it was entered.
    entered: usize,
    /// How many times it was exited.
    exited: usize,
}

/// What the recorder keeps of an event.
#[derive(Clone, Debug)]
struct EventRecord {
    target: &'static str,
    message: String,
    fields: Fields,
    /// The fields of the span the emitting thread was in.
    span: Option<Fields>,
}

/// A subscriber that keeps every span and every event.
#[derive(Default)]
struct Recorder {
    next_id: AtomicU64,
    spans: Mutex<HashMap<u64, SpanRecord>>,
    events: Mutex<Vec<EventRecord>>,
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
        let root = span.is_root() || (span.is_contextual() && STACK.with(|stack| stack.borrow().is_empty()));
        let metadata = span.metadata();
        let record = SpanRecord {
            target: metadata.target(),
            name: metadata.name(),
            root,
            fields: fields.0,
            entered: 0,
            exited: 0,
        };
        self.spans.lock().unwrap().insert(id, record);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = Collect::default();
        values.record(&mut fields);
        if let Some(known) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            known.fields.extend(fields.0);
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Collect::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let current = STACK.with(|stack| stack.borrow().last().copied());
        let span = current.and_then(|id| self.spans.lock().unwrap().get(&id).map(|span| span.fields.clone()));
        let target = event.metadata().target();
        self.events.lock().unwrap().push(EventRecord { target, message, fields: fields.0, span });
    }

    fn enter(&self, span: &Id) {
        if let Some(known) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            known.entered += 1;
        }
        STACK.with(|stack| stack.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        if let Some(known) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            known.exited += 1;
        }
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
    events.iter().filter(|event| event.message == message).map(|event| event.span.clone()).collect()
}

/// The span whose `task.id` is `id`, and its recorder id.
fn span_of_task(id: u64) -> (u64, SpanRecord) {
    let spans = recorder().spans.lock().unwrap();
    let mut found = spans.iter().filter(|(_, span)| span.fields.get("task.id") == Some(&id.to_string()));
    let (key, span) = found.next().unwrap_or_else(|| panic!("no span has task.id {id}"));
    assert!(found.next().is_none(), "two spans have task.id {id}");
    (*key, span.clone())
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
        let (_, span) = span_of_task(id.as_u64());
        assert_eq!((span.target, span.name), ("crew::task", "runtime.spawn"), "the name tokio-console looks for");
        assert_eq!(span.fields["kind"], "task");
        assert_eq!(span.entered, 2, "one entry per poll, none for the finished task's drop");
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

#[test]
fn a_task_spawned_inside_a_task_has_a_span_of_its_own_with_no_parent() {
    recorder();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let outer = pool.spawn(async { crew::spawn(async {}).id() });
        let outer_id = outer.id();
        let inner_id = crew::block_on(outer);
        let (_, outer_span) = span_of_task(outer_id.as_u64());
        let (_, inner_span) = span_of_task(inner_id.as_u64());
        assert!(outer_span.root, "{outer_span:?}");
        assert!(inner_span.root, "spawned inside the outer task's poll, yet made with no parent: {inner_span:?}");
    });
}

#[test]
fn block_on_polls_its_future_inside_a_block_on_span() {
    recorder();
    with_timeout(|| {
        let line = line!() + 1;
        crew::block_on(async { tracing::info!("inside block_on") });
        let spans = spans_of("inside block_on");
        let span = spans[0].as_ref().expect("logged inside block_on's span");
        assert_eq!(span["kind"], "block_on");
        assert_eq!(span["loc.file"], file!());
        assert_eq!(span["loc.line"], line.to_string());
    });
}

#[test]
fn a_blocking_job_span_is_of_kind_blocking() {
    recorder();
    with_timeout(|| {
        let job = crew::spawn_blocking(|| tracing::info!("kind of job"));
        crew::block_on(job);
        let spans = spans_of("kind of job");
        assert_eq!(spans[0].as_ref().expect("logged inside the job's span")["kind"], "blocking");
    });
}

/// The waker events (`op`) reported for the task span `span`, in order.
#[cfg(feature = "console")]
fn waker_ops(span: u64) -> Vec<String> {
    let events = recorder().events.lock().unwrap();
    events
        .iter()
        .filter(|event| event.target == "runtime::waker" && event.fields.get("task.id") == Some(&span.to_string()))
        .map(|event| event.fields["op"].clone())
        .collect()
}

#[test]
#[cfg(feature = "console")]
fn with_console_each_poll_reports_its_wakers_clones_wakes_and_drops() {
    recorder();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        // Polled three times: it yields (a wake during the poll, its waker not kept), then waits
        // on a channel (which keeps a clone of the waker until the send wakes it).
        let (tx, rx) = async_channel::bounded::<()>(1);
        let task = pool.spawn(async move {
            crew::yield_now().await;
            rx.recv().await.unwrap();
        });
        let id = task.id().as_u64();
        // Wait until the task waits on the channel: its second poll ended (its span exited
        // twice), so the channel holds its waker and the send below wakes it. (Waiting for the
        // second entry raced: a send during that poll completed it with no third poll.)
        while span_of_task_opt(id).map_or(true, |(_, span)| span.exited < 2) {
            std::thread::yield_now();
        }
        let (span, _) = span_of_task(id);
        let live = |ops: &[String]| {
            ops.iter().filter(|op| *op == "waker.clone").count() as i64
                - ops.iter().filter(|op| *op == "waker.drop").count() as i64
        };
        // The poll's second half may still be running; wait until the waiter holds the only one.
        while live(&waker_ops(span)) != 1 {
            std::thread::yield_now();
        }
        tx.send_blocking(()).unwrap();
        crew::block_on(task);
        let ops = waker_ops(span);
        let wakes = ops.iter().filter(|op| op.starts_with("waker.wake")).count();
        assert_eq!(wakes, 2, "the yield's wake and the channel's: {ops:?}");
        assert_eq!(live(&ops), 0, "every waker handed to the future is gone once it finished: {ops:?}");
        assert_eq!(ops.iter().filter(|op| *op == "waker.clone").count(), 3, "one per poll: {ops:?}");
    });
}

/// [`span_of_task`], or `None` while no span has that id.
#[cfg(feature = "console")]
fn span_of_task_opt(id: u64) -> Option<(u64, SpanRecord)> {
    let spans = recorder().spans.lock().unwrap();
    spans
        .iter()
        .find(|(_, span)| span.fields.get("task.id") == Some(&id.to_string()))
        .map(|(key, span)| (*key, span.clone()))
}
