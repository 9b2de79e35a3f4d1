#pragma once
// A request to stop a long device operation (a draft step, a target run) at
// the next token boundary or at once, from another process.
#include <cstdint>
#include <vector>

#include <systemc>

namespace cosim {

struct AbortSignal {
    sc_core::sc_event event;
    bool requested = false;

    void request() {
        requested = true;
        event.notify(sc_core::SC_ZERO_TIME);
    }
};

// Waits `ns`, or less if `abort` is requested meanwhile; true if it ran the full time.
bool wait_unless_aborted(double ns, AbortSignal* abort);

// Consecutive tokens simulated with one wait for all of them (when nobody needs
// an event per token): how many finished before an abort or `wake` cut the wait
// short, and how long the unfinished one had run.
struct TokenRun {
    int64_t completed = 0;
    double partial_ns = 0.0;
    bool aborted = false;
};
// `durations_ns[i]` is token i's time; `head_start_ns` of token 0 was spent before.
TokenRun wait_tokens(const std::vector<double>& durations_ns, double head_start_ns, AbortSignal* abort,
                     const sc_core::sc_event* wake = nullptr);

}  // namespace cosim
