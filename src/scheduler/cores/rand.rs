//! [`FastRand`]: the generator a worker picks steal victims with.
//!
//! Invariants: deterministic from its seed (the worker's index), so runs and loom models repeat;
//! never the zero state, which xorshift cannot leave; `below(n)` covers every index in `0..n`.

/// A small xorshift generator for picking steal victims.
#[derive(Debug)]
pub(in crate::scheduler) struct FastRand {
    state: u64,
}

impl FastRand {
    pub(in crate::scheduler) fn new(seed: u64) -> FastRand {
        // Any non-zero state works; mix the seed so neighbouring workers diverge at once.
        FastRand { state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }

    /// A number in `0..n` (`n > 0`).
    pub(in crate::scheduler) fn below(&mut self, n: usize) -> usize {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        ((u128::from(x >> 32) * n as u128) >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::FastRand;

    #[test]
    fn victims_cover_every_index() {
        let mut rng = FastRand::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[rng.below(7)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
