//! An asymmetric fence pair: a [`light`] half that a hot path runs at every step, and a
//! [`heavy`] half that a rare path runs, which together order a store-then-load on each side as
//! two `SeqCst` fences would (no store-buffering outcome: at least one side's load sees the
//! other side's store).
//!
//! Invariants:
//! - *Membarrier mode* (Linux, once the process registered for
//!   `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`): the light half is a compiler fence only,
//!   which keeps the hot side's store before its load in program order; the heavy half is the
//!   syscall, which runs a full memory barrier on every CPU running a thread of this process (a
//!   thread not running passes one at its context switch). Wherever that barrier lands in the
//!   hot side's program, either it lands before the hot side's store (then the hot side's later
//!   load sees the rare side's store, made before the syscall) or after it (then the store is
//!   visible when the syscall returns, and the rare side's later load sees it): the
//!   two-`SeqCst`-fences argument, with the hot side's fence at the barrier's landing point.
//!   folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier` and liburcu pair the same way.
//! - *Fence mode* (before the registration, where it failed or the kernel lacks the command, on
//!   other platforms, under miri, and under loom, which models `SeqCst` fences): both halves are
//!   `fence(SeqCst)`, correct by C11's fence rules alone.
//! - The switch is one way, and safe at any instant: the light half turns into a compiler fence
//!   only once `READY` says the registration succeeded, and `READY` is set only after the
//!   process-wide mode (`MODE`) is decided as membarrier, which every heavy half reads (or
//!   waits for) before it picks its barrier. So a light half without a fence always meets a
//!   heavy half that is the syscall; a light half with one meets either, and either is enough.
//! - The registration costs about 10 ms in a process that already runs threads (the kernel waits
//!   for an RCU grace period): crew's monitor thread does it with [`prepare`] as it starts, and a
//!   pool with no monitor (takeover and slow-poll reports both off) on a short-lived thread of
//!   its own, never on a pool's creation path. Until it is done the light halves are fences, and
//!   a heavy half that comes first registers (or waits for the registration) itself.
//! - The syscall goes through rustix's safe wrapper: no `unsafe` here.
//!
//! Used by crew-slot's owner and thieves (the crate docs) and by crew's progress word, which
//! reaches it through crew's `sync` facade.
//!
//! # Example
//!
//! ```
//! use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
//! use crew_slot::asymmetric;
//!
//! let (hot, rare) = (AtomicBool::new(false), AtomicBool::new(false));
//! // The hot side, at every step:
//! hot.store(true, Relaxed);
//! asymmetric::light();
//! let hot_saw = rare.load(Relaxed);
//! // The rare side, on another thread in a real use:
//! rare.store(true, Relaxed);
//! asymmetric::heavy();
//! let rare_saw = hot.load(Relaxed);
//! assert!(hot_saw || rare_saw, "at least one side sees the other's store");
//! ```

#[cfg(loom)]
use loom::sync::atomic::{fence, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{fence, Ordering};

#[cfg(not(loom))]
mod mode {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;

    /// An `AtomicBool` alone on its pair of cache lines.
    #[repr(align(128))]
    pub(super) struct Padded(pub(super) AtomicBool);

    /// Set once the process registered for private expedited barriers. Read by every poll's
    /// end and every owner's take, so alone on its lines: never written again.
    static READY: Padded = Padded(AtomicBool::new(false));
    /// The process's mode, decided by the first heavy half or [`prepare`](super::prepare): true
    /// for membarrier.
    static MODE: OnceLock<bool> = OnceLock::new();

    #[inline(always)]
    pub(super) fn ready() -> bool {
        // Relaxed: a stale `false` only costs a fence; `true` is stored after `MODE` is decided
        // as membarrier, and `MODE` is read by every heavy half (see the module docs).
        READY.0.load(Ordering::Relaxed)
    }

    pub(super) fn membarrier() -> bool {
        *MODE.get_or_init(|| {
            let registered = super::membarrier::register();
            if registered {
                // Relaxed: see `ready`.
                READY.0.store(true, Ordering::Relaxed);
            }
            registered
        })
    }
}

#[cfg(loom)]
mod mode {
    /// Fence mode only under loom.
    pub(super) fn ready() -> bool {
        false
    }
}

/// The hot side's half, between its store and its load.
///
/// # Example
///
/// ```
/// crew_slot::asymmetric::light();
/// ```
#[inline(always)]
pub fn light() {
    if mode::ready() {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The rare side's half, between its store and its load: a syscall in membarrier mode (a few
/// microseconds; the first call in a process may register it, see [`prepare`]).
///
/// # Panics
///
/// If the kernel fails the barrier after the process registered for it (no documented cause).
///
/// # Example
///
/// ```
/// crew_slot::asymmetric::heavy();
/// ```
pub fn heavy() {
    #[cfg(not(loom))]
    if mode::membarrier() {
        membarrier::barrier();
        return;
    }
    fence(Ordering::SeqCst);
}

/// Decides the process's mode now (registering for membarrier where the kernel offers it), so
/// that the hot sides switch to the light half's compiler fence: called by a thread that can
/// afford the registration's wait.
///
/// # Example
///
/// ```
/// crew_slot::asymmetric::prepare();
/// ```
pub fn prepare() {
    #[cfg(not(loom))]
    mode::membarrier();
}

/// True once the hot sides run without a fence (membarrier mode).
///
/// # Example
///
/// ```
/// crew_slot::asymmetric::prepare();
/// if cfg!(target_os = "linux") {
///     // Where the kernel offers it (4.14 and later, no seccomp filter refusing it).
///     println!("membarrier mode: {}", crew_slot::asymmetric::is_membarrier());
/// }
/// ```
#[cfg(not(loom))]
pub fn is_membarrier() -> bool {
    mode::ready()
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
        // bug; going on without it would break the light half's store-then-load order.
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
    fn both_halves_run_in_the_mode_of_the_moment() {
        light();
        heavy();
        prepare();
        light();
        heavy();
        assert_eq!(is_membarrier(), mode::membarrier(), "the hot side's mode is the rare side's");
    }

    #[cfg(all(not(miri), target_os = "linux"))]
    #[test]
    fn linux_kernels_since_4_14_offer_membarrier() {
        // The kernels crew is tested on (CI's included) have it, so the tests run membarrier
        // mode; an older kernel stays in fence mode, which miri and loom run.
        prepare();
        assert!(is_membarrier(), "this kernel has no private expedited membarrier");
    }
}
