#pragma once
// Running the SystemC kernel from Python: once per process, in slices that
// release the GIL and check for signals (Ctrl-C), with errors from inside
// processes carried out as the C++ exception that was thrown.
#include <cstdint>
#include <exception>
#include <functional>

#include <pybind11/pybind11.h>
#include <systemc>

namespace cosim::bindings {

// Throws SimulationError if this process already elaborated a design: the
// SystemC kernel cannot be elaborated twice in one process.
void claim_process();

// Runs `body` as the one SC_THREAD that drives a standalone model; an exception
// it throws stops the simulation and is rethrown by run_to_completion.
class Driver : public sc_core::sc_module {
public:
    Driver(sc_core::sc_module_name name, std::function<void()> body);
    std::exception_ptr error() const { return error_; }

private:
    void run();
    std::function<void()> body_;
    std::exception_ptr error_;
};

struct RunStats {
    double wall_s = 0.0;
    double sim_ns = 0.0;
    uint64_t deltas = 0;
};

RunStats run_to_completion(const Driver& driver);
// {"wall_s", "sim_ns", "kernel_deltas"}: what every standalone run returns first.
pybind11::dict run_stats(const RunStats& stats);
// The same for a design whose own process reports its error. `between`, if given,
// runs between slices with the GIL held (the simulation paused) and returns true
// if it gave the design more to do (a process was waiting on it).
RunStats run_to_completion(const std::function<std::exception_ptr()>& error,
                           const std::function<bool()>& between = {});

}  // namespace cosim::bindings
