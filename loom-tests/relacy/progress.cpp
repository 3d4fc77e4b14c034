// The progress word's mark racing the owner's end of poll, checked with Relacy (a C++11
// memory-model checker; Debian's relacy-dev), which treats SeqCst fences as C11 does. See
// src/scheduler/progress.rs and slot/src/asymmetric.rs.
//
// A store-buffering pattern between the owner of a core and the monitor:
// - owner, at its poll's end: a Release store of the word (the poll ended), the asymmetric
//   fence's light half, an Acquire load of the flags; flags found are cleared with a
//   compare-exchange unless they say TAKEN (then the owner gives the core up and stops);
// - monitor, having seen the poll running: a compare-exchange of the flags to REQUEST, the heavy
//   half, a re-read of the word, and a settling compare-exchange from REQUEST to TAKEN (the poll
//   still ran) or back to nothing (it ended).
// In membarrier mode the light half is a compiler fence and the heavy half the syscall, which
// runs a full barrier in the owner's thread somewhere in its program: modelled here at its one
// point that matters, between the store and the load, as a SeqCst fence (a barrier before the
// store makes the load see the request; one after the load makes the re-read see the store).
// In fence mode both halves are SeqCst fences: exactly this model.
//
// The property: the monitor's takeover succeeds exactly when the owner sees TAKEN at the end of
// the poll the monitor saw (so a core is never driven by two threads, nor left by its owner
// without a takeover), and a poll that ends untaken leaves no flag for the next one.
//
// Two models: the owner with the light half (must pass); without it (must fail: what the loom
// planted bug `end_poll_without_fence` plants).
// Build and run: loom-tests/relacy/run (CI's loom step).

#include <relacy/relacy.hpp>
#include <cstdio>

const int IN_POLL = 1;
const int REPORTED = 2;
const int TAKEN = 4;
const int REQUEST = 8;
const int ONE_POLL = 8;

template <bool light_half>
struct progress_mark : rl::test_suite<progress_mark<light_half>, 2> {
    rl::atomic<int> word;   // the owner's: polls begun, IN_POLL
    rl::atomic<int> flags;  // the monitor's marks and request
    int owner_saw_taken_at;  // the poll at whose end the owner saw TAKEN, 0 if none
    int monitor_took;        // 1 if the monitor's takeover succeeded

    void before() {
        // Poll 1 is running, and the monitor has seen it.
        word($).store(ONE_POLL | IN_POLL, rl::mo_relaxed);
        flags($).store(0, rl::mo_relaxed);
        owner_saw_taken_at = 0;
        monitor_took = 0;
    }

    // The owner's end of poll `polls`: true if the core was taken.
    bool end_poll(int polls) {
        word($).store(polls * ONE_POLL, rl::mo_release);
        if (light_half) {
            rl::atomic_thread_fence(rl::mo_seq_cst, $);
        }
        int seen = flags($).load(rl::mo_acquire);
        while (seen != 0) {
            if (seen & TAKEN) {
                return true;
            }
            if (flags($).compare_exchange_strong(seen, 0, rl::mo_acq_rel, rl::mo_acquire)) {
                break;
            }
        }
        return false;
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (int polls = 1; polls <= 2; ++polls) {
                if (polls > 1) {
                    word($).store(polls * ONE_POLL | IN_POLL, rl::mo_release);
                }
                if (end_poll(polls)) {
                    owner_saw_taken_at = polls;
                    break;
                }
            }
        } else {
            int seen = ONE_POLL | IN_POLL;
            int expected = 0;
            if (!flags($).compare_exchange_strong(expected, REQUEST, rl::mo_seq_cst)) {
                return;
            }
            rl::atomic_thread_fence(rl::mo_seq_cst, $);  // the heavy half
            bool still = word($).load(rl::mo_seq_cst) == seen;
            expected = REQUEST;
            bool settled = flags($).compare_exchange_strong(expected, still ? TAKEN : 0, rl::mo_seq_cst);
            monitor_took = settled && still;
        }
    }

    void after() {
        // Taken exactly when the owner saw it, at the end of the poll the monitor saw.
        RL_ASSERT(monitor_took == (owner_saw_taken_at == 1));
        RL_ASSERT(owner_saw_taken_at != 2);
        // An untaken core keeps no flag.
        RL_ASSERT(monitor_took || flags($).load(rl::mo_relaxed) == 0);
    }
};

int main() {
    rl::test_params params;
    params.search_type = rl::sched_full;
    bool fenced = rl::simulate<progress_mark<true>>(params);
    bool unfenced = rl::simulate<progress_mark<false>>(params);
    std::printf("Progress mark, light half: %s\n", fenced ? "takeover exact" : "TWO DRIVERS OR LOST FLAG");
    std::printf("Progress mark, no light half: %s\n", unfenced ? "takeover exact" : "TWO DRIVERS OR LOST FLAG");
    // The expected verdicts: the second model must fail, or the checker proves nothing.
    return (fenced && !unfenced) ? 0 : 1;
}
