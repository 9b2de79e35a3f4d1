import pytest

import cosim
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


PS = 2e-3  # each duration is rounded to the kernel's picosecond


def test_a_transfer_posted_for_later_holds_its_direction_only_from_its_booked_time():
    token, big = expected_ns(4, GEN3_RAW_GBPS), expected_ns(1 << 20, GEN3_RAW_GBPS)
    # Posted at 0 with their data ready at 5 us and 7 us (a token stream decoded on a known
    # schedule): each books its time then. A megabyte issued at 4.5 us, the direction idle,
    # starts at once; the tokens keep their times, and it resumes after each.
    result = standalone.pcie_transfers("pcie_gen3_x16", [("d2h", 4, 0.0, 5000.0), ("d2h", 4, 0.0, 7000.0),
                                                         ("d2h", 1 << 20, 4500.0), ("d2h", 4, 5500.0),
                                                         ("h2d", 4, 5500.0)])
    assert result.start_ns[:3] == pytest.approx([5000.0, 7000.0, 4500.0], abs=PS)
    assert result.end_ns[0] == pytest.approx(5000.0 + token, abs=PS)
    assert result.end_ns[1] == pytest.approx(7000.0 + token, abs=PS)
    assert result.end_ns[2] == pytest.approx(4500.0 + big + 2 * token, abs=PS)
    # Issued while all of that is booked: it goes once the booked time is over.
    assert result.start_ns[3] == pytest.approx(result.end_ns[2], abs=PS)
    # The other direction is free.
    assert result.start_ns[4] == pytest.approx(5500.0, abs=PS)
    assert result.d2h_busy_ns == pytest.approx(3 * token + big, abs=1e-2)


def test_transfers_ready_together_go_in_the_order_they_were_posted():
    one = expected_ns(1 << 20, GEN3_RAW_GBPS)
    result = standalone.pcie_transfers("pcie_gen3_x16", [("h2d", 1 << 20, 0.0, 2000.0), ("h2d", 1 << 20, 1000.0, 2000.0)])
    assert result.start_ns == pytest.approx([2000.0, 2000.0 + one], abs=PS)
    with pytest.raises(cosim.ConfigError, match=r"ready_ns: must be at or after its issue_ns"):
        standalone.pcie_transfers("pcie_gen3_x16", [("h2d", 4, 10.0, 5.0)])
