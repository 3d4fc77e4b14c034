//! The packed counters of one pool's idle-worker protocol (see `README.md`).
//!
//! Invariants:
//! - One `usize`: `searching` in the low [`State::SEARCHING_BITS`] bits, then the
//!   [`State::WATCHING`] flag, then `unparked`; the three fields never overlap, and each holds
//!   up to `MAX_WORKERS`.
//! - Under the sleepers' `sleep_list` lock, `unparked == workers - sleeping.len()`, and `WATCHING` is
//!   set exactly while a listed, parked worker holds the watcher role.

/// The packed counters: `searching` in the low [`State::SEARCHING_BITS`] bits, then the
/// [`State::WATCHING`] flag, then `unparked`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) struct State(pub(super) usize);

impl State {
    const SEARCHING_BITS: u32 = 16;
    const SEARCHING_MASK: usize = (1 << Self::SEARCHING_BITS) - 1;
    /// Set while a parked worker holds the watcher role (see `README.md`'s `## Watcher`).
    pub(super) const WATCHING: usize = 1 << Self::SEARCHING_BITS;
    const UNPARKED_SHIFT: u32 = Self::SEARCHING_BITS + 1;
    const UNPARKED_MASK: usize = !(Self::SEARCHING_MASK | Self::WATCHING);
    /// One searching worker.
    pub(super) const ONE_SEARCHING: usize = 1;
    /// One unparked worker.
    pub(super) const ONE_UNPARKED: usize = 1 << Self::UNPARKED_SHIFT;

    pub(super) fn new(unparked: usize, searching: usize) -> State {
        State((unparked << Self::UNPARKED_SHIFT) | searching)
    }

    pub(in crate::scheduler) fn searching(self) -> usize {
        self.0 & Self::SEARCHING_MASK
    }

    pub(in crate::scheduler) fn unparked(self) -> usize {
        (self.0 & Self::UNPARKED_MASK) >> Self::UNPARKED_SHIFT
    }

    pub(super) fn watching(self) -> bool {
        self.0 & Self::WATCHING != 0
    }
}

#[cfg(test)]
mod tests {
    use super::State;

    #[test]
    fn packed_fields_do_not_overlap() {
        let masks = [State::SEARCHING_MASK, State::WATCHING, State::UNPARKED_MASK];
        for (i, a) in masks.iter().enumerate() {
            for b in &masks[i + 1..] {
                assert_eq!(a & b, 0, "{a:#x} and {b:#x} overlap");
            }
        }
        assert_eq!(masks.iter().fold(0, |all, mask| all | mask), usize::MAX);
        let s = State::new(crate::config::MAX_WORKERS, crate::config::MAX_WORKERS);
        assert_eq!(
            (s.unparked(), s.searching(), s.watching()),
            (crate::config::MAX_WORKERS, crate::config::MAX_WORKERS, false)
        );
        let s = State(State::new(3, 2).0 + State::ONE_UNPARKED + State::ONE_SEARCHING + State::WATCHING);
        assert_eq!((s.unparked(), s.searching(), s.watching()), (4, 3, true));
    }
}
