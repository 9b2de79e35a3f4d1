#include "abort_signal.hpp"

#include "sim_time.hpp"

namespace cosim {

bool wait_unless_aborted(double ns, AbortSignal* abort) {
    const sc_core::sc_time duration = duration_ns(ns);
    if (abort == nullptr) {
        sc_core::wait(duration);
        return true;
    }
    if (abort->requested) return false;
    sc_core::wait(duration, abort->event);
    return !abort->requested;
}

TokenRun wait_tokens(const std::vector<double>& durations_ns, double head_start_ns, AbortSignal* abort,
                     const sc_core::sc_event* wake) {
    TokenRun run;
    if (durations_ns.empty()) return run;
    if (abort != nullptr && abort->requested) {
        run.aborted = true;
        run.partial_ns = head_start_ns;
        return run;
    }
    // Each token's time is rounded to the kernel's resolution exactly as a wait of
    // that token alone would be, so one wait for all of them lands on the same instant.
    const double units_per_ns = 1e-9 / sc_core::sc_get_time_resolution().to_seconds();
    auto units = [units_per_ns](double ns) { return static_cast<uint64_t>(ns * units_per_ns + 0.5); };
    std::vector<uint64_t> ends;
    ends.reserve(durations_ns.size());
    uint64_t total = 0;
    double total_ns = 0.0;
    for (size_t i = 0; i < durations_ns.size(); ++i) {
        const double ns = i == 0 ? durations_ns[0] - head_start_ns : durations_ns[i];
        total_ns += ns;
        duration_ns(total_ns);  // refuses what the kernel's clock cannot hold before it is counted
        total += units(ns);
        ends.push_back(total);
    }
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time duration = duration_ns(static_cast<double>(total) / units_per_ns);
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
    run.partial_ns = static_cast<double>(elapsed - done) / units_per_ns + (run.completed == 0 ? head_start_ns : 0.0);
    return run;
}

}  // namespace cosim
