//! Async I/O: futures-io's traits and futures-lite's helpers for [`net`](crate::net)'s sockets
//! (`AsyncReadExt`, `AsyncWriteExt`, `AsyncBufReadExt`, `BufReader`, `copy`, ...), re-exported,
//! and [`AsyncFd`], which puts a file descriptor of your own (inotify, a serial port, a device, a
//! pipe) on crew's I/O driver.
//!
//! # Examples
//!
//! ```
//! use crew::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let (mut a, mut b) = crew::net::UnixStream::pair().unwrap();
//! crew::block_on(async {
//!     a.write_all(b"ok").await.unwrap();
//!     let mut got = String::new();
//!     drop(a);
//!     b.read_to_string(&mut got).await.unwrap();
//!     assert_eq!(got, "ok");
//! });
//! ```

mod async_fd;

pub use async_fd::{AsyncFd, AsyncFdReadyGuard, TryIoError};
pub use futures_lite::io::*;
