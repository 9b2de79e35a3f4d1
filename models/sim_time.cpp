#include "sim_time.hpp"

#include <cmath>
#include <sstream>

#include "errors.hpp"

namespace cosim {

namespace {
// The kernel counts time in 64-bit units of its resolution; stay a factor of two clear of the top.
constexpr double kMaxUnits = 9.2e18;
constexpr double kFsPerNs = 1e6;
constexpr double kFsPerSecond = 1e15;
}  // namespace

const TimeScale& time_scale() {
    static const TimeScale scale = [] {
        // One unit of resolution in fs: a power of ten, so the rounding recovers it exactly.
        const double fs = std::round(sc_core::sc_get_time_resolution().to_seconds() * kFsPerSecond);
        return TimeScale{kFsPerNs / fs, fs / kFsPerNs, fs < kFsPerNs};
    }();
    return scale;
}

uint64_t duration_units(double ns) {
    const double units_per_ns = time_scale().units_per_ns;
    const double now = static_cast<double>(now_units());
    if (!(ns >= 0.0) || now + ns * units_per_ns > kMaxUnits) {  // NaN and infinity fail too
        std::ostringstream out;
        out << "a duration of " << ns << " ns at " << sc_core::sc_time_stamp()
            << " cannot be simulated (negative, not finite, or past the kernel's clock of about "
            << kMaxUnits / units_per_ns * 1e-9 << " s); check the parameters that make it (rates, clocks, sizes)";
        throw SimulationError(out.str());
    }
    return round_units(ns);
}

uint64_t instant_units(int64_t ns) {
    const TimeScale& s = time_scale();
    if (ns < 0 || static_cast<double>(ns) * s.units_per_ns > kMaxUnits) {
        std::ostringstream out;
        out << "the instant " << ns << " ns cannot be simulated (negative or past the kernel's clock of about "
            << kMaxUnits / s.units_per_ns * 1e-9 << " s)";
        throw SimulationError(out.str());
    }
    const auto n = static_cast<uint64_t>(ns);
    if (s.fine) return n * static_cast<uint64_t>(std::llround(s.units_per_ns));
    const auto per_unit = static_cast<uint64_t>(std::llround(s.ns_per_unit));
    return (n + per_unit - 1) / per_unit;
}

int64_t units_to_ps(uint64_t units) {
    // One unit of resolution in ps; below 1 ps (fs resolutions) a unit is not a whole picosecond.
    static const int64_t ps_per_unit = [] {
        const double ps = std::round(sc_core::sc_get_time_resolution().to_seconds() * 1e12);
        if (ps < 1.0) throw SimulationError("internal: the kernel's resolution is finer than 1 ps");
        return static_cast<int64_t>(ps);
    }();
    return static_cast<int64_t>(units) * ps_per_unit;
}

}  // namespace cosim
