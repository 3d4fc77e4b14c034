//! A stream's owned halves ([`OwnedReadHalf`], [`OwnedWriteHalf`]): one task reads while
//! another writes, each owning its half (`'static`), as tokio's `into_split`.
//!
//! Invariants: both halves share the one registered socket (an `Arc`), which is deregistered and
//! closed when the last half is dropped; the read half only reads, the write half only writes.
//! Dropping the write half shuts the write direction down (the peer reads the end of the
//! stream), as tokio's does; [`OwnedWriteHalf::reunite`] gives the stream back without it.

use std::fmt;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};

use super::stream::{Stream, StreamSocket};

impl<T: StreamSocket> Stream<T> {
    /// Splits the stream into a read half and a write half, each owned and `'static`.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let (a, mut b) = crew::net::UnixStream::pair().unwrap();
    /// let (mut read, mut write) = a.into_split();
    /// crew::block_on(async {
    ///     write.write_all(b"to b").await.unwrap();
    ///     let mut buf = [0; 4];
    ///     b.read_exact(&mut buf).await.unwrap();
    ///     b.write_all(b"to a").await.unwrap();
    ///     read.read_exact(&mut buf).await.unwrap();
    ///     assert_eq!(&buf, b"to a");
    /// });
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf<T>, OwnedWriteHalf<T>) {
        let stream = Arc::new(self);
        (OwnedReadHalf { stream: stream.clone() }, OwnedWriteHalf { stream: Some(stream) })
    }
}

/// The read half of a [`Stream`] ([`Stream::into_split`]).
///
/// # Examples
///
/// ```
/// let (a, _b) = crew::net::UnixStream::pair().unwrap();
/// let (read, _write): (crew::net::OwnedReadHalf<std::os::unix::net::UnixStream>, _) = a.into_split();
/// assert!(read.as_ref().peer_addr().is_ok());
/// ```
pub struct OwnedReadHalf<T: StreamSocket> {
    stream: Arc<Stream<T>>,
}

/// The write half of a [`Stream`] ([`Stream::into_split`]); dropping it shuts the write
/// direction down.
///
/// # Examples
///
/// ```
/// use crew::io::AsyncWriteExt;
///
/// let (a, _b) = crew::net::UnixStream::pair().unwrap();
/// let (_read, mut write) = a.into_split();
/// crew::block_on(write.write_all(b"x")).unwrap();
/// ```
pub struct OwnedWriteHalf<T: StreamSocket> {
    /// `None` once reunited.
    stream: Option<Arc<Stream<T>>>,
}

/// The stream both halves share, for its addresses and options.
impl<T: StreamSocket> AsRef<Stream<T>> for OwnedReadHalf<T> {
    fn as_ref(&self) -> &Stream<T> {
        &self.stream
    }
}

/// The stream both halves share, for its addresses and options.
impl<T: StreamSocket> AsRef<Stream<T>> for OwnedWriteHalf<T> {
    fn as_ref(&self) -> &Stream<T> {
        self.stream()
    }
}

impl<T: StreamSocket> OwnedReadHalf<T> {
    /// The stream again, from its two halves, without shutting the write direction down: as
    /// [`OwnedWriteHalf::reunite`], from this side.
    ///
    /// # Errors
    ///
    /// Both halves back, if they are not of the same stream.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixStream::pair().unwrap();
    /// let ((read, _), (_, other_write)) = (a.into_split(), b.into_split());
    /// // Halves of two streams: both come back.
    /// let (read, other_write) = read.reunite(other_write).unwrap_err();
    /// drop((read, other_write));
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn reunite(self, write: OwnedWriteHalf<T>) -> Result<Stream<T>, (OwnedReadHalf<T>, OwnedWriteHalf<T>)> {
        write.reunite(self)
    }
}

impl<T: StreamSocket> OwnedWriteHalf<T> {
    fn stream(&self) -> &Stream<T> {
        self.as_ref_arc()
    }

    /// The stream again, from its two halves, without shutting the write direction down.
    ///
    /// # Errors
    ///
    /// Both halves back, if they are not of the same stream.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// let (read, write) = a.into_split();
    /// let a = write.reunite(read).unwrap();
    /// assert!(a.peer_addr().is_ok());
    /// ```
    #[allow(clippy::result_large_err)]
    pub fn reunite(mut self, read: OwnedReadHalf<T>) -> Result<Stream<T>, (OwnedReadHalf<T>, OwnedWriteHalf<T>)> {
        if !Arc::ptr_eq(self.as_ref_arc(), &read.stream) {
            return Err((read, self));
        }
        let stream = self.stream.take().expect("a write half holds its stream until reunited");
        drop(read);
        Ok(Arc::into_inner(stream).expect("the two halves held the only references"))
    }

    fn as_ref_arc(&self) -> &Arc<Stream<T>> {
        self.stream.as_ref().expect("a write half holds its stream until reunited")
    }
}

impl<T: StreamSocket> Drop for OwnedWriteHalf<T> {
    fn drop(&mut self) {
        if let Some(stream) = &self.stream {
            // The peer may be gone already: nothing to shut down then.
            let _ = stream.shutdown(Shutdown::Write);
        }
    }
}

impl<T: StreamSocket> AsyncRead for OwnedReadHalf<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self.stream).poll_read(cx, buf)
    }

    fn poll_read_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self.stream).poll_read_vectored(cx, bufs)
    }
}

impl<T: StreamSocket> AsyncWrite for OwnedWriteHalf<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream()).poll_write(cx, buf)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream()).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream()).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream()).poll_close(cx)
    }
}

impl<T: StreamSocket + fmt::Debug> fmt::Debug for OwnedReadHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnedReadHalf").field(&*self.stream).finish()
    }
}

impl<T: StreamSocket + fmt::Debug> fmt::Debug for OwnedWriteHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnedWriteHalf").field(&self.stream).finish()
    }
}
