//! Issue 70, item 6: slow clients and the connection places they hold. The stall timeout closes
//! a connection that waits on its peer with no byte moved (a request body that stops coming, a
//! response the client stops taking), and frees its place under `max_connections`; it leaves
//! alone a handler that takes long and an idle keep-alive connection (the header-read
//! timeout's). Stalls on a paused clock, with no header-read timeout so that the only timers
//! are the ones under test; the keep-alive check on the real clock, as a lower bound.

use super::*;

/// The stall timeout under test.
const STALL: Duration = Duration::from_secs(20);

/// Larger than loopback's socket buffers: the client that does not read it stalls the write.
const BIG: usize = 32 << 20;

/// A server with one place, no header-read timeout, and a stall timeout of [`STALL`].
fn one_place(listener: TcpListener, app: App) -> crew::JoinHandle<std::io::Result<()>> {
    let serve =
        crew::http::serve(listener, app.service()).max_connections(1).header_read_timeout(None).stall_timeout(STALL);
    crew::spawn(serve.into_future())
}

/// A request for `/` on a new connection, which waits for the one place.
async fn next_client(addr: SocketAddr) -> crew::JoinHandle<String> {
    let (mut next, next_connection, _) = http1(addr).await;
    crew::spawn(async move {
        let body = text(get1(&mut next, "/").await).await;
        drop(next_connection);
        body
    })
}

#[test]
fn a_request_body_that_stops_coming_is_closed_after_the_stall_timeout_and_frees_its_place() {
    on_a_paused_pool("body", |_| async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = one_place(listener, app);
        let mut slow = TcpStream::connect(addr).await.unwrap();
        let start = crew::time::now();
        // 13 of 100 bytes, then nothing: the handler waits for the rest.
        slow.write_all(b"POST /drain HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly 13 bytes").await.unwrap();
        let next = next_client(addr).await;
        let mut answer = Vec::new();
        // Ends (EOF, or a reset) only once the server closes the connection.
        let _ = slow.read_to_end(&mut answer).await;
        assert_eq!(crew::time::now() - start, STALL, "closed when the body had stalled for the stall timeout");
        assert!(next.await.starts_with("body-"), "the next client got the place");
        drop(server);
    });
}

#[test]
fn a_client_that_takes_no_more_of_its_response_is_closed_after_the_stall_timeout_and_frees_its_place() {
    on_a_paused_pool("unread", |_| async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = one_place(listener, app);
        let (mut h1, _h1_connection, _) = http1(addr).await;
        let start = crew::time::now();
        // One frame read, then no more: the server's writes fill the socket and wait.
        let (_, _body) = first_frame(get1(&mut h1, &format!("/big/{BIG}")).await).await;
        let next = next_client(addr).await;
        assert!(next.await.starts_with("unread-"), "the next client got the place");
        let waited = crew::time::now() - start;
        assert!(waited >= STALL, "closed after {waited:?}, before the stall timeout ({STALL:?})");
        drop(server);
    });
}

/// An HTTP/2 request for `path` by a client that opens every window wide (so that only its
/// socket can hold the server back) and will read nothing: its preface, SETTINGS with the
/// largest initial window, a connection WINDOW_UPDATE, and HEADERS (HPACK without Huffman).
fn wide_open_http2_get(path: &str) -> Vec<u8> {
    let frame = |kind: u8, flags: u8, stream: u32, payload: &[u8]| {
        let len = (payload.len() as u32).to_be_bytes();
        let mut bytes = vec![len[1], len[2], len[3], kind, flags];
        bytes.extend_from_slice(&stream.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    };
    // :method GET, :scheme http (static table), then :path and :authority, literal values.
    let mut headers = vec![0x82, 0x86, 0x44, path.len() as u8];
    headers.extend_from_slice(path.as_bytes());
    headers.extend_from_slice(&[0x41, 1, b'x']);
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend(frame(0x4, 0, 0, &[0, 4, 0x7f, 0xff, 0xff, 0xff])); // INITIAL_WINDOW_SIZE
    bytes.extend(frame(0x8, 0, 0, &[0x7f, 0xff, 0, 0])); // the connection's window
    bytes.extend(frame(0x1, 0x5, 1, &headers)); // END_STREAM | END_HEADERS
    bytes
}

#[test]
fn an_http2_client_that_takes_no_more_of_its_response_is_closed_after_the_stall_timeout() {
    on_a_paused_pool("unread2", |_| async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = one_place(listener, app);
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let start = crew::time::now();
        silent.write_all(&wide_open_http2_get(&format!("/big/{BIG}"))).await.unwrap();
        // It reads nothing: the server's writes fill the socket and wait.
        let next = next_client(addr).await;
        assert!(next.await.starts_with("unread2-"), "the next client got the place");
        let waited = crew::time::now() - start;
        assert!(waited >= STALL, "closed after {waited:?}, before the stall timeout ({STALL:?})");
        drop((silent, server));
    });
}

