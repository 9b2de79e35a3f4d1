#pragma once
// One system family's side of a run behind the generic entry (simulate.hpp): its top
// module elaborated from the description, the trace's chunks read into it, its results
// exported. One file per family, each registered by the name of its top (system_runs.cpp):
//   stepwise        StepwiseTop: gpu-baseline, gpu-stepahead, heteroreason, fpga-baseline
//   autoregressive  AutoregressiveTop: the target alone
// The Python registry names the top each system runs on (cosim/systems/, `top`).
#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "request_dispatcher.hpp"

namespace cosim::bindings {

// What a run asks for besides the system: each family reads the ones it uses.
struct RunOptions {
    bool keep_activities = false;
    std::string vcd_path;  // a waveform's stem, "" for none
    bool vcd_every_token = false;
    pybind11::object decide = pybind11::none();  // live: the policy's entry, None to replay
    int max_backtracks = 0;
    bool scored_refinements = true;
    int64_t shared_prefix_tokens = 0;  // a system prompt every request shares
    bool ask_drafts = false;  // live, token-level: the policy sets each pass's drafts
};

class SystemRun {
public:
    virtual ~SystemRun() = default;
    virtual RequestDispatcher& dispatcher() = 0;
    // A chunk of the trace from its tables (events, problems); counted in `problems`.
    virtual TraceChunk read_chunk(const pybind11::tuple& tables) = 0;
    // The problems finished since the last call, as columns, forgotten here.
    virtual pybind11::dict take_finished() = 0;
    virtual size_t taken() const = 0;    // handed over so far
    virtual size_t pending() const = 0;  // finished and not yet handed over
    // Between kernel slices, before the trace: answers what the design waits on from Python
    // (a live policy's decisions); true if it did (the design has more to do).
    virtual bool answer(pybind11::object& /*error*/) { return false; }
    // The first error the design stopped with.
    virtual std::exception_ptr error() const = 0;
    // Each device's totals and, when kept, the activities, after the finished problems.
    virtual void results(pybind11::dict& out) = 0;
    // What the trace's rows are, in the words of an incomplete run's error.
    virtual const char* unit() const { return "problems"; }
};

// A family's factory: checks the description, claims the process (claim_process) and
// elaborates the top.
using SystemRunFactory = std::unique_ptr<SystemRun> (*)(const pybind11::dict& system, const RunOptions& options);

// The factory of the top named `top`; ConfigError naming the known ones otherwise.
SystemRunFactory system_run(const std::string& top);

// Each family's factory (one file each).
std::unique_ptr<SystemRun> stepwise_run(const pybind11::dict& system, const RunOptions& options);
std::unique_ptr<SystemRun> autoregressive_run(const pybind11::dict& system, const RunOptions& options);

}  // namespace cosim::bindings
