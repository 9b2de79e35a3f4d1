"""The models' fast path from ns to kernel units and back must round exactly as
SystemC's own sc_time(ns, SC_NS) does, else observed and unobserved runs (and
the batched token waits) would land on different picoseconds."""

import random

from cosim.engine._isolation import run_isolated
from cosim._extension import native


def _rounding(durations):
    return run_isolated(lambda: native().time_rounding(durations))


def test_durations_round_like_the_kernel_at_every_half_picosecond_edge():
    # At 1 ps resolution x.xxx5 ns is a rounding edge; binary doubles sit either side of it.
    edges = [k / 1000 + 0.0005 for k in range(0, 3000)]
    rng = random.Random(7)
    spread = [rng.uniform(0, 1e9) for _ in range(3000)] + [rng.uniform(0, 10) for _ in range(3000)]
    specials = [0.0, 1e-4, 4.999e-4, 5e-4, 5.001e-4, 1.0, 36_000.0005, 2.5e12, 1.7e13 + 0.0005]
    out = _rounding(edges + spread + specials)
    assert out["units"] == out["kernel_units"]
    # Hand-checked values: 0.0005 ns is half a picosecond and rounds up; 1 ns is 1000 ps.
    by_value = dict(zip(specials, out["units"][-len(specials):]))
    assert by_value[0.0] == 0 and by_value[1.0] == 1000 and by_value[4.999e-4] == 0 and by_value[5.001e-4] == 1


def test_kernel_times_read_back_in_ns_to_the_last_bit_of_a_picosecond_count():
    durations = [k * 0.001 for k in range(1, 2000)] + [123456.789, 9.87654321e11]
    out = _rounding(durations)
    for units, ns, kernel_ns in zip(out["kernel_units"], out["ns"], out["kernel_ns"]):
        assert ns == units / 1000  # exact: a count of picoseconds over 1000
        assert abs(ns - kernel_ns) <= 1e-15 * max(1.0, abs(ns)) * 4  # SystemC's to_seconds() agrees but for ulps