#[test]
fn a_handler_that_takes_long_to_answer_is_not_a_stall() {
    on_a_paused_pool("patient", |pool| async move {
        let (listener, addr) = listener();
        let (app, control) = app();
        let serve = crew::http::serve(listener, app.service()).header_read_timeout(None).stall_timeout(STALL);
        let server = crew::spawn(serve.into_future());
        let (mut h1, _h1_connection, _) = http1(addr).await;
        let (mut h2, _h2_connection, _) = http2(addr).await;
        let h1_request = crew::spawn(async move { text(get1(&mut h1, "/wait").await).await });
        let h2_request = crew::spawn(async move { text(get2(&mut h2, "/wait").await).await });
        control.entered.recv().await.unwrap();
        control.entered.recv().await.unwrap();
        // Both connections read while their handlers wait, and the clients send nothing.
        crew::time::advance(STALL * 10).await;
        assert_eq!(connection_tasks(&pool), 2, "a connection whose handler is working was closed");
        control.release.send(()).await.unwrap();
        control.release.send(()).await.unwrap();
        assert_eq!(h1_request.await, "released");
        assert_eq!(h2_request.await, "released");
        drop(server);
    });
}

#[crew::test(thread_name = "idle")]
async fn an_idle_keep_alive_connection_is_closed_by_the_header_read_timeout_not_the_stall_timeout() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let (stall, idle) = (Duration::from_millis(50), Duration::from_millis(500));
        let serve = crew::http::serve(listener, app.service()).header_read_timeout(idle).stall_timeout(stall);
        let server = crew::spawn(serve.into_future());
        let (mut h1, h1_connection, _) = http1(addr).await;
        // Timers never fire early: a close before `idle` from here would be another timer's.
        let start = std::time::Instant::now();
        assert!(text(get1(&mut h1, "/").await).await.starts_with("idle-"));
        let _ = h1_connection.await;
        assert!(start.elapsed() >= idle, "closed after {:?}: not the header-read timeout ({idle:?})", start.elapsed());
        drop(server);
    })
    .await;
}

#[crew::test(thread_name = "gone")]
async fn a_client_that_hangs_up_while_its_handler_runs_has_the_handler_dropped() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        let mut client = TcpStream::connect(addr).await.unwrap();
        client.write_all(b"GET /hang HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
        control.entered.recv().await.unwrap();
        assert_eq!(control.live.load(Ordering::SeqCst), 1);
        drop(client);
        // The server sees the end of the stream with a request in flight, and drops its handler.
        until(|| control.live.load(Ordering::SeqCst) == 0).await;
        let (mut h1, _connection, _) = http1(addr).await;
        assert!(text(get1(&mut h1, "/").await).await.starts_with("gone-"), "the server goes on");
        drop(server);
    })
    .await;
}

#[crew::test(thread_name = "upload")]
async fn a_request_body_read_slowly_arrives_whole_and_in_order() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        // While the handler does not read, the connection's task reads ahead for a hang-up.
        let body: Vec<u8> = (0..4 << 20).map(|at: usize| (at % 251) as u8).collect();
        let expected = format!("{} {}", body.len(), digest(&body));
        let (mut h1, _connection, _) = http1(addr).await;
        h1.ready().await.unwrap();
        let request = Request::post("/digest").body(Full::new(Bytes::from(body))).unwrap();
        assert_eq!(text(h1.send_request(request).await).await, expected);
        drop(server);
    })
    .await;
}
