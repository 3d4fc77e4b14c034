//! crew's tasks as tokio-console sees them: a crew program instrumented with console-subscriber,
//! read back over the console's gRPC API with console-api's client (the one the `tokio-console`
//! client uses), checking that named tasks appear with their spawn locations, exact poll counts,
//! busy and scheduled time, wakes and wakers, and states.

// console-subscriber needs this cfg (`.cargo/config.toml` sets it); a `RUSTFLAGS` in the
// environment replaces that file's flags, and would otherwise turn this file into no test at all.
#[cfg(not(console_without_tokio_unstable))]
compile_error!("build with --cfg console_without_tokio_unstable (console/.cargo/config.toml sets it; RUSTFLAGS overrides that file)");

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use console_api::field::{Name, Value};
use console_api::instrument::instrument_client::InstrumentClient;
use console_api::instrument::InstrumentRequest;
use console_api::tasks::Stats;
use console_api::tasks::Task;
use tracing_subscriber::prelude::*;

/// Turns a hang into a failure; nothing here waits on time otherwise.
const HANG: Duration = Duration::from_secs(60);

/// A task as the console has it: its fields by name, and its latest stats.
#[derive(Debug, Default, Clone)]
struct Seen {
    fields: HashMap<String, String>,
    stats: Option<Stats>,
}

impl Seen {
    fn polls(&self) -> u64 {
        self.poll_stats().map_or(0, |poll| poll.polls)
    }

    fn poll_stats(&self) -> Option<&console_api::PollStats> {
        self.stats.as_ref()?.poll_stats.as_ref()
    }

    fn completed(&self) -> bool {
        self.stats.as_ref().is_some_and(|stats| stats.dropped_at.is_some())
    }

    /// In a poll now: the last poll started after the last one ended (the client's "Running").
    fn running(&self) -> bool {
        self.poll_stats().is_some_and(|poll| match (&poll.last_poll_started, &poll.last_poll_ended) {
            (Some(started), Some(ended)) => (started.seconds, started.nanos) > (ended.seconds, ended.nanos),
            (Some(_), None) => true,
            _ => false,
        })
    }

    /// Wakers alive: cloned and not dropped.
    fn wakers(&self) -> i64 {
        self.stats.as_ref().map_or(0, |stats| stats.waker_clones as i64 - stats.waker_drops as i64)
    }
}

fn fields(task: &Task) -> HashMap<String, String> {
    let mut fields = HashMap::new();
    for field in &task.fields {
        let (Some(Name::StrName(name)), Some(value)) = (&field.name, &field.value) else { continue };
        let value = match value {
            Value::StrVal(v) | Value::DebugVal(v) => v.clone(),
            Value::U64Val(v) => v.to_string(),
            Value::I64Val(v) => v.to_string(),
            Value::BoolVal(v) => v.to_string(),
        };
        fields.insert(name.clone(), value);
    }
    if let Some(location) = &task.location {
        fields.insert("loc.file".into(), location.file.clone().unwrap_or_default());
        fields.insert("loc.line".into(), location.line.unwrap_or_default().to_string());
    }
    fields
}

/// Reads the console's task updates on `port` until `done` holds for the tasks seen so far
/// (by name), and returns them.
fn watch(port: u16, done: impl Fn(&HashMap<String, Seen>) -> bool) -> HashMap<String, Seen> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let deadline = Instant::now() + HANG;
        let mut client = loop {
            match InstrumentClient::connect(format!("http://127.0.0.1:{port}")).await {
                Ok(client) => break client,
                Err(error) => {
                    assert!(Instant::now() < deadline, "no console server on port {port}: {error}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        let mut updates = client.watch_updates(InstrumentRequest {}).await.unwrap().into_inner();
        // The first update lists every task; later ones add new tasks and changed stats.
        let mut by_span: HashMap<u64, Seen> = HashMap::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let update = tokio::time::timeout(left, updates.message())
                .await
                .unwrap_or_else(|_| panic!("the console never showed what was expected; it showed {by_span:#?}"))
                .unwrap()
                .expect("the console closed its stream");
            let Some(tasks) = update.task_update else { continue };
            for task in tasks.new_tasks {
                let span = task.id.as_ref().expect("a task has an id").id;
                by_span.entry(span).or_default().fields = fields(&task);
            }
            for (span, stats) in tasks.stats_update {
                by_span.entry(span).or_default().stats = Some(stats);
            }
            let named: HashMap<String, Seen> = by_span
                .values()
                .filter_map(|seen| Some((seen.fields.get("task.name")?.clone(), seen.clone())))
                .collect();
            if done(&named) {
                return named;
            }
        }
    })
}

