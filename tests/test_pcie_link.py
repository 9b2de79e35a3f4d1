import pytest

from cosim import standalone
from conftest import GEN3_RAW_GBPS, GEN4_RAW_GBPS

EFFICIENCY = 0.8  # the shipped estimate for both generations
LATENCY_NS = 1000.0


def expected_ns(nbytes, raw_gbps):
    return LATENCY_NS + nbytes / (raw_gbps * EFFICIENCY)


def test_transfer_times_are_latency_plus_bytes_over_bandwidth():
    sizes = [0, 4, 4096, 614_400, 1 << 20, 64 << 20]
    # Each transfer is issued when the previous one has ended, so none queues.
    script, t = [], 0.0
    for size in sizes:
        script.append(("h2d", size, t))
        t += expected_ns(size, GEN3_RAW_GBPS) + 10.0
    result = standalone.pcie_transfers("pcie_gen3_x16", script)
    for size, issue, end in zip(sizes, result.issue_ns, result.end_ns):
        assert end - issue == pytest.approx(expected_ns(size, GEN3_RAW_GBPS), abs=1.0)
    assert result.h2d_bytes == sum(sizes)
    assert result.h2d_transfers == len(sizes)
    assert result.d2h_bytes == 0
    assert result.h2d_busy_ns == pytest.approx(sum(expected_ns(s, GEN3_RAW_GBPS) for s in sizes), abs=len(sizes))


def test_gen4_over_gen3_is_the_bandwidth_ratio():
    size = 256 << 20
    no_latency = {"latency_ns": 0}
    gen3 = standalone.transfer("pcie_gen3_x16", size, overrides=no_latency).time_ns
    gen4 = standalone.transfer("pcie_gen4_x16", size, overrides=no_latency).time_ns
    assert gen3 / gen4 == pytest.approx(GEN4_RAW_GBPS / GEN3_RAW_GBPS, rel=1e-6)
    assert gen3 / gen4 == pytest.approx(2.0, rel=1e-6)
    # With the per-transfer latency the ratio shrinks exactly as the formula says.
    gen3_lat = standalone.transfer("pcie_gen3_x16", 4096).time_ns
    gen4_lat = standalone.transfer("pcie_gen4_x16", 4096).time_ns
    assert gen3_lat / gen4_lat == pytest.approx(expected_ns(4096, GEN3_RAW_GBPS) / expected_ns(4096, GEN4_RAW_GBPS))


def test_one_direction_serialises_and_the_other_is_independent():
    size = 1 << 20
    one = expected_ns(size, GEN3_RAW_GBPS)
    result = standalone.pcie_transfers("pcie_gen3_x16", [("h2d", size, 0.0), ("h2d", size, 0.0), ("d2h", size, 0.0)])
    assert result.end_ns[0] == pytest.approx(one, abs=1.0)
    assert result.end_ns[1] == pytest.approx(2 * one, abs=1.0)  # waits for the first
    assert result.end_ns[2] == pytest.approx(one, abs=1.0)  # the other direction is free
    assert result.sim_ns == pytest.approx(2 * one, abs=1.0)
    assert result.d2h_bytes == size and result.h2d_bytes == 2 * size
