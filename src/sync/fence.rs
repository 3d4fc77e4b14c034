//! An asymmetric fence pair: a [`AsymmetricFence::light`] half that a hot path runs at every
//! step, and a [`AsymmetricFence::heavy`] half that a rare path runs, which together order a
//! store-then-load on each side as two `SeqCst` fences would (no store-buffering outcome: at
//! least one side's load sees the other side's store).
//!
//! Invariants:
//! - One mode per process, decided once ([`AsymmetricFence::get`]) before any side can run,
//!   never changed: both halves of a pair always come from the same mode.
//! - *Membarrier mode* (Linux, when `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` is supported
//!   and the process registered for it): the light half is a compiler fence only, which keeps
//!   the hot side's store before its load in program order; the heavy half is the syscall, which
//!   runs a full memory barrier on every CPU running a thread of this process (and a thread not
//!   running passes one at its context switch). Wherever that barrier lands in the hot side's
//!   program, either it lands before the hot side's store (then the store comes after the rare
//!   side's store, and the hot side's later load sees it) or after it (then the store is visible
//!   when the syscall returns, and the rare side's later load sees it): the two-`SeqCst`-fences
//!   argument, with the hot side's fence at the barrier's landing point. This is the pairing
//!   folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier` and liburcu use.
//! - *Fence mode* (every other platform and kernel, miri, and loom, which models `SeqCst`
//!   fences): both halves are `fence(SeqCst)`, so the pair is correct by C11's fence rules alone.
//! - The syscall goes through rustix's safe wrapper: no `unsafe` here.

#[cfg(not(loom))]
use std::sync::OnceLock;

use super::{fence, Ordering};

/// Which half of the pair costs what (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AsymmetricFence {
    membarrier: bool,
}

impl AsymmetricFence {
    /// The process's mode: membarrier where the kernel offers it, fences otherwise.
    pub(crate) fn get() -> AsymmetricFence {
        #[cfg(not(loom))]
        {
            static MODE: OnceLock<bool> = OnceLock::new();
            AsymmetricFence { membarrier: *MODE.get_or_init(membarrier::register) }
        }
        #[cfg(loom)]
        {
            AsymmetricFence { membarrier: false }
        }
    }

    /// Fence mode, whatever the kernel offers: both halves are `SeqCst` fences.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn fences() -> AsymmetricFence {
        AsymmetricFence { membarrier: false }
    }

    /// True in membarrier mode.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_membarrier(self) -> bool {
        self.membarrier
    }

    /// The hot side's half, between its store and its load.
    #[inline(always)]
    pub(crate) fn light(self) {
        if self.membarrier {
            std::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// The rare side's half, between its store and its load: a syscall in membarrier mode (a few
    /// microseconds).
    pub(crate) fn heavy(self) {
        #[cfg(not(loom))]
        if self.membarrier {
            membarrier::barrier();
            return;
        }
        fence(Ordering::SeqCst);
    }
}

#[cfg(all(not(loom), not(miri), any(target_os = "linux", target_os = "android")))]
mod membarrier {
    use rustix::thread::{membarrier, membarrier_query, MembarrierCommand};

    /// Registers the process for private expedited barriers: true if it can use them.
    pub(super) fn register() -> bool {
        let supported = membarrier_query();
        supported.contains_command(MembarrierCommand::PrivateExpedited)
            && supported.contains_command(MembarrierCommand::RegisterPrivateExpedited)
            && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
    }

    /// One barrier on every CPU running a thread of this process.
    pub(super) fn barrier() {
        // A registered process's private expedited barrier has no failure mode but a kernel
        // bug; going on without it would break the light side's store-then-load order.
        membarrier(MembarrierCommand::PrivateExpedited)
            .unwrap_or_else(|error| panic!("membarrier(PRIVATE_EXPEDITED) failed after registration: {error}"));
    }
}

#[cfg(all(not(loom), any(miri, not(any(target_os = "linux", target_os = "android")))))]
mod membarrier {
    /// No membarrier here: fence mode.
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn barrier() {
        unreachable!("fence mode never calls the syscall")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_decided_once() {
        let first = AsymmetricFence::get();
        assert_eq!(first, AsymmetricFence::get());
        // Either mode's halves run without failing.
        first.light();
        first.heavy();
        AsymmetricFence::fences().light();
        AsymmetricFence::fences().heavy();
    }

    #[cfg(all(not(miri), target_os = "linux"))]
    #[test]
    fn linux_kernels_since_4_14_offer_membarrier() {
        // The kernels crew is tested on (CI's included) have it, so the tests run membarrier
        // mode; an older kernel falls back to fence mode, which miri and loom run.
        assert!(AsymmetricFence::get().is_membarrier(), "this kernel has no private expedited membarrier");
    }
}
