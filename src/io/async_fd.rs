//! [`AsyncFd`]: a file descriptor of the user's own on crew's driver (tokio's shape).
//!
//! Invariants:
//! - The fd is registered for both directions from [`AsyncFd::new`] until the `AsyncFd` is
//!   dropped or [`into_inner`](AsyncFd::into_inner) gives it back, and is deregistered before its
//!   owner is dropped (which closes it): `AsyncFd` owns it for that reason, since an fd closed
//!   behind the driver's back would leave epoll's set silently (`driver/source.rs`).
//! - A guard ([`AsyncFdReadyGuard`]) carries the readiness its wait saw, with its tick:
//!   [`clear_ready`](AsyncFdReadyGuard::clear_ready) (or a [`try_io`](AsyncFdReadyGuard::try_io)
//!   whose call says `WouldBlock`) clears exactly that, so an edge that came after is kept.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use crate::driver::{Direction, IoSource, ReadyEvent};

/// A file descriptor of your own, owned, on crew's I/O driver: wait until it is readable or
/// writable, then make the non-blocking call yourself.
///
/// The fd must be in non-blocking mode (`O_NONBLOCK`): a call that would block must return
/// `WouldBlock`, or it blocks a worker.
///
/// # Examples
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
///
/// use crew::io::AsyncFd;
///
/// let (mut writer, reader) = UnixStream::pair().unwrap();
/// reader.set_nonblocking(true).unwrap();
/// let reader = AsyncFd::new(reader).unwrap();
/// writer.write_all(b"hi").unwrap();
/// let got = crew::block_on(async {
///     loop {
///         let mut guard = reader.readable().await.unwrap();
///         let mut buf = [0; 2];
///         match guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
///             Ok(result) => break buf[..result.unwrap()].to_vec(),
///             Err(_would_block) => continue,
///         }
///     }
/// });
/// assert_eq!(got, b"hi");
/// ```
pub struct AsyncFd<T: AsFd> {
    source: IoSource<T>,
}

impl<T: AsFd> AsyncFd<T> {
    /// Registers `inner`'s fd with crew's driver, for both directions.
    ///
    /// # Errors
    ///
    /// The kernel's, if it refuses the registration: `EPERM` for an fd epoll cannot watch (a
    /// regular file), `EEXIST` for one registered already, `EMFILE`, `ENOMEM`. `inner` is dropped
    /// then.
    ///
    /// # Examples
    ///
    /// ```
    /// // A regular file cannot be watched on Linux: epoll refuses it (kqueue accepts it).
    /// let file = std::fs::File::open("Cargo.toml").unwrap();
    /// let made = crew::io::AsyncFd::new(file);
    /// if cfg!(any(target_os = "linux", target_os = "android")) {
    ///     assert!(made.is_err());
    /// }
    /// ```
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        Ok(AsyncFd { source: IoSource::new(inner)? })
    }

    /// The owner of the fd.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let fd = crew::io::AsyncFd::new(a).unwrap();
    /// assert!(fd.get_ref().peer_addr().is_ok());
    /// ```
    pub fn get_ref(&self) -> &T {
        self.source.get_ref()
    }

    /// The owner of the fd, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let mut fd = crew::io::AsyncFd::new(a).unwrap();
    /// fd.get_mut().set_nonblocking(true).unwrap();
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        self.source.get_mut()
    }

    /// Deregisters the fd and gives its owner back (the fd stays open).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let a = crew::io::AsyncFd::new(a).unwrap().into_inner();
    /// assert!(a.peer_addr().is_ok());
    /// ```
    pub fn into_inner(self) -> T {
        self.source.into_inner()
    }

    /// Waits until the fd may be readable: the guard says so until it is cleared.
    ///
    /// # Errors
    ///
    /// If the fd was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    ///
    /// let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let b = crew::io::AsyncFd::new(b).unwrap();
    /// a.write_all(b"x").unwrap();
    /// crew::block_on(b.readable()).unwrap();
    /// ```
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.source.ready(Direction::Read).await?;
        Ok(AsyncFdReadyGuard { fd: self, event: Some(event) })
    }

    /// Waits until the fd may be writable.
    ///
    /// # Errors
    ///
    /// If the fd was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let a = crew::io::AsyncFd::new(a).unwrap();
    /// crew::block_on(a.writable()).unwrap();
    /// ```
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.source.ready(Direction::Write).await?;
        Ok(AsyncFdReadyGuard { fd: self, event: Some(event) })
    }
}

