#include "speculation_section.hpp"

#include <vector>

#include <pybind11/stl.h>

#include "param_dicts.hpp"

namespace py = pybind11;

namespace cosim::bindings {

std::shared_ptr<const GpuTiming> drafter_timing(const py::dict& gpu, const py::dict& model) {
    return std::make_shared<const GpuTiming>("speculation.drafter", gpu_params(gpu), model_spec(model));
}

SpeculationSection read_speculation(const py::dict& s) {
    SpeculationSection out;
    auto setup = std::make_shared<SpecDecodeSetup>();
    setup->draft_tokens = s["draft_tokens"].cast<int64_t>();
    setup->acceptance = s["acceptance"].cast<std::vector<double>>();
    setup->heuristic = s["heuristic"].cast<bool>();
    setup->seed = s["seed"].cast<uint64_t>();
    setup->lookup_ns = s["lookup_ns"].cast<double>();
    setup->validate("speculation");
    out.setup = setup;
    if (!s["drafter"].is_none()) {
        const py::dict drafter = s["drafter"].cast<py::dict>();
        out.drafter = drafter_timing(section(drafter, "gpu"), section(drafter, "model"));
    }
    return out;
}

}  // namespace cosim::bindings
