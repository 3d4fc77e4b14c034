//! The child's side of `accept_errors_under_a_low_fd_limit_...`: a server whose accepts fail
//! with `EMFILE` until file descriptors are freed.

use std::fmt;
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use super::*;

/// Every event logged in the child: its level and message.
static EVENTS: Mutex<Vec<(Level, String)>> = Mutex::new(Vec::new());

/// How many events of `level` said exactly `message`.
fn logged(level: Level, message: &str) -> usize {
    EVENTS.lock().unwrap().iter().filter(|(l, m)| *l == level && m == message).count()
}

/// A subscriber that keeps every event in [`EVENTS`].
struct Log;

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Log {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        EVENTS.lock().unwrap().push((*event.metadata().level(), message.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

const FIRST: &str = "crew::http: accept failed; retrying, backing off up to 1 s while it fails";
const AGAIN: &str = "crew::http: accept failed again";
const RECOVERED: &str = "crew::http: accepting again";

pub(super) fn child() {
    tracing::subscriber::set_global_default(Log).unwrap();
    let pool = crew::Pool::builder().workers(2).thread_name("fdlimit").build().unwrap();
    let (listener, addr) = listener();
    let (app, _control) = app();
    let server = pool.spawn(crew::http::serve(listener, app.service()).into_future());
    pool.block_on(within_limit(async {
        // Made while descriptors are left; connected once they have run out.
        let client = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let mut fillers = Vec::new();
        let exhausted = loop {
            match std::fs::File::open("/dev/null") {
                Ok(file) => fillers.push(file),
                Err(error) => break error,
            }
        };
        assert_eq!(exhausted.raw_os_error(), Some(24), "EMFILE: {exhausted}");
        // The kernel completes the handshake; the server's accept fails for want of an fd.
        client.connect(&addr.into()).unwrap();
        until(|| logged(Level::DEBUG, AGAIN) >= 2).await;
        assert_eq!(logged(Level::WARN, FIRST), 1, "one warning for the whole run of errors");
        assert!(!server.is_finished(), "an accept error never ends serve");

        drop(fillers);
        let stream = TcpStream::from_std(std::net::TcpStream::from(client)).unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
        let _connection = crew::spawn(connection);
        let body = text(get1(&mut sender, "/").await).await;
        assert!(body.starts_with("fdlimit-"), "the waiting connection is served: {body}");
        assert_eq!(logged(Level::INFO, RECOVERED), 1);
        let (mut fresh, _fresh_connection, _) = http1(addr).await;
        assert!(text(get1(&mut fresh, "/").await).await.starts_with("fdlimit-"));
        assert_eq!(logged(Level::WARN, FIRST), 1);
    }));
    drop(server);
}
