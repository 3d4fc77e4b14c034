//! The HTTP/1.1 side shared by `http_hello` (crew), `http_hello_tokio` and `http_hello_smol`: a
//! minimal request parser. Only the socket loop differs between the servers (the command line
//! is `cli.rs`).
//!
//! What it speaks: requests without a body (`Content-Length: 0` or none); keep-alive (the
//! HTTP/1.1 default) and pipelining (every complete request in a read is answered, the answers
//! sent in one write); `Connection: close` (answered, then the connection is closed). A request
//! with a body, or a head over 8 KiB, gets `400 Bad Request` and the connection is closed.

/// The answer to every request, as the benchmark brief fixes it.
const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, world!";
/// The same, for a request that asked to close the connection.
const HELLO_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, world!";
const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
/// The largest request head accepted.
const MAX_HEAD: usize = 8 * 1024;

/// One connection's unanswered bytes.
pub struct Conn {
    buf: Box<[u8]>,
    filled: usize,
}

impl Conn {
    pub fn new() -> Conn {
        // Room for a head of MAX_HEAD plus a full read behind it: `spare` is never empty,
        // because `answer` leaves at most MAX_HEAD unanswered bytes.
        Conn { buf: vec![0; 2 * MAX_HEAD].into_boxed_slice(), filled: 0 }
    }

    /// Where the next read goes.
    pub fn spare(&mut self) -> &mut [u8] {
        &mut self.buf[self.filled..]
    }

    /// Takes `n` freshly read bytes, appends the answers to every complete request to `out`,
    /// and says whether the connection must be closed once `out` is sent.
    pub fn answer(&mut self, n: usize, out: &mut Vec<u8>) -> bool {
        self.filled += n;
        let mut start = 0;
        let close = loop {
            match parse(&self.buf[start..self.filled]) {
                Parsed::Request { len, close } => {
                    out.extend_from_slice(if close { HELLO_CLOSE } else { HELLO });
                    start += len;
                    if close {
                        break true;
                    }
                }
                Parsed::Incomplete => break false,
                Parsed::Bad => {
                    out.extend_from_slice(BAD_REQUEST);
                    break true;
                }
            }
        };
        self.buf.copy_within(start..self.filled, 0);
        self.filled -= start;
        close
    }
}

enum Parsed {
    /// A complete request head of `len` bytes; `close`: the client asked to close after it.
    Request {
        len: usize,
        close: bool,
    },
    Incomplete,
    Bad,
}

fn parse(buf: &[u8]) -> Parsed {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD { Parsed::Bad } else { Parsed::Incomplete };
    };
    if end + 4 > MAX_HEAD {
        return Parsed::Bad;
    }
    let mut lines = buf[..end].split(|&b| b == b'\n').map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let request_line = lines.next().unwrap_or_default();
    let mut close = match request_line.rsplit(|&b| b == b' ').next() {
        Some(b"HTTP/1.1") => false,
        Some(b"HTTP/1.0") => true,
        _ => return Parsed::Bad,
    };
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Parsed::Bad;
        };
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                close = true;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                close = false;
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            if value != b"0" {
                return Parsed::Bad;
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Parsed::Bad;
        }
    }
    Parsed::Request { len: end + 4, close }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}
