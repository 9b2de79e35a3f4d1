#include "sim_time.hpp"
#include "power.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace cosim {

const char* power_state_name(PowerState state) {
    switch (state) {
        case PowerState::idle: return "idle";
        case PowerState::prefill: return "prefill";
        case PowerState::decode: return "decode";
        case PowerState::transfer: return "transfer";
    }
    return "?";
}

void PowerParams::validate(const std::string& where) const {
    COSIM_POWER_PARAMS(COSIM_CHECK_PARAM)
    if (load_model()) {
        if (limit_w <= idle_w)
            throw ConfigError(where + ".limit_w: " + std::to_string(limit_w) + " W is not above idle_w (" +
                              std::to_string(idle_w) + " W): the load model rises from idle to the limit");
        if (busy_load + compute_load + memory_load <= 0.0)
            throw ConfigError(where + ": the load model (limit_w > 0) needs busy_load, compute_load or memory_load "
                                      "above 0, or a busy GPU draws its idle power");
        if (design_model())
            throw ConfigError(where + ": mac_energy_pj and memory_energy_pj_per_bit are an FPGA design's; the load "
                                      "model (limit_w) is a GPU's: give one or the other");
    } else if (!design_model() && prefill_w <= 0.0 && decode_w <= 0.0) {
        throw ConfigError(where + ": give prefill_w and decode_w (state powers), limit_w (a GPU's load model) or "
                                  "mac_energy_pj and memory_energy_pj_per_bit (an FPGA design's energies)");
    }
}

void PowerParams::validate_derived(const std::string& where, const std::string& derived) const {
    validate(where);
    if (prefill_w > 0.0 || decode_w > 0.0)
        throw ConfigError(where + ": prefill_w and decode_w are state powers; with " + derived +
                          ": give one or the other");
}

int64_t nominal_prefill_tokens(int64_t context_window) {
    return std::max<int64_t>(1, std::min<int64_t>(kNominalPrefillTokens, context_window));
}

double PowerParams::design_w(double macs, double bytes, double ns) const {
    constexpr double kBitsPerByte = 8.0;
    constexpr double kPicojoulesPerNsToWatts = 1e-3;  // pJ / ns = 1e-12 J / 1e-9 s
    if (ns <= 0.0) return idle_w;
    return idle_w + (mac_energy_pj * macs + memory_energy_pj_per_bit * kBitsPerByte * bytes) / ns *
                        kPicojoulesPerNsToWatts;
}

double PowerParams::load_w(double compute_utilisation, double memory_utilisation) const {
    const double load = busy_load + compute_load * compute_utilisation + memory_load * memory_utilisation;
    return idle_w + (limit_w - idle_w) * -std::expm1(-load);
}

double PowerParams::watts(PowerState state) const {
    switch (state) {
        case PowerState::idle: return idle_w;
        case PowerState::prefill: return prefill_w;
        case PowerState::decode: return decode_w;
        case PowerState::transfer: return transfer_w;
    }
    return idle_w;
}

Power::Power(std::string device, const PowerParams& params)
    : device_(std::move(device)), params_(params), since_(sc_core::sc_time_stamp()) {
    params_.validate(device_ + ".power");
    // The design model's busy powers come from the decoder's design (fpga_board_power), not
    // from the file: a meter given its energies alone would draw nothing when busy.
    if (params_.design_model() && params_.prefill_w <= 0.0 && params_.decode_w <= 0.0)
        throw ConfigError(device_ + ".power: the design model's busy powers are derived from the decoder "
                                    "(fpga_board_power), not given");
    watts_ = params_.idle_w;
}

void Power::settle() const {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const uint64_t elapsed = (now - since_).value();
    units_[static_cast<int>(state_)] += elapsed;
    const double declared = params_.watts(state_);
    if (watts_ != declared)
        extra_j_[static_cast<int>(state_)] += units_to_ns(elapsed) * (watts_ - declared) * kJoulesPerWattNs;
    since_change_ += elapsed;
    since_ = now;
}

void Power::set_state(PowerState state, double watts) {
    settle();
    if (!std::isfinite(watts) || watts < 0.0)
        throw SimulationError(device_ + ".power: " + power_state_name(state) + " drawing " + std::to_string(watts) +
                              " W");
    state_ = state;
    watts_ = watts;
    if (state != PowerState::idle) last_busy_w_ = watts;
    since_change_ = 0;
    if (observer_) observer_(state, watts);
}

void Power::book(PowerState state, uint64_t units) {
    settle();
    if (units > since_change_)
        throw SimulationError(device_ + ".power: " + std::to_string(units) + " time units booked to " +
                              power_state_name(state) + " but only " + std::to_string(since_change_) +
                              " have passed in " + power_state_name(state_) + " since it was entered");
    units_[static_cast<int>(state_)] -= units;
    units_[static_cast<int>(state)] += units;
    since_change_ -= units;
    // The moved time draws the booked state's declared power, not the current state's.
    const double declared = params_.watts(state_);
    if (watts_ != declared)
        extra_j_[static_cast<int>(state_)] -= units_to_ns(units) * (watts_ - declared) * kJoulesPerWattNs;
}

double Power::time_ns(PowerState state) const {
    settle();
    return units_to_ns(units_[static_cast<int>(state)]);
}

double Power::energy_j(PowerState state) const {
    // extra_j_ is exactly 0 for a state no caller gave its own watts: the sum is unchanged.
    return time_ns(state) * params_.watts(state) * kJoulesPerWattNs + extra_j_[static_cast<int>(state)];
}

double Power::energy_j() const {
    double total = 0.0;
    for (int s = 0; s < kPowerStateCount; ++s) total += energy_j(static_cast<PowerState>(s));
    return total;
}

}  // namespace cosim
