#pragma once
// Per-device power: the device is always in exactly one state, and energy is
// the integral of its power over simulated time, idle included. A state draws its declared
// power (power_params.hpp), or the power its caller gives on entering it (a GPU's load model).
#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <systemc>

#include "power_params.hpp"

namespace cosim {

class Power {
public:
    Power(std::string device, const PowerParams& params);

    // Enters `state` at the current simulated time, drawing its declared power.
    void set_state(PowerState state) { set_state(state, params_.watts(state)); }
    // Enters `state` drawing `watts` (a GPU's load model: power_params.hpp).
    void set_state(PowerState state, double watts);
    // The power of the busy state entered last (what an activity in it drew).
    double last_busy_w() const { return last_busy_w_; }
    // Moves `units` (kernel time units) of the time spent since the last state change
    // from the current state to `state`: work a caller simulated in one piece (a batch of
    // shadow-sync passes) without entering each state at its instant, at their declared
    // powers. The observer is not told.
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
    double watts_ = 0.0;                 // what the current state draws
    double last_busy_w_ = 0.0;
    // Energy beyond the declared powers, per state: 0 unless a caller gave its own watts,
    // so a device of state powers sums its integer time exactly as before.
    mutable std::array<double, kPowerStateCount> extra_j_{};
    std::function<void(PowerState, double)> observer_;
};

}  // namespace cosim
