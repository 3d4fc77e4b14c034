//! `http_hello` on async-executor, the way smol runs it (each executor thread inside
//! `async_io::block_on(executor.run(..))`, driving async-io's reactor whenever it idles), for
//! `benches/http/run`: the same sockets as crew's (async-io's `Async`) and the same parser
//! (`shared/proto.rs`), so it separates what crew's scheduler costs from what async-io's
//! reactor costs.
//!
//! ```sh
//! cargo run --release --example http_hello_smol -- 127.0.0.1:9000 --workers 2
//! ```

use std::io;
use std::net::TcpListener;
use std::time::Duration;

use async_executor::Executor;
use async_io::{Async, Timer};
use futures_lite::io::{AsyncReadExt, AsyncWriteExt};

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/proto.rs"]
mod proto;

static EXECUTOR: Executor<'static> = Executor::new();

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::Args::parse()?;
    let workers = args.workers.unwrap_or_else(num_cpus::get).max(1);
    let listener = Async::<TcpListener>::bind(args.addr)?;
    println!(
        "async-executor http_hello listening on http://{}/ (workers: {workers})",
        listener.get_ref().local_addr()?
    );
    // This thread is one of the `workers` executor threads; the accept loop is a task like the
    // connections, run by whichever thread picks it.
    for _ in 1..workers {
        std::thread::spawn(|| async_io::block_on(EXECUTOR.run(futures_lite::future::pending::<()>())));
    }
    Ok(async_io::block_on(EXECUTOR.run(EXECUTOR.spawn(accept(listener))))?)
}

/// Accepts connections forever, one task each.
async fn accept(listener: Async<TcpListener>) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // A peer that gave up, or no file descriptor left for a moment: keep serving.
                eprintln!("accept: {e}");
                Timer::after(Duration::from_millis(10)).await;
                continue;
            }
        };
        EXECUTOR
            .spawn(async move {
                if let Err(e) = serve(stream).await {
                    if !cli::is_hangup(&e) {
                        eprintln!("connection: {e}");
                    }
                }
            })
            .detach();
    }
}

async fn serve(mut stream: Async<std::net::TcpStream>) -> io::Result<()> {
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
