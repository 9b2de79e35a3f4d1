#pragma once
// The facade of the workflow engine: a system description and a trace (as
// arrays, crossing once) in; per-problem metrics and, on request, every
// device activity out.
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace cosim::bindings {

pybind11::dict simulate_workflow(const pybind11::dict& system, const pybind11::array_t<int64_t>& events,
                                 const pybind11::array_t<int64_t>& problems, bool keep_activities,
                                 const std::string& vcd_path, bool vcd_every_token);

}  // namespace cosim::bindings
