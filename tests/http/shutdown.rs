//! Issue 70, item 5: graceful shutdown against an HTTP/2 peer that never answers, and what the
//! bound on that wait must leave alone: requests in flight, and responses still being written.
//! On a paused clock (the serve's timers jump; the sockets stay real), with no header-read or
//! stall timeout, so that the only timers are the ones under test.

use super::*;

/// HTTP/2's connection preface.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A SETTINGS frame with no settings: length 0, type 4, no flags, stream 0.
const EMPTY_SETTINGS: [u8; 9] = [0, 0, 0, 4, 0, 0, 0, 0, 0];

/// Frame types and the ACK flag.
const SETTINGS: u8 = 4;
const GOAWAY: u8 = 7;
const ACK: u8 = 1;

/// The next frame from `peer`: its type, flags and payload.
async fn read_frame(peer: &mut TcpStream) -> std::io::Result<(u8, u8, Vec<u8>)> {
    let mut head = [0; 9];
    peer.read_exact(&mut head).await?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0; len];
    peer.read_exact(&mut payload).await?;
    Ok((head[3], head[4], payload))
}

/// A server with a shutdown switch, no header-read timeout and no stall timeout.
fn server_with_switch(listener: TcpListener, app: App) -> (crew::JoinHandle<std::io::Result<()>>, impl FnOnce()) {
    let (stop, stopped) = futures::channel::oneshot::channel::<()>();
    let serve = crew::http::serve(listener, app.service()).header_read_timeout(None).stall_timeout(None);
    let serve = serve.with_graceful_shutdown(async move {
        stopped.await.ok();
    });
    (crew::spawn(serve.into_future()), move || stop.send(()).unwrap())
}

#[test]
fn a_silent_http2_peer_is_closed_1_s_after_the_goaway_and_the_serve_resolves_then() {
    on_a_paused_pool("silent", |_| async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let (server, stop) = server_with_switch(listener, app);
        let mut peer = TcpStream::connect(addr).await.unwrap();
        peer.write_all(&[PREFACE, &EMPTY_SETTINGS].concat()).await.unwrap();
        // The server acknowledges our SETTINGS once it has read them; then the peer falls silent.
        while read_frame(&mut peer).await.map(|(kind, flags, _)| (kind, flags)).unwrap() != (SETTINGS, ACK) {}
        stop();
        let signalled = crew::time::now();
        let ended = crew::time::timeout(Duration::from_secs(45), server).await;
        assert!(ended.is_ok(), "the serve still ran 45 s after its signal");
        ended.unwrap().unwrap();
        assert_eq!(crew::time::now() - signalled, Duration::from_secs(1), "the connection closed 1 s after the GOAWAY");
        let mut frames = Vec::new();
        while let Ok((kind, _, _)) = read_frame(&mut peer).await {
            frames.push(kind);
        }
        assert!(frames.contains(&GOAWAY), "the peer got a GOAWAY, then the end of the stream: {frames:?}");
    });
}

/// Larger than hyper's client's HTTP/2 stream window (2 MiB): the rest waits in the server's h2
/// buffers, past the end of the response body, until the client reads.
const H2_BIG: usize = 4 << 20;

/// Larger than loopback's socket buffers: the rest waits in hyper's write buffer.
const H1_BIG: usize = 32 << 20;

#[test]
fn after_the_goaway_requests_in_flight_and_responses_still_being_written_keep_their_connection() {
    on_a_paused_pool("unhurried", |pool| async move {
        let (listener, addr) = listener();
        let (app, control) = app();
        let (server, stop) = server_with_switch(listener, app);
        let (mut waits, _waits_connection, _) = http2(addr).await;
        let waiting = crew::spawn(async move { text(get2(&mut waits, "/wait").await).await });
        control.entered.recv().await.unwrap();
        // Each response's body has ended (hyper took all of it), and each is read only in part.
        let (mut h2, h2_connection, _) = http2(addr).await;
        let (_, h2_body) = first_frame(get2(&mut h2, &format!("/big/{H2_BIG}")).await).await;
        let (mut h1, _h1_connection, _) = http1(addr).await;
        let (h1_first, h1_body) = first_frame(get1(&mut h1, &format!("/big/{H1_BIG}")).await).await;
        assert_eq!(connection_tasks(&pool), 3);

        stop();
        // Well past 1 s after the GOAWAY, with nothing read: the timers have fired, and the
        // tasks they woke have run.
        crew::time::advance(Duration::from_secs(5)).await;
        assert_eq!(connection_tasks(&pool), 3, "a connection was closed with a request in flight");
        control.release.send(()).await.unwrap();
        assert_eq!(waiting.await, "released");
        let rest = h1_body.collect().await.expect("the rest of the HTTP/1 response").to_bytes().len();
        assert_eq!(h1_first + rest, H1_BIG, "the HTTP/1 response, whole");
        // The HTTP/2 client goes away unread; its connection ends with an error on the server.
        drop((h2, h2_body));
        h2_connection.cancel().await;
        server.await.unwrap();
    });
}
