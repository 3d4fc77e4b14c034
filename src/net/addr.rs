//! [`ToSocketAddrs`]: what [`TcpStream::connect`](super::TcpStream::connect) and
//! [`TcpListener::bind`](super::TcpListener::bind) take: what `std::net::ToSocketAddrs` takes
//! (`"example.org:80"`, `("localhost", 0)`, a `SocketAddr`, a slice of them), and the
//! `([127, 0, 0, 1], 0)` tuples that `SocketAddr: From` accepts.
//!
//! Invariants:
//! - An address that needs no name lookup (a `SocketAddr`, an IP and a port, a string that
//!   parses as one) is used as it is: no thread, no system call.
//! - A name is looked up off the workers: `connect` on the blocking pool (`spawn_blocking`),
//!   `bind`, which is not async, in `block_in_place` (on a worker, its queue goes to another
//!   thread first). The lookup is std's (`getaddrinfo`).
//! - Every address a lookup gives is tried in order, as std and async-net do: the first that
//!   connects (or binds) wins; if none does, the last error is returned, and a lookup that gives
//!   no address is an `InvalidInput` error naming the input.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// An address to connect or bind to, or a name and port to look up (see the module docs).
///
/// Sealed: implemented by crew for the types `std::net::ToSocketAddrs` is implemented for,
/// and for `([u8; 4], u16)`, `([u8; 16], u16)` and `([u16; 8], u16)`.
///
/// # Examples
///
/// ```
/// use crew::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind("localhost:0").unwrap();
/// let port = listener.get_ref().local_addr().unwrap().port();
/// crew::block_on(async {
///     let stream = TcpStream::connect(("localhost", port)).await.unwrap();
///     assert!(stream.get_ref().peer_addr().unwrap().ip().is_loopback());
/// });
/// ```
pub trait ToSocketAddrs: sealed::Sealed {}

impl<T: sealed::Sealed + ?Sized> ToSocketAddrs for T {}

pub(crate) use sealed::Addrs;

mod sealed {
    use super::*;

    /// What an input is, before any lookup.
    #[derive(Debug)]
    pub enum Addrs {
        /// Addresses to use as they are.
        Ready(Vec<SocketAddr>),
        /// A name and port to look up, as `host:port` (std's form).
        Lookup(String),
    }

    /// The one method behind [`ToSocketAddrs`]: unnameable outside crew.
    pub trait Sealed {
        /// What `self` is.
        fn addrs(&self) -> Addrs;
    }

    impl Sealed for SocketAddr {
        fn addrs(&self) -> Addrs {
            Addrs::Ready(vec![*self])
        }
    }

    macro_rules! into_socket_addr {
        ($($t:ty),*) => {$(
            impl Sealed for $t {
                fn addrs(&self) -> Addrs {
                    Addrs::Ready(vec![SocketAddr::from(*self)])
                }
            }
        )*};
    }
    into_socket_addr!(
        SocketAddrV4,
        SocketAddrV6,
        (IpAddr, u16),
        (Ipv4Addr, u16),
        (Ipv6Addr, u16),
        ([u8; 4], u16),
        ([u8; 16], u16),
        ([u16; 8], u16)
    );

    impl Sealed for str {
        fn addrs(&self) -> Addrs {
            match self.parse::<SocketAddr>() {
                Ok(addr) => Addrs::Ready(vec![addr]),
                Err(_) => Addrs::Lookup(self.to_owned()),
            }
        }
    }

    impl Sealed for String {
        fn addrs(&self) -> Addrs {
            self.as_str().addrs()
        }
    }

    impl Sealed for (&str, u16) {
        fn addrs(&self) -> Addrs {
            match self.0.parse::<IpAddr>() {
                Ok(ip) => Addrs::Ready(vec![SocketAddr::new(ip, self.1)]),
                Err(_) => Addrs::Lookup(format!("{}:{}", self.0, self.1)),
            }
        }
    }

    impl Sealed for (String, u16) {
        fn addrs(&self) -> Addrs {
            (self.0.as_str(), self.1).addrs()
        }
    }

    impl Sealed for [SocketAddr] {
        fn addrs(&self) -> Addrs {
            Addrs::Ready(self.to_vec())
        }
    }

    impl<T: Sealed + ?Sized> Sealed for &T {
        fn addrs(&self) -> Addrs {
            (**self).addrs()
        }
    }
}

/// Looks `host_port` up with std's resolver (blocking): every address it gives.
fn look_up(host_port: &str) -> io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(host_port)?.collect();
    if addrs.is_empty() {
        return Err(no_address(host_port));
    }
    Ok(addrs)
}

fn no_address(input: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{input:?} resolves to no address"))
}

/// The addresses of `addrs`, looked up on the blocking pool if it is a name.
pub(crate) async fn resolve(addrs: Addrs) -> io::Result<Vec<SocketAddr>> {
    match addrs {
        Addrs::Ready(addrs) if addrs.is_empty() => Err(no_address("an empty list of addresses")),
        Addrs::Ready(addrs) => Ok(addrs),
        Addrs::Lookup(host_port) => crate::spawn_blocking(move || look_up(&host_port)).await,
    }
}

/// The addresses of `addrs`, looked up in `block_in_place` if it is a name.
pub(crate) fn resolve_blocking(addrs: Addrs) -> io::Result<Vec<SocketAddr>> {
    match addrs {
        Addrs::Ready(addrs) if addrs.is_empty() => Err(no_address("an empty list of addresses")),
        Addrs::Ready(addrs) => Ok(addrs),
        Addrs::Lookup(host_port) => crate::block_in_place(|| look_up(&host_port)),
    }
}

/// Tries `attempt` on each address in order: the first success, else the last error.
pub(crate) fn first_that_works<T>(
    addrs: Vec<SocketAddr>,
    mut attempt: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last = None;
    for addr in addrs {
        match attempt(addr) {
            Ok(done) => return Ok(done),
            Err(err) => last = Some(err),
        }
    }
    Err(last.expect("resolve gives at least one address"))
}
