#pragma once
// A device's power parameters and states, without SystemC: a timing model and a fit read
// them outside a simulation.
//   state powers   idle_w, prefill_w, decode_w, transfer_w: each state draws its own power
//   the load model (limit_w > 0, GPUs): a busy GPU draws
//       P = idle_w + (limit_w - idle_w) * (1 - exp(-load))
//       load = busy_load + compute_load * Uc + memory_load * Um
//   with Uc its FLOP rate over its dense tensor peak and Um its byte rate over its memory
//   bandwidth in that interval. Power rises with activity (linear in utilisation at low load,
//   as activity-based GPU power models have it: Hong & Kim, ISCA 2010; AccelWattch, MICRO
//   2021) and saturates at the power limit, which the board's power management enforces by
//   lowering clocks (docs/hardware.md).
//   the design model (mac_energy_pj or memory_energy_pj_per_bit > 0, FPGA boards): a busy
//   decoder draws its idle power plus the energy of what it does over the time it takes,
//       P = idle_w + (mac_energy_pj x MACs + memory_energy_pj_per_bit x 8 x bytes) / t
//   the MACs its array performs and the bytes it moves to and from its memory
//   (fpga_power.hpp derives a board's busy states from it).
#include <cstdint>
#include <string>

#include "param_rules.hpp"

namespace cosim {

enum class PowerState : int { idle = 0, prefill = 1, decode = 2, transfer = 3 };
constexpr int kPowerStateCount = 4;
const char* power_state_name(PowerState state);

// A derived model's nominal prefill power (the GPU load model's, an FPGA design's) is a
// prefill of this many tokens, or of the model's window where that is shorter.
constexpr int64_t kNominalPrefillTokens = 512;
int64_t nominal_prefill_tokens(int64_t context_window);

struct PowerParams {
    COSIM_POWER_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    // Before a derived model fills in the busy states: its own checks (validate), and no
    // state power given beside it. `derived` says what sets a busy device's power instead.
    void validate_derived(const std::string& where, const std::string& derived) const;
    // The state's declared power (the load model's busy states: prefill_w and decode_w as
    // the device set them, GpuProxy's nominal values).
    double watts(PowerState state) const;
    bool load_model() const { return limit_w > 0.0; }
    bool design_model() const { return mac_energy_pj > 0.0 || memory_energy_pj_per_bit > 0.0; }
    // The design model's power over `ns` in which a decoder performs `macs` and moves `bytes`.
    double design_w(double macs, double bytes, double ns) const;
    // The load model's busy power at a compute and a memory utilisation (each >= 0).
    double load_w(double compute_utilisation, double memory_utilisation) const;
};

}  // namespace cosim
