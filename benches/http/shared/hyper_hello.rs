//! The hyper side shared by `hyper_hello` (crew) and `hyper_hello_tokio`: one service and one
//! connection configuration, so that only the runtime (its scheduler, reactor and sockets, and
//! the adapter hyper reads them through) differs between the two servers `benches/http/run`
//! loads. The adapters differ in one way: crew's `Io` reads into a buffer of its own and copies
//! into hyper's (hyper's buffer is uninitialised memory, which only `unsafe` code may fill, and
//! crew forbids `unsafe`), where tokio's `TokioIo` reads straight into hyper's buffer.

use std::convert::Infallible;
use std::error::Error as _;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::{Request, Response};

/// Answers every request with "Hello, world!" (13 bytes, as the hand-written servers do).
pub async fn hello(_: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(b"Hello, world!"))))
}

/// How both servers serve a connection: hyper's HTTP/1 defaults (keep-alive, pipelined
/// requests answered in order).
pub fn http1() -> http1::Builder {
    http1::Builder::new()
}

/// Reports a connection's error, unless it is only the client going away (wrk resets its
/// connections when it stops).
pub fn report(error: &hyper::Error) {
    let hangup = error.is_incomplete_message()
        || error.source().and_then(|source| source.downcast_ref::<std::io::Error>()).is_some_and(super::cli::is_hangup);
    if !hangup {
        eprintln!("connection: {error}");
    }
}
