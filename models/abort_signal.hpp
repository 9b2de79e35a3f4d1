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
    uint64_t partial_units = 0;  // kernel time units into the unfinished token
    bool aborted = false;
};
// `durations_ns[i]` is token i's time; `head_start_units` of token 0 were spent before.
// The kernel time at which each token would end if the run started now and nothing cut it.
std::vector<uint64_t> token_ends(const std::vector<double>& durations_ns, uint64_t head_start_units);
TokenRun wait_tokens(const std::vector<double>& durations_ns, uint64_t head_start_units, AbortSignal* abort,
                     const sc_core::sc_event* wake = nullptr);

// The tokens of a run waited for at once, for those who look in on it meanwhile:
// how many have ended by now and were not yet handed out.
class TokensInFlight {
public:
    void begin(std::vector<uint64_t> ends) {
        ends_ = std::move(ends);
        taken_ = 0;
    }
    // Tokens ended by now (at most `limit` in all) not taken before; takes them.
    int64_t take_due(int64_t limit);
    void end() { ends_.clear(); }

private:
    std::vector<uint64_t> ends_;
    int64_t taken_ = 0;
};

}  // namespace cosim
