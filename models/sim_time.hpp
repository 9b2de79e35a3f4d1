#pragma once
// Durations in ns become sc_time here, and only here: a value the kernel cannot
// hold (negative, not finite, or past its 64-bit clock) is an error, never a clamp.
//
// These run for every simulated token, so they work on the kernel's integer time
// directly: sc_time's double constructor and to_seconds() look up the simulation
// context and its time parameters on every call.
#include <cstdint>

#include <systemc>

namespace cosim {

// One watt for one nanosecond, in joules: every model's energy is watts x ns.
constexpr double kJoulesPerWattNs = 1e-9;

// The kernel's time resolution, read once: it is frozen when the kernel runs,
// which it does whenever these are called.
struct TimeScale {
    double units_per_ns;  // the kernel's own scale factor for SC_NS (1000 at 1 ps)
    double ns_per_unit;   // its inverse, exact when the resolution is 1 ns or coarser
    bool fine;            // resolution finer than 1 ns: divide by units_per_ns, which is exact
};
const TimeScale& time_scale();

// `ns` in kernel units, rounded as sc_time(ns, SC_NS) rounds; SimulationError if
// it is not a usable duration from now.
uint64_t duration_units(double ns);
// The same rounding without the check, for a run of durations whose total is checked
// once: `ns` must be finite and non-negative.
inline uint64_t round_units(double ns) {
    // The same operations, in the same order, as sc_time(double, SC_NS): round half up.
    volatile double scaled = ns * time_scale().units_per_ns + 0.5;
    return static_cast<uint64_t>(static_cast<int64_t>(scaled));
}
// The duration `ns` from now; SimulationError if it is not a usable time.
inline sc_core::sc_time duration_ns(double ns) { return sc_core::sc_time::from_value(duration_units(ns)); }

// A kernel time in ns, and the current simulated time in ns (the unit of every model's timing).
inline double units_to_ns(uint64_t units) {
    const TimeScale& s = time_scale();
    return s.fine ? static_cast<double>(units) / s.units_per_ns : static_cast<double>(units) * s.ns_per_unit;
}
inline double to_ns(const sc_core::sc_time& t) { return units_to_ns(t.value()); }
inline uint64_t now_units() { return sc_core::sc_time_stamp().value(); }
inline double now_ns() { return units_to_ns(now_units()); }

// Times within this of each other are one instant (ns values round-tripped through kernel units).
constexpr double kTimeEpsilonNs = 1e-3;
// Waits until kernel time `units`, unless it has passed. Call from an SC_THREAD. Every
// instant the models wait for is kept in kernel units: a time in ns as a double cannot
// hold every picosecond past 2^53 ps (about 9,007 s), so a wait for one could end a few
// picoseconds before the instant it waits for.
inline void at_least_units(uint64_t units) {
    const uint64_t now = now_units();
    if (units > now) sc_core::wait(sc_core::sc_time::from_value(units - now));
}
// Waits until `ns` (a time in ns that no kernel instant gave: a user's window), unless it
// has passed. Call from an SC_THREAD.
inline void at_least(double ns) {
    const double now = now_ns();
    if (ns > now + kTimeEpsilonNs) sc_core::wait(duration_ns(ns - now));
}
// A whole number of ns from time 0 as a kernel time, exactly (an arrival); a resolution
// coarser than 1 ns rounds up, so the instant is never before `ns`. SimulationError if the
// kernel's clock cannot hold it.
uint64_t instant_units(int64_t ns);
// A kernel time in whole picoseconds: the engine's exact time base for request times
// (int64 holds 106 days of them).
int64_t units_to_ps(uint64_t units);

}  // namespace cosim
