//! hyper's HTTP/1 "Hello, world!" server on crew: the server `benches/http/run` (with
//! `SET=hyper`) loads with wrk against the same hyper server on tokio (`hyper_hello_tokio`).
//! Both share the service and the connection settings (`shared/hyper_hello.rs`); only
//! the runtime differs, the comparison tokio's 2019 scheduler announcement made.
//!
//! ```sh
//! cargo run --release --features hyper --example hyper_hello -- 127.0.0.1:9000 --workers 2
//! ```
//!
//! `--workers N` sizes the global pool (else `CREW_WORKERS`, else one per CPU).

use std::time::Duration;

use crew::hyper::Io;
use crew::net::TcpListener;
use hyper::service::service_fn;

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/hyper_hello.rs"]
mod hyper_hello;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::Args::parse()?;
    let mut builder = crew::Builder::new();
    if let Some(workers) = args.workers {
        builder = builder.workers(workers);
    }
    builder.build_global()?;
    let listener = TcpListener::bind(args.addr)?;
    println!(
        "crew hyper_hello listening on http://{}/ (workers: {})",
        listener.get_ref().local_addr()?,
        args.workers.map_or_else(|| "default".to_owned(), |n| n.to_string()),
    );
    // The accept loop runs on a worker, like every connection (not on this thread).
    crew::block_on(crew::spawn(accept(listener)));
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
                crew::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        crew::spawn(async move {
            if let Err(e) = stream.get_ref().set_nodelay(true) {
                eprintln!("set_nodelay: {e}");
            }
            if let Err(e) =
                hyper_hello::http1().serve_connection(Io::vectored(stream), service_fn(hyper_hello::hello)).await
            {
                hyper_hello::report(&e);
            }
        })
        .detach();
    }
}
