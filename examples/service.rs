//! A small HTTP service on `crew::http::serve`: a few routes, text and JSON answers, and a
//! graceful shutdown on Ctrl-C or `SIGTERM` that finishes the requests in flight.
//!
//! ```sh
//! cargo run --example service --features http,signal   # 127.0.0.1:3000, or the address given
//! curl 127.0.0.1:3000/hello/ada    # hello, ada
//! curl 127.0.0.1:3000/stats        # the global pool's metrics, as JSON
//! curl 127.0.0.1:3000/slow &       # answers after 2 s: press Ctrl-C meanwhile, it still answers
//! ```
//!
//! The same serve with an axum `Router`: `ecosystem/examples/services.rs`.

use std::convert::Infallible;
use std::future::IntoFuture;
use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures_lite::future;
use http_body_util::Full;
use hyper::header::CONTENT_TYPE;
use hyper::{body::Incoming, Method, Request, Response, StatusCode};

fn main() -> io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let listener = crew::net::TcpListener::bind(addr)?;
    println!("listening on http://{}", listener.local_addr()?);

    // Listening starts at the call, so a signal sent from now on is never missed.
    let (ctrl_c, terminate) = (crew::signal::ctrl_c(), crew::signal::signal(crew::signal::Signal::Term));
    let shutdown = async move {
        if let Err(error) = future::or(ctrl_c, terminate).await {
            eprintln!("cannot listen for signals ({error}): serving until killed");
            future::pending::<()>().await;
        }
        println!("shutting down: no new connections; finishing the requests in flight");
    };

    // Every connection is a crew task on the global pool (the serve runs on no pool's thread).
    let server = crew::http::serve(listener, tower::service_fn(route)).with_graceful_shutdown(shutdown);
    crew::block_on(server.into_future())?;
    println!("stopped");
    Ok(())
}

/// One request: its answer, by method and path.
async fn route(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path();
    Ok(match (request.method(), path) {
        (&Method::GET, "/") => text(StatusCode::OK, "try /hello/<name>, /stats or /slow\n".into()),
        (&Method::GET, _) if path.starts_with("/hello/") => {
            text(StatusCode::OK, format!("hello, {}\n", &path["/hello/".len()..]))
        }
        (&Method::GET, "/stats") => {
            let metrics = crew::metrics();
            let body = format!(
                "{{\"workers\":{},\"live_tasks\":{},\"polls\":{}}}\n",
                metrics.workers.len(),
                metrics.live_tasks,
                metrics.total.polls
            );
            let mut response = text(StatusCode::OK, body);
            response.headers_mut().insert(CONTENT_TYPE, "application/json".parse().unwrap());
            response
        }
        (&Method::GET, "/slow") => {
            crew::time::sleep(Duration::from_secs(2)).await;
            text(StatusCode::OK, "slow, but answered\n".into())
        }
        _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
    })
}

/// A plain-text response.
fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, "text/plain; charset=utf-8".parse().unwrap());
    response
}
