// crew-slot's owner take racing a thief's take, checked with Relacy (a C++11 memory-model
// checker; Debian's relacy-dev), which treats SeqCst fences and accesses as C11 does. See
// slot/src/lib.rs (the protocol) and slot/src/asymmetric.rs (the fence pair).
//
// The slot holds a task's number (0: empty). The owner takes with a load and a store when it
// sees no thief, after a Dekker pair: it stores `busy`, passes the light half, loads `thieves`
// (Acquire); a thief adds itself to `thieves`, passes the heavy half, loads `busy` (Acquire)
// and swaps only if the owner is not busy. In membarrier mode the halves are a compiler fence
// and the syscall, which runs a full barrier somewhere in the owner's program: modelled at its
// one point that matters, between the owner's store of `busy` and its load of `thieves`, as a
// SeqCst fence (the argument of progress.cpp). In fence mode both halves are SeqCst fences:
// exactly this model.
//
// The owner takes task 1, puts task 2 in (a SeqCst swap), and takes again; the thief takes
// twice. The property: each task comes out exactly once (taken by one side, or left in the
// slot), never twice and never lost.
//
// Two models: the owner with the light half (must pass); without it (must fail: what the loom
// planted bug `slot_owner_no_barrier` plants).
// Build and run: loom-tests/relacy/run (CI's loom step).

#include <relacy/relacy.hpp>
#include <cstdio>

template <bool light_half>
struct slot_take : rl::test_suite<slot_take<light_half>, 2> {
    rl::atomic<int> ptr;
    rl::atomic<int> busy;
    rl::atomic<int> thieves;
    int out[3];  // how many times each task (1, 2) came out

    void before() {
        ptr($).store(1, rl::mo_relaxed);
        busy($).store(0, rl::mo_relaxed);
        thieves($).store(0, rl::mo_relaxed);
        out[0] = out[1] = out[2] = 0;
    }

    void owner_take() {
        busy($).store(1, rl::mo_relaxed);
        if (light_half) {
            rl::atomic_thread_fence(rl::mo_seq_cst, $);
        }
        int taken;
        if (thieves($).load(rl::mo_acquire) != 0) {
            taken = ptr($).exchange(0, rl::mo_seq_cst);
        } else {
            taken = ptr($).load(rl::mo_relaxed);
            ptr($).store(0, rl::mo_relaxed);
        }
        busy($).store(0, rl::mo_release);
        out[taken] += 1;
    }

    void thief_take() {
        if (ptr($).load(rl::mo_seq_cst) == 0) {
            return;
        }
        thieves($).fetch_add(1, rl::mo_seq_cst);
        rl::atomic_thread_fence(rl::mo_seq_cst, $);  // the heavy half
        int taken = 0;
        if (busy($).load(rl::mo_acquire) == 0) {
            taken = ptr($).exchange(0, rl::mo_seq_cst);
        }
        thieves($).fetch_sub(1, rl::mo_release);
        out[taken] += 1;
    }

    void thread(unsigned index) {
        if (index == 0) {
            owner_take();
            int displaced = ptr($).exchange(2, rl::mo_seq_cst);
            out[displaced] += 1;
            owner_take();
        } else {
            thief_take();
            thief_take();
        }
    }

    void after() {
        int left = ptr($).load(rl::mo_relaxed);
        out[left] += 1;
        RL_ASSERT(out[1] == 1 && out[2] == 1);
    }
};

int main() {
    rl::test_params params;
    params.search_type = rl::sched_full;
    bool fenced = rl::simulate<slot_take<true>>(params);
    bool unfenced = rl::simulate<slot_take<false>>(params);
    std::printf("Slot take, light half: %s\n", fenced ? "each task once" : "A TASK TWICE OR LOST");
    std::printf("Slot take, no light half: %s\n", unfenced ? "each task once" : "A TASK TWICE OR LOST");
    // The expected verdicts: the second model must fail, or the checker proves nothing.
    return (fenced && !unfenced) ? 0 : 1;
}
