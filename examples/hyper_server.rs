//! A hyper server on crew speaking HTTP/1.1 and HTTP/2 on one port (hyper-util's `auto`
//! builder tells them apart by the HTTP/2 preface): `GET /` says hello and names the protocol
//! and the worker, `POST /echo` streams the request's body back as it arrives.
//!
//! ```sh
//! cargo run --features hyper --example hyper_server                   # on 127.0.0.1:3000
//! cargo run --features hyper --example hyper_client                   # in another terminal
//! curl http://127.0.0.1:3000/ ; curl --http2-prior-knowledge http://127.0.0.1:3000/
//! ```
//!
//! crew provides what hyper asks of a runtime (`crew::hyper`): `Executor` spawns HTTP/2's
//! stream tasks on crew, `Timer` runs hyper's timeouts on crew's timers, and `Io` lets hyper
//! read and write crew's sockets.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use crew::hyper::{Executor, Io, Timer};
use crew::net::TcpListener;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::server::conn::auto;

#[crew::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        Some(addr) => addr.parse().map_err(|e| format!("bad address {addr:?}: {e} (expected e.g. 127.0.0.1:3000)"))?,
        None => ([127, 0, 0, 1], 3000).into(),
    };
    let listener = TcpListener::bind(addr)?;
    println!("hyper on crew listening on http://{}/ (HTTP/1.1 and HTTP/2)", listener.get_ref().local_addr()?);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("accept: {e}");
                crew::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // One task per connection; HTTP/2's streams each get a task of their own (Executor).
        crew::spawn(async move {
            let mut builder = auto::Builder::new(Executor);
            builder.http1().timer(Timer).header_read_timeout(Duration::from_secs(10));
            builder.http2().timer(Timer).keep_alive_interval(Duration::from_secs(30));
            if let Err(e) = builder.serve_connection(Io::vectored(stream), service_fn(route)).await {
                eprintln!("connection from {peer}: {e}");
            }
        })
        .detach();
    }
}

type Body = BoxBody<Bytes, hyper::Error>;

async fn route(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let response = match (request.method(), request.uri().path()) {
        (&Method::GET, "/") => {
            let thread = std::thread::current().name().unwrap_or("<unnamed>").to_owned();
            let text = format!("Hello from crew over {:?}, served on {thread}\n", request.version());
            Response::new(full(text))
        }
        // The body goes back frame by frame as it comes in: neither side is buffered whole.
        (&Method::POST, "/echo") => Response::new(request.into_body().boxed()),
        _ => {
            let mut response = Response::new(full("not found: try GET / or POST /echo\n".to_owned()));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    };
    Ok(response)
}

fn full(text: String) -> Body {
    Full::new(Bytes::from(text)).map_err(|never| match never {}).boxed()
}
