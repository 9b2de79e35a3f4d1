#include "sim_time.hpp"
#include "kernel_run.hpp"

#include <algorithm>
#include <chrono>

#include <pybind11/pybind11.h>

#include "errors.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {
bool g_claimed = false;

// The slice of simulated time between signal checks adapts so that one slice
// takes roughly this much wall time, whatever the event density.
constexpr double kTargetSliceWallS = 0.05;
constexpr double kFirstSliceNs = 1e3;
constexpr double kSliceGrowth = 2.0;
// A slice never grows past 10^6 s: its end must stay within SystemC's 64-bit picosecond
// clock (about 1.8 x 10^7 s), where a longer one would wrap.
constexpr double kLongestSliceNs = 1e15;
}  // namespace

void claim_process() {
    if (g_claimed)
        throw SimulationError(
            "this process has already elaborated a SystemC design; run each simulation in its own worker "
            "(cosim does this for you)");
    g_claimed = true;
    // Errors must reach Python as exceptions, never abort the interpreter.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
    // Informational chatter (e.g. "simulation stopped by user" after an error) is not for users.
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    // Several processes that fail in one delta each stop the kernel; the first error is the
    // one reported, and SystemC's warning (W545) about the later stops is noise on stdout.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_SIMULATION_STOP_CALLED_TWICE_, sc_core::SC_DO_NOTHING);
}

Driver::Driver(sc_core::sc_module_name name, std::function<void()> body)
    : sc_core::sc_module(name), body_(std::move(body)) {
    SC_HAS_PROCESS(Driver);
    SC_THREAD(run);
}

void Driver::run() {
    try {
        body_();
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

RunStats run_to_completion(const Driver& driver) {
    return run_to_completion([&driver] { return driver.error(); });
}

RunStats run_to_completion(const std::function<std::exception_ptr()>& error, const std::function<bool()>& between) {
    using clock = std::chrono::steady_clock;
    RunStats stats;
    const auto start = clock::now();
    double slice_ns = kFirstSliceNs;
    {
        py::gil_scoped_release nogil;
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    for (;;) {
        if (sc_core::sc_get_status() == sc_core::SC_STOPPED || error()) break;
        const bool fed = between && between();
        if (sc_core::sc_get_status() == sc_core::SC_STOPPED) break;  // `between` stopped it (a policy's error)
        if (!fed && !sc_core::sc_pending_activity()) break;
        const auto slice_start = clock::now();
        {
            py::gil_scoped_release nogil;
            // Never a slice shorter than the gap to the next event: a slice without
            // activity would make SystemC warn (W571) and waste a round trip.
            const sc_core::sc_time slice(slice_ns, sc_core::SC_NS);
            const sc_core::sc_time gap = sc_core::sc_time_to_pending_activity();
            sc_core::sc_start(gap > slice ? gap : slice, sc_core::SC_EXIT_ON_STARVATION);
        }
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        const double wall = std::chrono::duration<double>(clock::now() - slice_start).count();
        if (wall < kTargetSliceWallS) slice_ns = std::min(slice_ns * kSliceGrowth, kLongestSliceNs);
        else if (wall > 2.0 * kTargetSliceWallS) slice_ns /= kSliceGrowth;
    }
    if (error()) std::rethrow_exception(error());
    stats.wall_s = std::chrono::duration<double>(clock::now() - start).count();
    stats.sim_ns = now_ns();
    stats.deltas = sc_core::sc_delta_count();
    return stats;
}

pybind11::dict run_stats(const RunStats& stats) {
    pybind11::dict out;
    out["wall_s"] = stats.wall_s;
    out["sim_ns"] = stats.sim_ns;
    out["kernel_deltas"] = stats.deltas;
    return out;
}

}  // namespace cosim::bindings
