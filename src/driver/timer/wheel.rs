//! The driver's timers ([`Wheel`]): a hierarchical timing wheel, six levels of 64 slots, the
//! first one millisecond a slot (tokio's shape), with insert and cancel in constant time.
//!
//! Invariants:
//! - Times are nanoseconds since the driver's epoch; a slot covers whole milliseconds ("ticks").
//!   An entry waits in the slot of the lowest level whose span holds both its deadline's tick
//!   and the tick the wheel has `elapsed` to: level 0 for the next 64 ms, level 1 for the next
//!   4 s, ... level 5 for about two years (later deadlines wait in level 5's last slot and are
//!   filed again when it comes).
//! - Each slot is a vector of node keys, and each node knows its place in it, so a removal is a
//!   `swap_remove` that updates the node moved into the gap: constant time.
//! - [`advance`](Wheel::advance) fires every entry whose deadline is at or before `now`, in
//!   slot order, and files the others of the slots it empties again, lower (a cascade); an entry
//!   whose deadline moved later (a reset that did not touch the wheel) is filed again instead of
//!   fired. It never fires an entry before its deadline.
//! - [`next_deadline`](Wheel::next_deadline) is exact for level 0 (the earliest deadline of its
//!   first occupied slot, but no later than that slot's end: an entry reset to a later deadline
//!   still sits there, and the slots after it may hold earlier ones) and a lower bound above it
//!   (the slot's first tick, when its cascade is due): the driver wakes then, never after a
//!   deadline.

use std::sync::Arc;

use crate::driver::timer::entry::{TimerShared, NOT_FILED};
use crate::sync::Ordering;

const LEVELS: usize = 6;
const SLOTS: usize = 64;
const SLOT_BITS: u32 = 6;
const NANOS_PER_TICK: u64 = 1_000_000;

/// The timers (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Wheel {
    nodes: Vec<Option<Node>>,
    free: Vec<usize>,
    levels: [Level; LEVELS],
    /// The tick the wheel has processed up to.
    elapsed: u64,
    len: usize,
}

#[derive(Debug)]
struct Level {
    slots: [Vec<usize>; SLOTS],
    /// Bit `s` set while slot `s` holds an entry.
    occupied: u64,
}

impl Default for Level {
    fn default() -> Level {
        Level { slots: [const { Vec::new() }; SLOTS], occupied: 0 }
    }
}

#[derive(Debug)]
struct Node {
    entry: Arc<TimerShared>,
    level: u8,
    slot: u8,
    /// Its index in the slot's vector.
    place: u32,
}

/// The slot of `deadline` (a tick) relative to `elapsed`: its level and slot.
fn slot_for(elapsed: u64, deadline: u64) -> (usize, usize) {
    let deadline = deadline.max(elapsed);
    // The highest bit where they differ picks the level (tokio's `level_for`).
    let masked = (elapsed ^ deadline) | (SLOTS as u64 - 1);
    let significant = 63 - masked.leading_zeros();
    let level = ((significant / SLOT_BITS) as usize).min(LEVELS - 1);
    let deadline = if level == LEVELS - 1 { deadline.min(elapsed + level_span(LEVELS - 1) - 1) } else { deadline };
    let slot = ((deadline >> (SLOT_BITS * level as u32)) as usize) & (SLOTS - 1);
    (level, slot)
}

/// Ticks one slot of `level` spans.
fn slot_span(level: usize) -> u64 {
    1 << (SLOT_BITS * level as u32)
}

/// Ticks a whole `level` spans.
fn level_span(level: usize) -> u64 {
    slot_span(level) * SLOTS as u64
}

impl Wheel {
    /// Files `entry` (its deadline read from it). Returns its key, which `remove` takes.
    pub(crate) fn insert(&mut self, entry: Arc<TimerShared>) -> usize {
        let deadline = entry.deadline_nanos() / NANOS_PER_TICK;
        let (level, slot) = slot_for(self.elapsed, deadline);
        let key = match self.free.pop() {
            Some(key) => key,
            None => {
                self.nodes.push(None);
                self.nodes.len() - 1
            }
        };
        let slot_keys = &mut self.levels[level].slots[slot];
        let place = slot_keys.len() as u32;
        slot_keys.push(key);
        self.levels[level].occupied |= 1 << slot;
        // Relaxed: the entry's key is read and written under the wheel's lock only.
        entry.key.store(key, Ordering::Relaxed);
        self.nodes[key] = Some(Node { entry, level: level as u8, slot: slot as u8, place });
        self.len += 1;
        key
    }

