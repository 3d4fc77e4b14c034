//! The command line and error triage shared by the benchmark servers (`http_hello*` and
//! `hyper_hello*`): `[ADDR] [--workers N]`.

use std::io;
use std::net::SocketAddr;

/// The command line: `[ADDR] [--workers N]`.
pub struct Args {
    pub addr: SocketAddr,
    pub workers: Option<usize>,
}

impl Args {
    pub fn parse() -> io::Result<Args> {
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
        let mut args = Args { addr: ([127, 0, 0, 1], 8080).into(), workers: None };
        let mut argv = std::env::args().skip(1);
        while let Some(arg) = argv.next() {
            match arg.as_str() {
                "--workers" => {
                    let n = argv.next().unwrap_or_default();
                    args.workers = Some(n.parse().map_err(|_| bad(format!("--workers {n:?}: not a number")))?);
                }
                addr => args.addr = addr.parse().map_err(|e| bad(format!("bad address {addr:?}: {e}")))?,
            }
        }
        Ok(args)
    }
}

/// Whether a connection's error is just the client going away (wrk resets its connections when
/// it stops), which the servers do not report.
pub fn is_hangup(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe)
}
