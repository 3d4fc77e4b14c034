//! A TCP echo server on crew: one task per connection, each connection's error handled (and
//! printed) on its own, so one bad peer never stops the server.
//!
//! ```sh
//! cargo run --release --example echo_server               # listens on 127.0.0.1:7878
//! cargo run --release --example echo_server 0.0.0.0:9000  # or on the address given
//! ```
//!
//! Try it with `nc 127.0.0.1 7878`. A connection that sends nothing for 60 seconds is closed
//! (`crew::time::timeout` around each read).
//!
//! `tests/net.rs` runs this file's [`serve`] (on port 0) against 100 concurrent clients, a peer
//! that resets mid-write and a peer that never sends.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream};

/// How long a connection may stay silent before the server closes it.
const IDLE: Duration = Duration::from_secs(60);

fn main() -> io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:7878".to_owned());
    let listener = TcpListener::bind(
        addr.parse::<SocketAddr>()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad address {addr:?}: {e}")))?,
    )?;
    println!("echo server listening on {}", listener.get_ref().local_addr()?);
    crew::block_on(crew::spawn(serve(listener, IDLE, |peer, result| match result {
        Ok(bytes) => println!("{peer}: closed after echoing {bytes} bytes"),
        Err(e) => eprintln!("{peer}: {e}"),
    })))
}

/// Accepts connections forever, echoing each one in its own task. `done` is called with the
/// peer's address and the connection's outcome (bytes echoed, or the error that ended it).
/// Returns only if accepting fails with an error that is not about one connection.
pub async fn serve<F>(listener: TcpListener, idle: Duration, done: F) -> io::Result<()>
where
    F: Fn(SocketAddr, io::Result<u64>) + Send + Sync + 'static,
{
    let done = Arc::new(done);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // The peer gave up before we accepted it, or we are out of file descriptors for a
            // moment: not a reason to stop serving everyone else.
            Err(e) if is_transient(&e) => {
                eprintln!("accept: {e}");
                crew::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let done = done.clone();
        crew::spawn(async move { done(peer, echo(stream, idle).await) }).detach();
    }
}

/// Echoes everything `stream` sends until it closes its side; fails with
/// `ErrorKind::TimedOut` if it stays silent for `idle`.
pub async fn echo(mut stream: TcpStream, idle: Duration) -> io::Result<u64> {
    let mut buf = vec![0; 64 * 1024];
    let mut total = 0;
    loop {
        let n = match crew::time::timeout(idle, stream.read(&mut buf)).await {
            Ok(read) => read?,
            Err(_) => return Err(io::Error::new(io::ErrorKind::TimedOut, "idle connection closed")),
        };
        if n == 0 {
            return Ok(total);
        }
        stream.write_all(&buf[..n]).await?;
        total += n as u64;
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted)
        || matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}
