#include "sim_time.hpp"
#include "power.hpp"

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
}

void Power::settle() const {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const uint64_t elapsed = (now - since_).value();
    units_[static_cast<int>(state_)] += elapsed;
    since_change_ += elapsed;
    since_ = now;
}

void Power::set_state(PowerState state) {
    settle();
    state_ = state;
    since_change_ = 0;
    if (observer_) observer_(state, params_.watts(state));
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
}

double Power::time_ns(PowerState state) const {
    settle();
    return units_to_ns(units_[static_cast<int>(state)]);
}

double Power::energy_j(PowerState state) const {
    return time_ns(state) * params_.watts(state) * kJoulesPerWattNs;
}

double Power::energy_j() const {
    double total = 0.0;
    for (int s = 0; s < kPowerStateCount; ++s) total += energy_j(static_cast<PowerState>(s));
    return total;
}

}  // namespace cosim
