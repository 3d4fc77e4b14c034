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
//! - *Fence mode* (before the registration, where it failed or the kernel lacks the command,
//!   where a first barrier right after the registration failed (a seccomp filter that allows
//!   the registration but not the barrier), with [`MEMBARRIER_ENV`]`=off`, on other platforms,
//!   under miri, and under loom, which models `SeqCst` fences): both halves are
//!   `fence(SeqCst)`, correct by C11's fence rules alone.
//! - `CREW_MEMBARRIER` is read once, before the first membarrier call (the query included): `off`
//!   makes no membarrier call at all (sandboxes that kill a process at an unknown system call);
//!   unset or `on` tries membarrier mode; anything else is reported once on stderr and taken as
//!   `off` (crew itself refuses to build a pool with it, naming the value: [`env_setting`]).
//! - [`heavy`] never panics: in membarrier mode a barrier that fails after all (no documented
//!   cause but a filter installed after the registration) returns `false`, reported once on
//!   stderr, and its caller does nothing that needed the order (a thief takes nothing, crew's
//!   monitor drops its mark). The mode stays membarrier: a light half without a fence may be
//!   running now, and only a heavy half that succeeded may rely on it.
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
            let allowed = match super::env_setting() {
                Ok(allowed) => allowed,
                Err(value) => {
                    eprintln!(
                        "crew-slot: {}={value:?} is neither `on` nor `off`: fence mode, no membarrier call",
                        super::MEMBARRIER_ENV
                    );
                    false
                }
            };
            let registered = allowed && super::membarrier::register();
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

/// The environment variable that keeps the process out of membarrier mode: `off` (no
/// membarrier call at all), or `on` (the default: membarrier mode where the kernel offers it).
/// Process-wide, read once, before the first membarrier call.
///
/// # Example
///
/// ```
/// // `CREW_MEMBARRIER=off ./server`: fence mode, for a sandbox that kills on unknown syscalls.
/// assert_eq!(crew_slot::asymmetric::MEMBARRIER_ENV, "CREW_MEMBARRIER");
/// ```
pub const MEMBARRIER_ENV: &str = "CREW_MEMBARRIER";

/// What [`MEMBARRIER_ENV`] says now: `Ok(true)` if membarrier mode is allowed (unset, or `on`),
/// `Ok(false)` for `off`, `Err` with the value otherwise (not Unicode: its lossy form).
///
/// # Example
///
/// ```
/// if std::env::var_os(crew_slot::asymmetric::MEMBARRIER_ENV).is_none() {
///     assert_eq!(crew_slot::asymmetric::env_setting(), Ok(true));
/// }
/// ```
pub fn env_setting() -> Result<bool, String> {
    match std::env::var_os(MEMBARRIER_ENV) {
        None => Ok(true),
        Some(value) if value == "on" => Ok(true),
        Some(value) if value == "off" => Ok(false),
        Some(value) => Err(value.to_string_lossy().into_owned()),
    }
}

/// The rare side's half, between its store and its load: a syscall in membarrier mode (a few
/// microseconds; the first call in a process may register it, see [`prepare`]). `true` if the
/// pair's order holds for this call; `false` only if the membarrier failed after registration
/// (reported once on stderr): the caller must then not act on what its load saw.
///
/// # Example
///
/// ```
/// assert!(crew_slot::asymmetric::heavy());
/// ```
#[must_use = "a false heavy half orders nothing: the caller must not act on its load"]
pub fn heavy() -> bool {
    #[cfg(not(loom))]
    if mode::membarrier() {
        return membarrier::barrier();
    }
    fence(Ordering::SeqCst);
    true
}

/// Makes the next `barriers` heavy halves in membarrier mode fail as a failed system call would:
/// for tests of the callers' failure paths. Not for production use.
///
/// # Example
///
/// ```
/// crew_slot::asymmetric::fail_next_barriers(0);
/// ```
#[doc(hidden)]
pub fn fail_next_barriers(barriers: usize) {
    #[cfg(not(loom))]
    FAILING.store(barriers, std::sync::atomic::Ordering::SeqCst);
    #[cfg(loom)]
    let _ = barriers;
}

/// How many of the next barriers fail ([`fail_next_barriers`]). A plain `std` atomic.
#[cfg(not(loom))]
static FAILING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether this barrier is one a test asked to fail.
#[cfg(not(loom))]
#[allow(dead_code)] // fence mode's platforms make no barrier
fn failing_by_request() -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    FAILING.load(SeqCst) != 0 && FAILING.fetch_update(SeqCst, SeqCst, |left| left.checked_sub(1)).is_ok()
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

    use std::sync::atomic::{AtomicBool, Ordering};

    /// Registers the process for private expedited barriers, and makes one: true if it can use
    /// them (a filter that lets the registration through but not the barrier keeps the process
    /// in fence mode, decided before any light half goes without its fence).
    pub(super) fn register() -> bool {
        let supported = membarrier_query();
        supported.contains_command(MembarrierCommand::PrivateExpedited)
            && supported.contains_command(MembarrierCommand::RegisterPrivateExpedited)
            && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
            && membarrier(MembarrierCommand::PrivateExpedited).is_ok()
    }

    /// One barrier on every CPU running a thread of this process: false if it failed (reported
    /// once), and then it ordered nothing.
    pub(super) fn barrier() -> bool {
        let result = if super::failing_by_request() {
            Err(rustix::io::Errno::PERM)
        } else {
            membarrier(MembarrierCommand::PrivateExpedited)
        };
        match result {
            Ok(()) => true,
            Err(error) => {
                static REPORTED: AtomicBool = AtomicBool::new(false);
                // Relaxed: only which call prints matters, and the swap makes it one.
                if !REPORTED.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "crew-slot: membarrier(PRIVATE_EXPEDITED) failed after registration ({error}): the calls \
                         that needed it did nothing this time (reported once)"
                    );
                }
                false
            }
        }
    }
}

#[cfg(all(not(loom), any(miri, not(any(target_os = "linux", target_os = "android")))))]
mod membarrier {
    /// No membarrier here: fence mode.
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn barrier() -> bool {
        unreachable!("fence mode never calls the syscall")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn both_halves_run_in_the_mode_of_the_moment() {
        light();
        assert!(heavy());
        prepare();
        light();
        assert!(heavy());
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
