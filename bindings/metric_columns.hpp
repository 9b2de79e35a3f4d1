#pragma once
// The engine's numbers as the columns Python reads, one loop over the declared lists
// (cosim/schema/, generated into cosim_params.hpp): a column added to the declarations is
// a field here and an exported column with no further edit.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "cosim_params.hpp"
#include "workflow_inputs.hpp"

namespace cosim::bindings {

// The engine's numbers of finished problems, one column each (int64 picoseconds for instants).
pybind11::dict metric_columns(const std::vector<ProblemMetrics>& ms);

#define COSIM_DEVICE_FIELD(type, name, runs) type name{};
// Each device over the whole run.
struct DeviceMetrics {
    COSIM_DEVICE_METRICS(COSIM_DEVICE_FIELD)
};
#undef COSIM_DEVICE_FIELD

// Which engine made a device's numbers: the columns declared for `all` runs, plus those of
// the target alone's (`autoregressive`) and its vLLM engine's (`vllm`).
enum class DeviceRun { workflow, autoregressive, vllm };
pybind11::dict device_entry(const DeviceMetrics& d, DeviceRun run);

// The declared columns by name as the binding exports them: problem columns and their
// numpy dtypes, and device columns (checked against the declarations by the tests).
pybind11::dict exported_columns();

}  // namespace cosim::bindings
