#pragma once
// Durations in ns become sc_time here, and only here: a value the kernel cannot
// hold (negative, not finite, or past its 64-bit clock) is an error, never a clamp.
#include <systemc>

namespace cosim {

// The duration `ns` from now; SimulationError if it is not a usable time.
sc_core::sc_time duration_ns(double ns);

}  // namespace cosim
