//! `hyper_hello` on tokio's multi-thread runtime, for `benches/http/run` (`SET=hyper`): the same
//! hyper service and connection settings (`shared/hyper_hello.rs`), tokio's sockets
//! (through hyper-util's `TokioIo`) and scheduler.
//!
//! ```sh
//! cargo run --release --features hyper --example hyper_hello_tokio -- 127.0.0.1:9000 --workers 2
//! ```

use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/hyper_hello.rs"]
mod hyper_hello;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::Args::parse()?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = args.workers {
        builder.worker_threads(workers);
    }
    let runtime = builder.enable_io().enable_time().build()?;
    let listener = runtime.block_on(TcpListener::bind(args.addr))?;
    println!(
        "tokio hyper_hello listening on http://{}/ (workers: {})",
        listener.local_addr()?,
        args.workers.map_or_else(|| "default".to_owned(), |n| n.to_string()),
    );
    // The accept loop runs on a worker, like every connection (not on this thread).
    runtime.block_on(runtime.spawn(accept(listener)))?;
    Ok(())
}

/// Accepts connections forever, one task each.
async fn accept(listener: TcpListener) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // A peer that gave up, or no file descriptor left for a moment: keep serving.
                eprintln!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            if let Err(e) = stream.set_nodelay(true) {
                eprintln!("set_nodelay: {e}");
            }
            if let Err(e) =
                hyper_hello::http1().serve_connection(TokioIo::new(stream), service_fn(hyper_hello::hello)).await
            {
                hyper_hello::report(&e);
            }
        });
    }
}
