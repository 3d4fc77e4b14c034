// The private notify's missing fence, checked with Relacy (a C++11 memory-model checker; Debian's
// relacy-dev), which treats SeqCst accesses as C11 does (loom treats them as AcqRel, loom#180).
// See src/scheduler/sleep/README.md, "The private notify needs no fence".
//
// The store-buffering pattern between a worker that pushes a task and reads the sleep state to
// decide whether to wake anyone, and a worker that lists itself as parked and then re-scans:
// - pusher: the push (the LIFO slot's SeqCst swap of its pointer, crew-slot), then the notify's
//   SeqCst load of the state, with no fence between them;
// - parker: `list_parked`'s SeqCst read-modify-write of the state, its SeqCst fence, then the
//   re-scan's SeqCst load of the slot's pointer.
// A lost wakeup is the pusher seeing nobody parked while the parker's re-scan sees no task.
//
// Three models: the LIFO push as crew does it (SeqCst, no fence: must pass); a push that is a
// Release store, as a deque push is, with no fence (must fail: why every other notify fences);
// and that Release push with the fence (must pass).
// Build and run: loom-tests/relacy/run (CI's loom step).

#include <relacy/relacy.hpp>
#include <cstdio>

enum class Push { SeqCstNoFence, ReleaseNoFence, ReleaseFence };

template <Push kind>
struct private_notify : rl::test_suite<private_notify<kind>, 2> {
    rl::atomic<int> tail;   // the slot's tail: 1 once the task is pushed
    rl::atomic<int> state;  // the sleep state: 1 once the parker is listed
    int pusher_saw_parked;
    int parker_saw_task;

    void before() {
        tail($).store(0, rl::mo_relaxed);
        state($).store(0, rl::mo_relaxed);
        pusher_saw_parked = -1;
        parker_saw_task = -1;
    }

    void thread(unsigned index) {
        if (index == 0) {
            if (kind == Push::SeqCstNoFence) {
                int expected = 0;
                tail($).compare_exchange_strong(expected, 1, rl::mo_seq_cst);
            } else {
                tail($).store(1, rl::mo_release);
                if (kind == Push::ReleaseFence) {
                    rl::atomic_thread_fence(rl::mo_seq_cst, $);
                }
            }
            pusher_saw_parked = state($).load(rl::mo_seq_cst);
        } else {
            state($).fetch_add(1, rl::mo_seq_cst);
            rl::atomic_thread_fence(rl::mo_seq_cst, $);
            parker_saw_task = tail($).load(rl::mo_seq_cst);
        }
    }

    void after() {
        // Not both blind: either the pusher wakes the parker, or the parker finds the task.
        RL_ASSERT(pusher_saw_parked == 1 || parker_saw_task == 1);
    }
};

int main() {
    rl::test_params params;
    params.search_type = rl::sched_full;
    bool lifo = rl::simulate<private_notify<Push::SeqCstNoFence>>(params);
    bool release_unfenced = rl::simulate<private_notify<Push::ReleaseNoFence>>(params);
    bool release_fenced = rl::simulate<private_notify<Push::ReleaseFence>>(params);
    std::printf("SeqCst push, no fence: %s\n", lifo ? "no lost wakeup" : "LOST WAKEUP");
    std::printf("Release push, no fence: %s\n", release_unfenced ? "no lost wakeup" : "LOST WAKEUP");
    std::printf("Release push, fence: %s\n", release_fenced ? "no lost wakeup" : "LOST WAKEUP");
    // The expected verdicts: the second model must fail, or the checker proves nothing.
    return (lifo && !release_unfenced && release_fenced) ? 0 : 1;
}
