#pragma once
// Durations in ns become sc_time here, and only here: a value the kernel cannot
// hold (negative, not finite, or past its 64-bit clock) is an error, never a clamp.
#include <systemc>

namespace cosim {

// The duration `ns` from now; SimulationError if it is not a usable time.
sc_core::sc_time duration_ns(double ns);

// A time in ns, and the current simulated time in ns (the unit of every model's timing).
inline double to_ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }
inline double now_ns() { return to_ns(sc_core::sc_time_stamp()); }

}  // namespace cosim
