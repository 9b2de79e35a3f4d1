#pragma once
// The devices' timing formulas evaluated at given points, with no simulation:
// pure arithmetic, so it runs in the calling process (fits, design-space
// figures, `cosim params`), never elaborating SystemC.
#include <pybind11/pybind11.h>

namespace cosim::bindings {

// points: (phase, tokens, context) with phase "decode" (tokens = 1) or "prefill".
// Returns {"ns", "compute_ns", "memory_ns", "pipeline_ns", "bound", "port_gbps", "decoder_gbps"}.
pybind11::dict fpga_timing(const pybind11::dict& fpga, const pybind11::dict& hbm, const pybind11::dict& model,
                           const pybind11::object& profile, const pybind11::list& points);
// Returns {"ns", "overhead_ns", "compute_ns", "memory_ns", "bound"} (compute and memory for prefill points).
pybind11::dict gpu_timing(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::object& profile,
                          const pybind11::list& points);

}  // namespace cosim::bindings
