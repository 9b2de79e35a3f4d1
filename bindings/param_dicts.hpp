#pragma once
// Strict conversion of the Python-side parameter dicts into the models' structs:
// a missing or unknown key is a ConfigError naming it, never a silent default.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "fpga_draft_accelerator.hpp"
#include "gpu_proxy.hpp"
#include "hbm.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "pcie_link.hpp"
#include "power.hpp"
#include "serving_settings.hpp"

namespace cosim::bindings {

// A sub-section of the engine's description (ConfigError "system.<key>: missing").
pybind11::dict section(const pybind11::dict& d, const char* key);

PcieLinkParams pcie_params(const pybind11::dict& d);
HbmParams hbm_params(const pybind11::dict& d);
FpgaAcceleratorParams fpga_params(const pybind11::dict& d);
GpuParams gpu_params(const pybind11::dict& d);
PowerParams power_params(const pybind11::dict& d);
ModelSpec model_spec(const pybind11::dict& d);
ParallelParams parallel_params(const pybind11::dict& d);
// The GPUs a GPU role's model spans: its section's `parallel` and `peer_link` (a section
// without them is one GPU), checked against the model (errors name `where`).
ParallelLayout parallel_layout(const pybind11::dict& role, const ModelSpec& model, const std::string& where);
// The same from the two parts given apart (None: one GPU); `pcie`: the peer link is the
// GPUs' PCIe links (PeerLink::pcie).
ParallelLayout parallel_layout(const pybind11::object& parallel, const pybind11::object& peer_link,
                               const ModelSpec& model, const std::string& where, bool pcie = false);
// The engine's serving sections (cosim/schema/_cluster.py), checked by their declared rules.
ClusterShape cluster_shape(const pybind11::dict& d);
BatchingSettings batching_settings(const pybind11::dict& d);
// rows: the loader's table (an array of phase, tokens, context, batch, seconds), or a list
// of (phase, tokens, context, seconds[, batch]) tuples.
LatencyProfile latency_profile(const std::string& source, const pybind11::object& rows);
// None, or (source, rows).
LatencyProfile optional_profile(const pybind11::object& profile);
// None, or {source, rows, measured_clock_mhz, project_clock}.
FpgaProfile fpga_profile(const pybind11::object& profile);
PowerState power_state(const std::string& name);
// The native parameters this build was compiled with, per group: (name, C++ type, rule).
pybind11::dict param_declarations();

}  // namespace cosim::bindings
