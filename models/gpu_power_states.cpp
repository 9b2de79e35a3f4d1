#include "gpu_power_states.hpp"

#include <vector>

#include "errors.hpp"

namespace cosim {

PowerParams group_power(PowerParams p, int64_t gpus) {
    const double n = static_cast<double>(gpus);
    p.idle_w *= n;
    p.prefill_w *= n;
    p.decode_w *= n;
    p.transfer_w *= n;
    p.limit_w *= n;
    return p;
}

PowerParams nominal_gpu_power(PowerParams p, const GpuTiming& t, const std::string& where) {
    if (p.design_model())
        throw ConfigError(where + ".power: mac_energy_pj and memory_energy_pj_per_bit are an FPGA design's; a GPU "
                                  "draws state powers or the load model (limit_w)");
    if (!p.load_model()) return p;
    p.validate_derived(where + ".power", "limit_w the load model sets a busy GPU's power");
    const std::vector<BatchWork> decode{BatchWork{1, 0, true}};
    p.decode_w = t.busy_w(p, PowerState::decode, t.work(decode), t.decode_token_ns(0));
    const int64_t n = nominal_prefill_tokens(t.model().context_window);
    const std::vector<BatchWork> prefill{BatchWork{n, 0, false}};
    p.prefill_w = t.busy_w(p, PowerState::prefill, t.work(prefill), t.prefill_ns(n, 0));
    return p;
}

}  // namespace cosim
