#include "abort_signal.hpp"

namespace cosim {

bool wait_unless_aborted(double ns, AbortSignal* abort) {
    const sc_core::sc_time duration(ns, sc_core::SC_NS);
    if (abort == nullptr) {
        sc_core::wait(duration);
        return true;
    }
    if (abort->requested) return false;
    sc_core::wait(duration, abort->event);
    return !abort->requested;
}

}  // namespace cosim
