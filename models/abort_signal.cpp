#include "abort_signal.hpp"

#include "sim_time.hpp"

namespace cosim {

namespace {
// A single token longer than this (a day) is not a token; duration_units names the problem.
constexpr double kMaxTokenNs = 8.64e13;
}  // namespace

bool wait_unless_aborted(double ns, AbortSignal* abort) {
    const sc_core::sc_time duration = duration_ns(ns);
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

std::vector<uint64_t> token_ends(const std::vector<double>& durations_ns, uint64_t head_start_units) {
    std::vector<uint64_t> ends;
    ends.reserve(durations_ns.size());
    uint64_t at = now_units();
    for (size_t i = 0; i < durations_ns.size(); ++i) {
        at += round_units(durations_ns[i]) - (i == 0 ? head_start_units : 0);
        ends.push_back(at);
    }
    return ends;
}

int64_t TokensInFlight::take_due(int64_t limit) {
    const uint64_t now = now_units();
    int64_t due = taken_;
    while (due < limit && static_cast<size_t>(due) < ends_.size() && ends_[static_cast<size_t>(due)] <= now) ++due;
    const int64_t fresh = due - taken_;
    taken_ = due;
    return fresh;
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
    auto units = [&](size_t i) { return round_units(durations_ns[i]) - (i == 0 ? head_start_units : 0); };
    uint64_t total = 0;
    double total_ns = 0.0;
    for (size_t i = 0; i < durations_ns.size(); ++i) {
        // duration_ns refuses what the kernel's clock cannot hold: each token (negative,
        // not finite) and the whole run.
        if (!(durations_ns[i] >= 0.0 && durations_ns[i] <= kMaxTokenNs)) duration_units(durations_ns[i]);
        total_ns += durations_ns[i];
        total += units(i);
    }
    duration_units(total_ns);
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time duration = sc_core::sc_time::from_value(total);
    if (abort == nullptr && wake == nullptr) sc_core::wait(duration);
    else if (wake == nullptr) sc_core::wait(duration, abort->event);
    else if (abort == nullptr) sc_core::wait(duration, *wake);
    else sc_core::wait(duration, abort->event | *wake);
    run.aborted = abort != nullptr && abort->requested;
    const uint64_t elapsed = (sc_core::sc_time_stamp() - start).value();
    uint64_t done = 0;
    if (elapsed >= total) {
        run.completed = static_cast<int64_t>(durations_ns.size());
        done = total;
    } else {
        // Cut short: count the tokens whose end had passed (the same sums as above).
        for (size_t i = 0; i < durations_ns.size() && done + units(i) <= elapsed; ++i) {
            done += units(i);
            ++run.completed;
        }
    }
    // Time into the token that was under way (its head start included).
    run.partial_units = elapsed - done + (run.completed == 0 ? head_start_units : 0);
    return run;
}

}  // namespace cosim
