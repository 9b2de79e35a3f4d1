// Power: energy is the integral of the current state's power over simulated time, idle
// included; book() moves time already spent into another state.
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
    });
}