    /// Takes the entry of `key` out.
    pub(crate) fn remove(&mut self, key: usize) -> Option<Arc<TimerShared>> {
        let node = self.nodes.get_mut(key)?.take()?;
        let level = &mut self.levels[node.level as usize];
        let keys = &mut level.slots[node.slot as usize];
        keys.swap_remove(node.place as usize);
        if let Some(&moved) = keys.get(node.place as usize) {
            if let Some(moved) = self.nodes[moved].as_mut() {
                moved.place = node.place;
            }
        }
        if keys.is_empty() {
            level.occupied &= !(1 << node.slot);
        }
        self.free.push(key);
        self.len -= 1;
        // Relaxed: see `insert`.
        node.entry.key.store(NOT_FILED, Ordering::Relaxed);
        Some(node.entry)
    }

    /// How many entries are filed.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The next occupied slot: its level, its slot and the first tick it covers.
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        let mut best: Option<(usize, usize, u64)> = None;
        for (level, lvl) in self.levels.iter().enumerate() {
            if lvl.occupied == 0 {
                continue;
            }
            let span = slot_span(level);
            let now_slot = ((self.elapsed / span) as usize) & (SLOTS - 1);
            // The occupied slots from the current one on, wrapping to the level's next round.
            let rotated = lvl.occupied.rotate_right(now_slot as u32);
            let ahead = rotated.trailing_zeros() as usize;
            let slot = (now_slot + ahead) % SLOTS;
            let level_start = self.elapsed - (self.elapsed % level_span(level));
            let mut start = level_start + slot as u64 * span;
            if start < self.elapsed - self.elapsed % span {
                start += level_span(level);
            }
            if best.map_or(true, |(_, _, best_start)| start < best_start) {
                best = Some((level, slot, start));
            }
        }
        best
    }

    /// When the next entry may be due, in nanoseconds since the epoch (see the module docs).
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        let (level, slot, start) = self.next_slot()?;
        if level > 0 {
            return Some(start.max(self.elapsed) * NANOS_PER_TICK);
        }
        let earliest = self.levels[0].slots[slot]
            .iter()
            .filter_map(|&key| self.nodes[key].as_ref())
            .map(|node| node.entry.deadline_nanos())
            .min()?;
        // An entry reset later stays in its old slot until that slot comes: the slot's end then
        // bounds the wait, so that an entry of a later slot is not waited past.
        Some(earliest.min((start + 1) * NANOS_PER_TICK))
    }

    /// Fires every entry due at `now` (nanoseconds since the epoch): each is marked fired and
    /// its waker pushed onto `fired`, to be woken once the wheel's lock is released.
    pub(crate) fn advance(&mut self, now: u64, fired: &mut Vec<std::task::Waker>) {
        let now_tick = now / NANOS_PER_TICK;
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now_tick {
                break;
            }
            self.elapsed = self.elapsed.max(start);
            let keys = std::mem::take(&mut self.levels[level].slots[slot]);
            self.levels[level].occupied &= !(1 << slot);
            let mut kept_here = false;
            for key in keys {
                let Some(node) = self.nodes[key].take() else { continue };
                self.free.push(key);
                self.len -= 1;
                // Relaxed: see `insert`.
                node.entry.key.store(NOT_FILED, Ordering::Relaxed);
                if let Some(waker) = node.entry.fire_if_due(now) {
                    fired.extend(waker);
                } else {
                    // Not due yet: a later deadline (a reset), a cascade, or the rest of the
                    // current millisecond, filed again from where the wheel is.
                    let key = self.insert(node.entry);
                    let node = self.nodes[key].as_ref().expect("just filed");
                    kept_here |= (node.level as usize, node.slot as usize) == (level, slot);
                }
            }
            if kept_here {
                // What is left of the current slot is not due at `now`: stop here.
                break;
            }
        }
        self.elapsed = self.elapsed.max(now_tick);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(deadline_ms: u64) -> Arc<TimerShared> {
        Arc::new(TimerShared::new(deadline_ms * NANOS_PER_TICK))
    }

    #[test]
    fn entries_fire_in_deadline_order_and_never_early_across_every_level() {
        let mut wheel = Wheel::default();
        let deadlines = [0, 1, 5, 63, 64, 65, 4095, 4096, 300_000, 20_000_000, 3_000_000_000];
        let entries: Vec<_> = deadlines.iter().map(|&ms| entry(ms)).collect();
        for entry in &entries {
            wheel.insert(entry.clone());
        }
        let mut fired_at = vec![None; entries.len()];
        let mut now_ms = 0;
        while wheel.len() > 0 {
            let next = wheel.next_deadline().expect("entries left");
            assert!(next / NANOS_PER_TICK >= now_ms || next <= now_ms * NANOS_PER_TICK);
            now_ms = now_ms.max(next / NANOS_PER_TICK);
            let mut fired = Vec::new();
            wheel.advance(now_ms * NANOS_PER_TICK, &mut fired);
            for (index, entry) in entries.iter().enumerate() {
                if entry.is_fired() && fired_at[index].is_none() {
                    fired_at[index] = Some(now_ms);
                }
            }
            now_ms += 1;
        }
        for (index, &deadline) in deadlines.iter().enumerate() {
            let at = fired_at[index].expect("every entry fires");
            assert!(at >= deadline, "entry {deadline} ms fired early, at {at} ms");
            assert!(at <= deadline + 1, "entry {deadline} ms fired late, at {at} ms");
        }
    }

    #[test]
    fn a_removed_entry_never_fires_and_its_place_is_taken_by_the_moved_one() {
        let mut wheel = Wheel::default();
        let (a, b, c) = (entry(10), entry(10), entry(10));
        let ka = wheel.insert(a.clone());
        let _kb = wheel.insert(b.clone());
        let kc = wheel.insert(c.clone());
        wheel.remove(ka);
        wheel.remove(kc);
        assert_eq!(wheel.len(), 1);
        let mut fired = Vec::new();
        wheel.advance(10 * NANOS_PER_TICK, &mut fired);
        assert!(b.is_fired() && !a.is_fired() && !c.is_fired());
        assert_eq!(wheel.len(), 0);
        assert_eq!(wheel.next_deadline(), None);
    }

    #[test]
    fn a_deadline_within_the_current_millisecond_fires_only_once_it_passed() {
        let mut wheel = Wheel::default();
        let precise = Arc::new(TimerShared::new(5 * NANOS_PER_TICK + 300_000));
        wheel.insert(precise.clone());
        assert_eq!(wheel.next_deadline(), Some(5 * NANOS_PER_TICK + 300_000));
        let mut fired = Vec::new();
        wheel.advance(5 * NANOS_PER_TICK + 100_000, &mut fired);
        assert!(!precise.is_fired());
        assert_eq!(wheel.next_deadline(), Some(5 * NANOS_PER_TICK + 300_000));
        wheel.advance(5 * NANOS_PER_TICK + 300_000, &mut fired);
        assert!(precise.is_fired());
    }

    #[test]
    fn a_deadline_moved_later_without_the_wheel_is_filed_again_not_fired() {
        let mut wheel = Wheel::default();
        let moved = entry(10);
        wheel.insert(moved.clone());
        moved.set_deadline_nanos(500 * NANOS_PER_TICK);
        let mut fired = Vec::new();
        wheel.advance(10 * NANOS_PER_TICK, &mut fired);
        assert!(!moved.is_fired());
        assert_eq!(wheel.len(), 1);
        wheel.advance(500 * NANOS_PER_TICK, &mut fired);
        assert!(moved.is_fired());
    }

    #[test]
    fn an_entry_reset_later_never_delays_the_next_deadline_past_a_later_slots_entry() {
        let mut wheel = Wheel::default();
        let (reset, other) = (entry(10), entry(20));
        wheel.insert(reset.clone());
        wheel.insert(other.clone());
        assert_eq!(wheel.next_deadline(), Some(10 * NANOS_PER_TICK));
        // A reset to ten seconds only stores the deadline: the entry stays in slot 10.
        assert!(reset.set_deadline_nanos(10_000 * NANOS_PER_TICK));
        let next = wheel.next_deadline().expect("entries filed");
        assert!(next <= 20 * NANOS_PER_TICK, "the wait would go past the 20 ms entry: {next}");
        // Advancing to that bound files the reset entry again and fires nothing early.
        let mut fired = Vec::new();
        wheel.advance(next, &mut fired);
        assert!(!reset.is_fired() && !other.is_fired());
        assert_eq!(wheel.next_deadline(), Some(20 * NANOS_PER_TICK));
    }
}
