// Power: energy is the integral of the current state's power over simulated time, idle
// included; book() moves time already spent into another state.
#include <cmath>

#include <systemc>

#include <heteroreason/power.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"

int sc_main(int, char*[]) {
    cosim::PowerParams p;
    p.idle_w = 10.0;
    p.prefill_w = 100.0;
    p.decode_w = 50.0;
    p.transfer_w = 20.0;
    cosim::Power power("board", p);
    CHECK_NEAR(p.watts(cosim::PowerState::decode), 50.0, 0.0);
    // The load model: idle + (limit - idle)(1 - exp(-load)), load = 0.5 + 4 x 0.1 + 1 x 0.6 = 1.5.
    cosim::PowerParams load = p;
    load.limit_w = 310.0;
    load.busy_load = 0.5;
    load.compute_load = 4.0;
    load.memory_load = 1.0;
    load.validate("load");
    CHECK_NEAR(load.load_w(0.1, 0.6), 10.0 + 300.0 * (1.0 - std::exp(-1.5)), 1e-12);
    load.limit_w = 5.0;  // not above idle
    CHECK_THROWS(cosim::ConfigError, "is not above idle_w", load.validate("load"));
    const auto ns = [](double v) { return sc_core::sc_time(v, sc_core::SC_NS); };
    return run_in_thread([&] {
        sc_core::wait(ns(1000.0));  // idle
        power.set_state(cosim::PowerState::prefill);
        sc_core::wait(ns(200.0));
        power.set_state(cosim::PowerState::decode);
        sc_core::wait(ns(400.0));
        power.set_state(cosim::PowerState::transfer);
        sc_core::wait(ns(50.0));
        power.set_state(cosim::PowerState::idle);
        sc_core::wait(ns(350.0));
        // At 2000 ns: 10 x 1350 + 100 x 200 + 50 x 400 + 20 x 50 = 54,500 nJ.
        CHECK_NEAR(power.time_ns(cosim::PowerState::idle), 1350.0, 0.0);
        CHECK_NEAR(power.time_ns(cosim::PowerState::prefill), 200.0, 0.0);
        CHECK_NEAR(power.energy_j(cosim::PowerState::decode), 20000e-9, 1e-15);
        CHECK_NEAR(power.energy_j(), 54500e-9, 1e-15);
        // Of the 350 ns idle since the last change, 100 were decode passes simulated at once.
        power.book(cosim::PowerState::decode, cosim::duration_units(100.0));
        CHECK_NEAR(power.time_ns(cosim::PowerState::idle), 1250.0, 0.0);
        CHECK_NEAR(power.time_ns(cosim::PowerState::decode), 500.0, 0.0);
        CHECK_NEAR(power.energy_j(), 54500e-9 + 100.0 * (50.0 - 10.0) * 1e-9, 1e-15);
        CHECK(power.state() == cosim::PowerState::idle);
        // A state entered with its caller's watts (a GPU's load model) draws those: 300 ns
        // of decode at 80 W instead of 50, then back to the declared powers.
        const double before = power.energy_j();
        power.set_state(cosim::PowerState::decode, 80.0);
        CHECK_NEAR(power.last_busy_w(), 80.0, 0.0);
        sc_core::wait(ns(300.0));
        power.set_state(cosim::PowerState::idle);
        CHECK_NEAR(power.energy_j() - before, 300.0 * 80.0 * 1e-9, 1e-15);
        CHECK_NEAR(power.energy_j(cosim::PowerState::decode), (500.0 * 50.0 + 300.0 * 80.0) * 1e-9, 1e-15);
        // Booking time out of a state entered at its caller's watts takes those watts with it.
        power.set_state(cosim::PowerState::prefill, 200.0);
        sc_core::wait(ns(100.0));
        power.book(cosim::PowerState::decode, cosim::duration_units(40.0));
        power.set_state(cosim::PowerState::idle);
        CHECK_NEAR(power.energy_j(cosim::PowerState::prefill), (200.0 * 100.0 + 60.0 * 200.0) * 1e-9, 1e-15);
        CHECK_NEAR(power.energy_j(cosim::PowerState::decode), (540.0 * 50.0 + 300.0 * 80.0) * 1e-9, 1e-15);
    });
}
