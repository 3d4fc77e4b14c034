//! [`Frames`] and [`Streams`]: an HTTP/2 connection's streams in flight, followed from the
//! frames its socket carries each way, so that a stream counts until its response is on the
//! socket (hyper hands a whole response body to h2, which may hold most of it back for the
//! peer's flow-control window, long after the body has ended).
//!
//! Invariants:
//! - Only frame headers (9 bytes) and the first 4 bytes of each payload are looked at; a
//!   payload is skipped by its length, however the reads and writes split it. The read side
//!   skips the 24 bytes of the client's preface first.
//! - A stream is in flight from the client's HEADERS that opens it (on an odd id above every
//!   id it used before; trailers and CONTINUATION open nothing) until the server's HEADERS or
//!   DATA with END_STREAM, or a RST_STREAM either way, is whole on the socket. A GOAWAY the
//!   server sends ends every stream above its last stream id (h2 will not serve them), and no
//!   stream above that id opens afterwards.

use std::collections::BTreeSet;

/// The bytes of HTTP/2's client preface, which come before the client's first frame.
pub(super) const PREFACE_LEN: usize = 24;

/// Frame types and flags this module reads (RFC 9113, section 6).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const GOAWAY: u8 = 0x7;
const END_STREAM: u8 = 0x1;

/// One whole frame: its header, and the first 4 bytes of its payload (zeros past its end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    first: [u8; 4],
}

/// Cuts one direction's bytes into frames.
#[derive(Debug)]
pub(super) struct Frames {
    /// Bytes still to skip before the first frame (the preface, on the read side).
    skip: usize,
    head: [u8; 9],
    /// Bytes of `head` filled; 9 while in a payload.
    filled: usize,
    /// Payload bytes of the current frame not yet seen.
    left: usize,
    first: [u8; 4],
    /// Payload bytes seen of the current frame, up to 4.
    seen: usize,
}

impl Frames {
    /// Frames of a direction that starts with `skip` bytes that are not frames.
    pub(super) fn after(skip: usize) -> Frames {
        Frames { skip, head: [0; 9], filled: 0, left: 0, first: [0; 4], seen: 0 }
    }

    /// Takes the next bytes of the direction, and hands `each` every frame they complete.
    pub(super) fn feed(&mut self, mut bytes: &[u8], mut each: impl FnMut(Frame)) {
        while !bytes.is_empty() {
            let taken = if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                n
            } else if self.filled < self.head.len() {
                let n = (self.head.len() - self.filled).min(bytes.len());
                self.head[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
                self.filled += n;
                if self.filled == self.head.len() {
                    self.left = u32::from_be_bytes([0, self.head[0], self.head[1], self.head[2]]) as usize;
                    self.first = [0; 4];
                    self.seen = 0;
                    self.end_if_whole(&mut each);
                }
                n
            } else {
                let n = self.left.min(bytes.len());
                let keep = (self.first.len() - self.seen).min(n);
                self.first[self.seen..self.seen + keep].copy_from_slice(&bytes[..keep]);
                self.seen += keep;
                self.left -= n;
                self.end_if_whole(&mut each);
                n
            };
            bytes = &bytes[taken..];
        }
    }

    /// Hands over the current frame if its payload is all seen, and starts the next.
    fn end_if_whole(&mut self, each: &mut impl FnMut(Frame)) {
        if self.left == 0 {
            let stream = u32::from_be_bytes([self.head[5], self.head[6], self.head[7], self.head[8]]) & 0x7fff_ffff;
            each(Frame { kind: self.head[3], flags: self.head[4], stream, first: self.first });
            self.filled = 0;
        }
    }
}

/// The streams in flight, as [`Frames`] of both directions tell them.
#[derive(Debug)]
pub(super) struct Streams {
    open: BTreeSet<u32>,
    /// The highest stream id the client has used.
    highest: u32,
    /// The last stream id of the server's latest GOAWAY (`u32::MAX` before one).
    last: u32,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams { open: BTreeSet::new(), highest: 0, last: u32::MAX }
    }
}

impl Streams {
    /// How many streams are in flight.
    pub(super) fn in_flight(&self) -> usize {
        self.open.len()
    }

    /// A frame the client sent, whole in the server's hands.
    pub(super) fn read(&mut self, frame: Frame) {
        match frame.kind {
            HEADERS if frame.stream > self.highest => {
                self.highest = frame.stream;
                if frame.stream % 2 == 1 && frame.stream <= self.last {
                    self.open.insert(frame.stream);
                }
            }
            RST_STREAM => {
                self.open.remove(&frame.stream);
            }
            _ => {}
        }
    }

