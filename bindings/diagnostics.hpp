#pragma once
// Measurements and self-tests of the kernel and of this build, for bench/ and tests:
// not models. Each call elaborates its own small design, so one call per process.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace cosim::bindings {

// The bare kernel cost: one b_transport + wait per transaction, no model.
pybind11::dict kernel_floor(int64_t transactions, double delay_ns);
// Each duration as the kernel's sc_time(ns, SC_NS) rounds it and as the models' fast
// path does, and back to ns both ways.
pybind11::dict time_rounding(const std::vector<double>& durations_ns);
// A SystemC process reports SC_ERROR with `message`: SystemC errors must surface as
// Python exceptions in this build.
void systemc_selftest(const std::string& message);

}  // namespace cosim::bindings
