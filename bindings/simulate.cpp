#include "sim_time.hpp"
#include "simulate.hpp"

#include <chrono>
#include <memory>
#include <string>

#include "decision_broker.hpp"
#include "errors.hpp"
#include "kernel_run.hpp"
#include "system_run.hpp"
#include "workflow_inputs.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

RunOptions read_run_options(const py::dict& d) {
    static const char* const known[] = {"keep_activities", "vcd_path",           "vcd_every_token",     "decide",
                                        "max_backtracks",  "scored_refinements", "shared_prefix_tokens",
                                        "ask_drafts"};
    for (const auto& item : d) {
        const std::string key = py::str(item.first);
        bool found = false;
        for (const char* k : known) found = found || key == k;
        if (!found) throw ConfigError("run option '" + key + "': unknown");
    }
    RunOptions o;
    if (d.contains("keep_activities")) o.keep_activities = d["keep_activities"].cast<bool>();
    if (d.contains("vcd_path")) o.vcd_path = d["vcd_path"].cast<std::string>();
    if (d.contains("vcd_every_token")) o.vcd_every_token = d["vcd_every_token"].cast<bool>();
    if (d.contains("decide")) o.decide = d["decide"];
    if (d.contains("max_backtracks")) o.max_backtracks = d["max_backtracks"].cast<int>();
    if (d.contains("scored_refinements")) o.scored_refinements = d["scored_refinements"].cast<bool>();
    if (d.contains("ask_drafts")) o.ask_drafts = d["ask_drafts"].cast<bool>();
    if (d.contains("shared_prefix_tokens")) o.shared_prefix_tokens = d["shared_prefix_tokens"].cast<int64_t>();
    return o;
}

}  // namespace

py::dict simulate(const std::string& top, const py::dict& system, const py::function& next_chunk,
                  const py::dict& options) {
    const RunOptions o = read_run_options(options);
    const std::unique_ptr<SystemRun> run = system_run(top)(system, o);
    RequestDispatcher& dispatcher = run->dispatcher();
    size_t fed = 0;
    double feed_s = 0.0;    // spent reading the trace (Python), not simulating
    py::object feed_error;  // the exception reading the trace raised, if any
    // Between kernel slices, on this thread with the GIL: what the design waits on from
    // Python, then the next chunk when the dispatcher asks.
    auto feed = [&]() {
        if (run->answer(feed_error)) return true;
        if (!dispatcher.wants_chunk()) return false;
        const auto start = std::chrono::steady_clock::now();
        TraceChunk chunk;
        // Called through the C API: an error the feed raises (a bad problem found while
        // streaming) is kept as the Python exception it is and handed back for Python to
        // raise, the trace ending here, rather than thrown through C++ frames once the
        // kernel's coroutine stacks have run (which AddressSanitizer cannot follow).
        // The problems finished since the last call go with it: the caller keeps them
        // (in memory or on disk) and the engine forgets them.
        const py::dict finished = run->take_finished();
        PyObject* raw_next = PyObject_CallOneArg(next_chunk.ptr(), finished.ptr());
        if (raw_next == nullptr) {
            feed_error = py::error_already_set().value();
            PyErr_Clear();
            dispatcher.supply(std::move(chunk));
            return true;
        }
        const py::object next = py::reinterpret_steal<py::object>(raw_next);
        if (!next.is_none()) {
            const auto tables = next.cast<py::tuple>();
            if (tables.size() != 2) throw ConfigError("trace chunk: expected (events, problems)");
            chunk = run->read_chunk(tables);
            if (chunk.problems.empty()) throw ConfigError("trace chunk: no problems (None ends the trace)");
            fed += chunk.problems.size();
        }
        dispatcher.supply(std::move(chunk));
        feed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return true;
    };
    const RunStats stats = run_to_completion([&] { return run->error(); }, feed);
    py::dict out;
    // The kernel's own time: the trace is read (drawn, parsed) between problems, in Python.
    out["wall_s"] = stats.wall_s - feed_s;
    out["feed_s"] = feed_s;
    out["sim_ns"] = stats.sim_ns;
    out["kernel_deltas"] = stats.deltas;
    if (feed_error) {
        out["trace_error"] = feed_error;
        return out;
    }
    const size_t done = run->taken() + run->pending();
    if (done != fed)
        throw SimulationError("the simulation stopped after " + std::to_string(done) + " of " + std::to_string(fed) +
                              " " + run->unit() + " at " + sc_core::sc_time_stamp().to_string() +
                              " (a device waited on nothing)");
    out["problems"] = run->take_finished();
    run->results(out);
    return out;
}

py::dict event_kinds() {
    py::dict out;
    for (int k = 0; k < kEventKindCount; ++k) out[event_kind_name(static_cast<EventKind>(k))] = k;
    return out;
}

py::dict decision_kinds() {
    py::dict out;
    for (int k = 0; k < kDecisionKindCount; ++k) out[decision_kind_name(static_cast<DecisionKind>(k))] = k;
    return out;
}

}  // namespace cosim::bindings
