#include "sim_time.hpp"
#include "power.hpp"

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kJoulesPerWattNs = 1e-9;
}

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
    require_non_negative(where + ".idle_w", idle_w);
    require_non_negative(where + ".prefill_w", prefill_w);
    require_non_negative(where + ".decode_w", decode_w);
    require_non_negative(where + ".transfer_w", transfer_w);
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
    time_ns_[static_cast<int>(state_)] += to_ns(now - since_);
    since_ = now;
}

void Power::set_state(PowerState state) {
    settle();
    state_ = state;
    if (observer_) observer_(state, params_.watts(state));
}

double Power::time_ns(PowerState state) const {
    settle();
    return time_ns_[static_cast<int>(state)];
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