    /// A frame the server sent, whole on the socket.
    pub(super) fn wrote(&mut self, frame: Frame) {
        match frame.kind {
            DATA | HEADERS if frame.flags & END_STREAM != 0 => {
                self.open.remove(&frame.stream);
            }
            RST_STREAM => {
                self.open.remove(&frame.stream);
            }
            GOAWAY => {
                self.last = self.last.min(u32::from_be_bytes(frame.first) & 0x7fff_ffff);
                let last = self.last;
                self.open.retain(|&stream| stream <= last);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame's bytes: header and payload.
    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = (payload.len() as u32).to_be_bytes();
        let mut bytes = vec![len[1], len[2], len[3], kind, flags];
        bytes.extend_from_slice(&stream.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    fn frames_of(skip: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut frames = Frames::after(skip);
        let mut out = Vec::new();
        for chunk in chunks {
            frames.feed(chunk, |frame| out.push(frame));
        }
        out
    }

    #[test]
    fn frames_come_whole_however_the_bytes_are_split_after_the_preface() {
        let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        bytes.extend(frame(4, 0, 0, &[]));
        bytes.extend(frame(HEADERS, 0x4, 1, &[9; 40]));
        bytes.extend(frame(GOAWAY, 0, 0, &[0, 0, 0, 7, 0, 0, 0, 0]));
        let whole = frames_of(PREFACE_LEN, &[&bytes]);
        let kinds: Vec<(u8, u32)> = whole.iter().map(|frame| (frame.kind, frame.stream)).collect();
        assert_eq!(kinds, [(4, 0), (HEADERS, 1), (GOAWAY, 0)]);
        assert_eq!(whole[1].first, [9; 4]);
        assert_eq!(whole[2].first, [0, 0, 0, 7]);
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(frames_of(PREFACE_LEN, &bytewise), whole, "one byte at a time");
        let odd: Vec<&[u8]> = bytes.chunks(7).collect();
        assert_eq!(frames_of(PREFACE_LEN, &odd), whole, "7 bytes at a time");
    }

    fn read(streams: &mut Streams, kind: u8, flags: u8, stream: u32) {
        frames_of(0, &[&frame(kind, flags, stream, &[])]).into_iter().for_each(|frame| streams.read(frame));
    }

    fn wrote(streams: &mut Streams, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        frames_of(0, &[&frame(kind, flags, stream, payload)]).into_iter().for_each(|frame| streams.wrote(frame));
    }

    #[test]
    fn a_stream_is_in_flight_from_its_headers_until_the_servers_end_stream_or_a_reset() {
        let mut streams = Streams::default();
        read(&mut streams, HEADERS, 0x5, 1); // the whole request: END_STREAM on the request side
        read(&mut streams, HEADERS, 0x4, 3);
        read(&mut streams, HEADERS, 0x4, 5);
        assert_eq!(streams.in_flight(), 3);
        read(&mut streams, HEADERS, 0x5, 3); // trailers open nothing
        wrote(&mut streams, HEADERS, 0x4, 1, &[]); // the response's head: still in flight
        wrote(&mut streams, DATA, 0, 1, &[1; 10]);
        assert_eq!(streams.in_flight(), 3);
        wrote(&mut streams, DATA, END_STREAM, 1, &[1; 10]);
        wrote(&mut streams, HEADERS, 0x4 | END_STREAM, 3, &[]);
        assert_eq!(streams.in_flight(), 1);
        read(&mut streams, RST_STREAM, 0, 5);
        assert_eq!(streams.in_flight(), 0);
        read(&mut streams, HEADERS, 0x4, 7);
        wrote(&mut streams, RST_STREAM, 0, 7, &[0, 0, 0, 7]);
        assert_eq!(streams.in_flight(), 0);
    }

    #[test]
    fn a_goaway_ends_the_streams_above_its_last_id_and_no_stream_above_it_opens() {
        let mut streams = Streams::default();
        read(&mut streams, HEADERS, 0x4, 1);
        read(&mut streams, HEADERS, 0x4, 2);
        assert_eq!(streams.in_flight(), 1, "an even id is the server's");
        wrote(&mut streams, GOAWAY, 0, 0, &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]); // the first, at the highest id
        read(&mut streams, HEADERS, 0x4, 3);
        assert_eq!(streams.in_flight(), 2);
        wrote(&mut streams, GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(streams.in_flight(), 1, "stream 3 is above the last id");
        read(&mut streams, HEADERS, 0x4, 5);
        assert_eq!(streams.in_flight(), 1, "stream 5 opens after the final GOAWAY");
    }
}
