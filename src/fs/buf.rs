//! The buffers a [`File`](super::File) moves between its task and its blocking jobs: bytes read
//! ahead and not yet given to the reader, or bytes written behind and not yet written.
//!
//! Invariants:
//! - `data[start..end]` holds the bytes not yet consumed (read, or written to the file).
//! - Every byte of `data` was initialised once: a read job reads into `data` without zeroing it
//!   again, and `data.len()` is the allocation, reused from one job to the next.
//! - A buffer never grows past [`MAX_BUF`].

use std::io::{self, Read, Seek, SeekFrom};

/// The most bytes one blocking job reads or writes: a larger read returns fewer bytes, a larger
/// write accepts fewer (tokio's limit too).
pub(crate) const MAX_BUF: usize = 2 * 1024 * 1024;

/// Read-ahead bytes or write-behind bytes, between the file's task and its jobs.
#[derive(Debug, Default)]
pub(crate) struct Buf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl Buf {
    /// The bytes not consumed yet.
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether every byte was consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The bytes not consumed yet.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    /// Consumes `n` bytes (at most [`len`](Buf::len)).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Copies unread bytes into `dst`, as many as fit; returns how many.
    pub(crate) fn copy_to(&mut self, dst: &mut [u8]) -> usize {
        let n = self.len().min(dst.len());
        dst[..n].copy_from_slice(&self.data[self.start..self.start + n]);
        self.start += n;
        n
    }

    /// Drops the unread bytes; returns how many there were (how far the file's cursor is ahead
    /// of its reader).
    pub(crate) fn discard(&mut self) -> usize {
        let unread = self.len();
        self.start = 0;
        self.end = 0;
        unread
    }

    /// Appends as many bytes of `src` as fit under `max` bytes in all; returns how many.
    pub(crate) fn append(&mut self, src: &[u8], max: usize) -> usize {
        if self.is_empty() {
            self.start = 0;
            self.end = 0;
        }
        let n = src.len().min(max.saturating_sub(self.len()));
        let end = self.end + n;
        if self.data.len() < end {
            // Doubling, as a `Vec` grows: an 8 KiB writer fills 2 MiB in eight allocations.
            let grown = end.max(self.data.len() * 2).min(self.start + max);
            self.data.resize(grown, 0);
        }
        self.data[self.end..end].copy_from_slice(&src[..n]);
        self.end = end;
        n
    }

    /// In a blocking job: reads up to `want` bytes (at most [`MAX_BUF`]) from `file` into the
    /// empty buffer, retrying an interrupted read; returns how many (0 at the end of the file).
    pub(crate) fn read_from(&mut self, mut file: impl Read, want: usize) -> io::Result<usize> {
        debug_assert!(self.is_empty(), "a read buffer starts empty");
        let want = want.min(MAX_BUF);
        if self.data.len() < want {
            self.data.resize(want, 0);
        }
        self.start = 0;
        self.end = 0;
        loop {
            match file.read(&mut self.data[..want]) {
                Ok(n) => {
                    self.end = n;
                    return Ok(n);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }
}

/// Moves `file`'s cursor back by `unread` bytes (read ahead, never seen by the reader).
pub(crate) fn seek_back_by(mut file: impl Seek, unread: usize) -> io::Result<()> {
    if unread > 0 {
        // At most twice `MAX_BUF` bytes: the cast cannot wrap.
        file.seek(SeekFrom::Current(-(unread as i64)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    #[test]
    fn a_read_fills_up_to_the_request_and_the_reader_takes_it_in_pieces() {
        let mut buf = Buf::default();
        let mut source = Cursor::new((0..10u8).collect::<Vec<_>>());
        assert_eq!(buf.read_from(&mut source, 6).unwrap(), 6);
        let mut dst = [0; 4];
        assert_eq!(buf.copy_to(&mut dst), 4);
        assert_eq!(dst, [0, 1, 2, 3]);
        assert_eq!(buf.bytes(), &[4, 5]);
        assert_eq!(buf.copy_to(&mut dst), 2);
        assert!(buf.is_empty());
        assert_eq!(buf.read_from(&mut source, 6).unwrap(), 4);
        assert_eq!(buf.bytes(), &[6, 7, 8, 9]);
        buf.discard();
        assert_eq!(buf.read_from(&mut source, 6).unwrap(), 0);
    }

    #[test]
    fn appends_take_what_fits_under_the_limit() {
        let mut buf = Buf::default();
        assert_eq!(buf.append(b"abc", 5), 3);
        assert_eq!(buf.append(b"defg", 5), 2);
        assert_eq!(buf.bytes(), b"abcde");
        assert_eq!(buf.append(b"x", 5), 0);
        buf.consume(5);
        assert_eq!(buf.append(b"xyz", 5), 3, "an emptied buffer starts over");
        assert_eq!(buf.bytes(), b"xyz");
    }

    #[test]
    fn a_write_takes_at_most_max_buf_bytes() {
        let mut buf = Buf::default();
        let big = vec![7u8; MAX_BUF + 10];
        assert_eq!(buf.append(&big, MAX_BUF), MAX_BUF);
        assert_eq!(buf.len(), MAX_BUF);
        assert!(buf.data.len() <= MAX_BUF);
    }

    #[test]
    fn a_read_asks_for_at_most_max_buf_bytes() {
        let mut buf = Buf::default();
        let mut source = Cursor::new(vec![1u8; MAX_BUF + 10]);
        assert_eq!(buf.read_from(&mut source, usize::MAX).unwrap(), MAX_BUF);
    }
}
