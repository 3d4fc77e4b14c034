//! An HTTP/1.1 "Hello, world!" server on crew, with keep-alive and pipelining: the server
//! `benches/http/run` loads with wrk against the same server on tokio (`http_hello_tokio`).
//!
//! ```sh
//! cargo run --release --example http_hello                          # http://127.0.0.1:8080/
//! cargo run --release --example http_hello -- 127.0.0.1:9000 --workers 2
//! ```
//!
//! `--workers N` sizes the global pool (else `CREW_WORKERS`, else one per CPU).
//!
//! Why a hand-written parser: the point of this server is to compare executors, so all servers
//! share one parser (`shared/proto.rs`) and differ only in their socket loop, on
//! async-executor too. The same comparison with hyper's server on crew and on tokio is
//! `hyper_hello` / `hyper_hello_tokio` (`SET=hyper benches/http/run`). The parser handles what
//! wrk sends: bodiless requests, keep-alive, pipelining, `Connection: close`.

use std::io;
use std::time::Duration;

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream};

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/proto.rs"]
mod proto;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::Args::parse()?;
    let mut builder = crew::Builder::new();
    if let Some(workers) = args.workers {
        builder = builder.workers(workers);
    }
    builder.build_global()?;
    let listener = TcpListener::bind(args.addr)?;
    println!(
        "crew http_hello listening on http://{}/ (workers: {})",
        listener.get_ref().local_addr()?,
        args.workers.map_or_else(|| "default".to_owned(), |n| n.to_string()),
    );
    // The accept loop runs on a worker, like every connection (not on this thread).
    Ok(crew::block_on(crew::spawn(accept(listener)))?)
}

/// Accepts connections forever, one task each.
async fn accept(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // A peer that gave up, or no file descriptor left for a moment: keep serving.
                eprintln!("accept: {e}");
                crew::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        crew::spawn(async move {
            if let Err(e) = serve(stream).await {
                if !cli::is_hangup(&e) {
                    eprintln!("connection: {e}");
                }
            }
        })
        .detach();
    }
}

async fn serve(mut stream: TcpStream) -> io::Result<()> {
    stream.get_ref().set_nodelay(true)?;
    let mut conn = proto::Conn::new();
    let mut out = Vec::new();
    loop {
        let n = stream.read(conn.spare()).await?;
        if n == 0 {
            return Ok(());
        }
        let close = conn.answer(n, &mut out);
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if close {
            return Ok(());
        }
    }
}
