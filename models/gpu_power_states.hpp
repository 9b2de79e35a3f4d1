#pragma once
// The state powers of a GPU, or of a group of them, that the GPU proxies draw.
#include <cstdint>
#include <string>

#include "gpu_timing.hpp"
#include "power_params.hpp"

namespace cosim {

// A group of GPUs draws each state's power on every GPU of it (the load model's idle and
// limit too: every GPU of the group carries the same load).
PowerParams group_power(PowerParams p, int64_t gpus);

// The load model's nominal state powers, for work simulated outside a proxy (a GPU draft's
// passes the host times itself, a draft device's drafting): a lone decode at the start of the
// context and a lone prompt prefill. State powers pass as given; a design model (an FPGA's)
// is refused, naming `where`.
PowerParams nominal_gpu_power(PowerParams power, const GpuTiming& timing, const std::string& where);

}  // namespace cosim
