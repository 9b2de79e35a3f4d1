#include "fpga_power.hpp"

#include "errors.hpp"

namespace cosim {

PowerParams fpga_board_power(const std::string& where, PowerParams power, const FpgaDecoderTiming& timing,
                             const ModelSpec& model) {
    if (power.load_model())
        throw ConfigError(where + ".power.limit_w: the load model is a GPU's; an FPGA board draws state powers "
                                  "(prefill_w, decode_w) or its design's energies, so leave limit_w at 0");
    if (!power.design_model()) return power;
    power.validate_derived(where + ".power",
                           "mac_energy_pj or memory_energy_pj_per_bit the design sets a busy board's power");
    power.decode_w = power.design_w(timing.token_macs(0.0), timing.token_bytes(0.0), timing.token_ns(0.0));
    const int64_t n = nominal_prefill_tokens(model.context_window);
    power.prefill_w = power.design_w(timing.prefill_macs(n, 0.0), timing.prefill_bytes(n, 0.0),
                                     timing.prefill_ns(n, 0.0));
    return power;
}

}  // namespace cosim