#[test]
fn named_tasks_show_in_the_console_with_their_polls_wakers_and_states() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let layer = console_subscriber::ConsoleLayer::builder()
        .server_addr(([127, 0, 0, 1], port))
        .publish_interval(Duration::from_millis(20))
        .spawn();
    // Global: the workers are other threads.
    tracing_subscriber::registry().with(layer).init();

    let pool = crew::Pool::builder().workers(2).build().unwrap();
    // Finishes after four polls: three yields, each a wake by itself during its poll.
    let (yielder, yielder_line) = (
        crew::task::Builder::new().name("yielder").spawn_on(&pool, async {
            for _ in 0..3 {
                crew::yield_now().await;
            }
        }),
        line!() - 5,
    );
    // Waits on a channel, which keeps its waker, after one poll.
    let (wake_waiter, waiting) = async_channel::bounded::<()>(1);
    let waiter =
        crew::task::Builder::new().name("waiter").spawn_on(&pool, async move { waiting.recv().await.unwrap() });
    // Blocks its worker inside its first poll until the test lets it go.
    let (release, blocked) = mpsc::channel::<()>();
    let (entered, in_poll) = mpsc::channel::<()>();
    let stuck = crew::task::Builder::new().name("stuck").spawn_on(&pool, async move {
        entered.send(()).unwrap();
        blocked.recv().unwrap();
    });
    crew::block_on(yielder);
    in_poll.recv_timeout(HANG).expect("the stuck task started");

    let seen = watch(port, |tasks| {
        let ready = |name: &str, what: fn(&Seen) -> bool| tasks.get(name).is_some_and(what);
        ready("yielder", |t| t.completed() && t.polls() == 4)
            && ready("waiter", |t| t.polls() == 1 && t.wakers() >= 1)
            && ready("stuck", |t| t.running())
    });

    let yielder = &seen["yielder"];
    assert_eq!(yielder.fields["kind"], "task");
    assert!(yielder.fields["loc.file"].ends_with("console.rs"), "{yielder:?}");
    assert_eq!(yielder.fields["loc.line"], yielder_line.to_string(), "{yielder:?}");
    let stats = yielder.stats.as_ref().unwrap();
    assert_eq!(stats.wakes, 3, "{stats:?}");
    assert_eq!(stats.self_wakes, 3, "each yield wakes the task inside its own poll: {stats:?}");
    assert_eq!(yielder.wakers(), 0, "a finished task holds no waker: {stats:?}");
    let poll = yielder.poll_stats().unwrap();
    assert!(poll.busy_time.as_ref().is_some_and(|busy| busy.seconds > 0 || busy.nanos > 0), "{poll:?}");
    assert!(stats.scheduled_time.as_ref().is_some_and(|t| t.seconds > 0 || t.nanos > 0), "{stats:?}");

    let waiter_seen = &seen["waiter"];
    assert!(!waiter_seen.completed() && !waiter_seen.running(), "idle: {waiter_seen:?}");
    assert_eq!(waiter_seen.stats.as_ref().unwrap().wakes, 0, "{waiter_seen:?}");

    let stuck_seen = &seen["stuck"];
    assert_eq!(stuck_seen.polls(), 1, "{stuck_seen:?}");
    assert!(!stuck_seen.completed(), "{stuck_seen:?}");

    // Let both go; they finish, and the console shows it.
    release.send(()).unwrap();
    wake_waiter.send_blocking(()).unwrap();
    crew::block_on(waiter);
    crew::block_on(stuck);
    let seen = watch(port, |tasks| {
        tasks.get("waiter").is_some_and(|t| t.completed() && t.polls() == 2)
            && tasks.get("stuck").is_some_and(|t| t.completed() && t.polls() == 1)
    });
    let waiter_stats = seen["waiter"].stats.as_ref().unwrap();
    assert_eq!(
        (waiter_stats.wakes, waiter_stats.self_wakes),
        (1, 0),
        "woken once, from the test's thread: {waiter_stats:?}"
    );
    assert_eq!(seen["waiter"].wakers(), 0, "{waiter_stats:?}");
}
