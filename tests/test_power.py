import pytest

from cosim import standalone
from cosim.config.hardware import PowerConfig

# A board of state powers: idle 37 W, prefill 60 W, decode 50 W, transfer 41 W.
U280_W = {"idle": 37.0, "prefill": 60.0, "decode": 50.0, "transfer": 41.0}
STATE_POWERS = PowerConfig(idle_w=37.0, prefill_w=60.0, decode_w=50.0, transfer_w=41.0)


def test_energy_is_the_sum_of_power_times_time_per_state():
    timeline = [("idle", 2e6), ("transfer", 5e4), ("prefill", 3e6), ("decode", 7.5e6), ("idle", 1e6),
                ("decode", 2.5e6)]
    result = standalone.power_timeline(STATE_POWERS, timeline)
    by_state = {s: 0.0 for s in U280_W}
    for state, ns in timeline:
        by_state[state] += ns
    expected = sum(U280_W[s] * ns * 1e-9 for s, ns in by_state.items())
    # 37*3e-3 + 41*5e-5 + 60*3e-3 + 50*1e-2 = 0.111 + 0.00205 + 0.18 + 0.5
    assert expected == pytest.approx(0.79305)
    assert result.energy_j == pytest.approx(expected, rel=1e-12)
    for state in U280_W:
        assert result.state_time_ns[state] == pytest.approx(by_state[state], abs=1e-3)
        assert result.state_energy_j[state] == pytest.approx(U280_W[state] * by_state[state] * 1e-9, rel=1e-12)
    assert result.sim_ns == pytest.approx(sum(ns for _, ns in timeline), abs=1e-3)


def test_idle_time_counts():
    result = standalone.power_timeline("rtx3090", [("idle", 1e9)])
    assert result.energy_j == pytest.approx(25.0)  # one second at the 25 W idle power
