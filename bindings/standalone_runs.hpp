#pragma once
// The narrow facade: each function elaborates one small design around one
// model, replays a script of operations in simulated time and returns plain
// Python data (times in ns, counters, energy). One call per process.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace cosim::bindings {

pybind11::dict pcie_transfers(const pybind11::dict& link, const pybind11::list& transfers);
pybind11::dict fpga_run(const pybind11::dict& fpga, const pybind11::dict& hbm, const pybind11::dict& model,
                        const pybind11::dict& power, const pybind11::object& profile, const pybind11::list& ops,
                        bool record_tokens);
pybind11::dict gpu_spec_run(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::dict& power,
                            const pybind11::object& drafter_gpu, const pybind11::object& drafter_model, int64_t prompt,
                            int64_t output, int64_t draft_tokens, const std::vector<double>& acceptance, uint64_t seed,
                            double lookup_ns, uint64_t request);
pybind11::dict gpu_run(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::dict& power,
                       const pybind11::object& profile, const pybind11::list& ops, bool record_tokens);
pybind11::dict power_run(const pybind11::dict& power, const pybind11::list& segments);
// `implementation`: tlm, rtl, or rtl-faulty (the RTL built with an accept that keeps
// valid, which the behavioural checker must catch).
pybind11::list kvmu_run(int64_t capacity_tokens, const pybind11::list& ops, int32_t depth,
                        const std::string& implementation);

}  // namespace cosim::bindings
