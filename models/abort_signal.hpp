#pragma once
// A request to stop a long device operation (a draft step, a target run) at
// the next token boundary or at once, from another process.
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

}  // namespace cosim