/// The readiness an [`AsyncFd`]'s wait saw: make the call, and clear the readiness when the
/// call says `WouldBlock` (or let [`try_io`](AsyncFdReadyGuard::try_io) do both).
///
/// # Examples
///
/// ```
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let a = crew::io::AsyncFd::new(a).unwrap();
/// crew::block_on(async {
///     let mut guard = a.writable().await.unwrap();
///     guard.clear_ready();
/// });
/// ```
#[must_use = "a guard says the fd may be ready: make the call, or clear it"]
pub struct AsyncFdReadyGuard<'a, T: AsFd> {
    fd: &'a AsyncFd<T>,
    /// `None` once cleared.
    event: Option<ReadyEvent>,
}

impl<'a, T: AsFd> AsyncFdReadyGuard<'a, T> {
    /// Clears the readiness this guard saw (not an edge that came since): the next wait waits
    /// for the next edge.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    ///
    /// let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// b.set_nonblocking(true).unwrap();
    /// let b = crew::io::AsyncFd::new(b).unwrap();
    /// a.write_all(b"x").unwrap();
    /// crew::block_on(async { b.readable().await.unwrap().clear_ready() });
    /// ```
    pub fn clear_ready(&mut self) {
        if let Some(event) = self.event.take() {
            self.fd.source.clear(event);
        }
    }

    /// Runs `call`; if it says `WouldBlock`, clears the readiness and gives `Err(TryIoError)`
    /// (wait again), else its result.
    ///
    /// # Errors
    ///
    /// [`TryIoError`] when `call` returned `WouldBlock`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Read;
    ///
    /// let (_a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// b.set_nonblocking(true).unwrap();
    /// let b = crew::io::AsyncFd::new(b).unwrap();
    /// crew::block_on(async {
    ///     // A new source starts ready: the first read tries, and says `WouldBlock`.
    ///     let mut guard = b.readable().await.unwrap();
    ///     assert!(guard.try_io(|fd| fd.get_ref().read(&mut [0; 1])).is_err());
    /// });
    /// ```
    pub fn try_io<R>(&mut self, call: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>) -> Result<io::Result<R>, TryIoError> {
        match call(self.fd) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The [`AsyncFd`] this guard is of.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let a = crew::io::AsyncFd::new(a).unwrap();
    /// crew::block_on(async {
    ///     let guard = a.writable().await.unwrap();
    ///     assert!(guard.get_ref().get_ref().peer_addr().is_ok());
    /// });
    /// ```
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.fd
    }
}

/// What [`AsyncFdReadyGuard::try_io`] gives when the call said `WouldBlock`: its readiness was
/// cleared, wait again.
///
/// # Examples
///
/// ```
/// let error: crew::io::TryIoError = {
///     let (_a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     b.set_nonblocking(true).unwrap();
///     let b = crew::io::AsyncFd::new(b).unwrap();
///     crew::block_on(async {
///         let mut guard = b.readable().await.unwrap();
///         guard.try_io(|fd| std::io::Read::read(&mut fd.get_ref(), &mut [0; 1])).unwrap_err()
///     })
/// };
/// assert_eq!(error.to_string(), "the call would block: wait for readiness again");
/// ```
#[derive(Debug)]
pub struct TryIoError(());

impl fmt::Display for TryIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call would block: wait for readiness again")
    }
}

impl std::error::Error for TryIoError {}

impl<T: AsFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<T: AsFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

impl<T: AsFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd").field("inner", self.get_ref()).finish()
    }
}

impl<T: AsFd> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard").field("ready", &self.event.map(|event| event.ready)).finish()
    }
}
