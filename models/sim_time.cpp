#include "sim_time.hpp"

#include <cmath>
#include <sstream>

#include "errors.hpp"

namespace cosim {

namespace {
// The kernel counts time in 64-bit units of its resolution; stay a factor of two clear of the top.
constexpr double kMaxUnits = 9.2e18;
}  // namespace

sc_core::sc_time duration_ns(double ns) {
    // The resolution is frozen once the kernel runs, which it does whenever this is called.
    static const double units_per_ns = 1e-9 / sc_core::sc_get_time_resolution().to_seconds();
    const double now_units = static_cast<double>(sc_core::sc_time_stamp().value());
    if (!(ns >= 0.0) || now_units + ns * units_per_ns > kMaxUnits) {  // NaN and infinity fail too
        std::ostringstream out;
        out << "a duration of " << ns << " ns at " << sc_core::sc_time_stamp()
            << " cannot be simulated (negative, not finite, or past the kernel's clock of about "
            << kMaxUnits / units_per_ns * 1e-9 << " s); check the parameters that make it (rates, clocks, sizes)";
        throw SimulationError(out.str());
    }
    return sc_core::sc_time(ns, sc_core::SC_NS);
}

}  // namespace cosim
