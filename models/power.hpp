#pragma once
// Per-device power: the device is always in exactly one state, and energy is
// the integral of that state's power over simulated time, idle included.
#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <systemc>

#include "param_rules.hpp"

namespace cosim {

enum class PowerState : int { idle = 0, prefill = 1, decode = 2, transfer = 3 };
constexpr int kPowerStateCount = 4;
const char* power_state_name(PowerState state);

struct PowerParams {
    COSIM_POWER_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    double watts(PowerState state) const;
};

class Power {
public:
    Power(std::string device, const PowerParams& params);

    // Enters `state` at the current simulated time.
    void set_state(PowerState state);
    // Moves `units` (kernel time units) of the time spent since the last state change
    // from the current state to `state`: work a caller simulated in one piece (a batch of
    // shadow-sync passes) without entering each state at its instant. The observer is not told.
    void book(PowerState state, uint64_t units);
    // Called on every state change with the new state and its power (waveforms).
    void set_observer(std::function<void(PowerState, double watts)> observer) { observer_ = std::move(observer); }
    PowerState state() const { return state_; }

    // Integrals up to the current simulated time.
    double energy_j() const;
    double energy_j(PowerState state) const;
    double time_ns(PowerState state) const;

    const std::string& device() const { return device_; }
    const PowerParams& params() const { return params_; }

private:
    void settle() const;  // books the time since the last change into the current state

    std::string device_;
    PowerParams params_;
    PowerState state_ = PowerState::idle;
    mutable sc_core::sc_time since_;
    // Kernel units, not ns: integers sum the same however the time is split.
    mutable std::array<uint64_t, kPowerStateCount> units_{};
    mutable uint64_t since_change_ = 0;  // units booked to the current state since it was entered
    std::function<void(PowerState, double)> observer_;
};

}  // namespace cosim
