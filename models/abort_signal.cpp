#include "abort_signal.hpp"

#include "sim_time.hpp"

namespace cosim {

bool wait_unless_aborted(double ns, AbortSignal* abort) {
    const sc_core::sc_time duration = duration_ns(ns);
    if (abort == nullptr) {
        sc_core::wait(duration);
        return true;
    }
    return wait_units_unless_aborted(duration.value(), abort);
}

bool wait_units_unless_aborted(uint64_t units, AbortSignal* abort) {
    const sc_core::sc_time duration = sc_core::sc_time::from_value(units);
    if (abort == nullptr) {
        sc_core::wait(duration);
        return true;
    }
    if (abort->requested) return false;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    sc_core::wait(duration, abort->event);
    // A token that ends at the very instant of the abort counts as done, as in wait_tokens.
    return sc_core::sc_time_stamp() - start >= duration;
}

TokenRun wait_tokens(const std::vector<double>& durations_ns, uint64_t head_start_units, AbortSignal* abort,
                     const sc_core::sc_event* wake) {
    TokenRun run;
    if (durations_ns.empty()) return run;
    if (abort != nullptr && abort->requested) {
        run.aborted = true;
        run.partial_units = head_start_units;
        return run;
    }
    // Each token's time is rounded to the kernel's resolution exactly as a wait of
    // that token alone would be, so one wait for all of them lands on the same instant.
    std::vector<uint64_t> ends;
    ends.reserve(durations_ns.size());
    uint64_t total = 0;
    double total_ns = 0.0;
    for (size_t i = 0; i < durations_ns.size(); ++i) {
        total_ns += durations_ns[i];
        // The kernel's own rounding of a wait of this token alone; duration_ns refuses
        // what the kernel's clock cannot hold.
        total += duration_ns(durations_ns[i]).value() - (i == 0 ? head_start_units : 0);
        ends.push_back(total);
    }
    duration_ns(total_ns);  // the whole run, too
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time duration = sc_core::sc_time::from_value(total);
    if (abort == nullptr && wake == nullptr) sc_core::wait(duration);
    else if (wake == nullptr) sc_core::wait(duration, abort->event);
    else if (abort == nullptr) sc_core::wait(duration, *wake);
    else sc_core::wait(duration, abort->event | *wake);
    run.aborted = abort != nullptr && abort->requested;
    const uint64_t elapsed = (sc_core::sc_time_stamp() - start).value();
    while (run.completed < static_cast<int64_t>(ends.size()) && ends[static_cast<size_t>(run.completed)] <= elapsed)
        ++run.completed;
    const uint64_t done = run.completed == 0 ? 0 : ends[static_cast<size_t>(run.completed - 1)];
    // Time into the token that was under way (its head start included).
    run.partial_units = elapsed - done + (run.completed == 0 ? head_start_units : 0);
    return run;
}

}  // namespace cosim
