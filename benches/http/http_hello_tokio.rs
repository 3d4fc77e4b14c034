//! `http_hello` on tokio's multi-thread runtime, for `benches/http/run`: the same parser
//! (`shared/proto.rs`), the same socket loop, tokio's sockets and scheduler.
//!
//! ```sh
//! cargo run --release --example http_hello_tokio -- 127.0.0.1:9000 --workers 2
//! ```

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/proto.rs"]
mod proto;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::Args::parse()?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = args.workers {
        builder.worker_threads(workers);
    }
    let runtime = builder.enable_io().enable_time().build()?;
    let listener = runtime.block_on(TcpListener::bind(args.addr))?;
    println!(
        "tokio http_hello listening on http://{}/ (workers: {})",
        listener.local_addr()?,
        args.workers.map_or_else(|| "default".to_owned(), |n| n.to_string()),
    );
    // The accept loop runs on a worker, like every connection (not on this thread).
    Ok(runtime.block_on(runtime.spawn(accept(listener)))??)
}

/// Accepts connections forever, one task each.
async fn accept(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // A peer that gave up, or no file descriptor left for a moment: keep serving.
                eprintln!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            if let Err(e) = serve(stream).await {
                if !cli::is_hangup(&e) {
                    eprintln!("connection: {e}");
                }
            }
        });
    }
}

async fn serve(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
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
