"""Serving metrics on a hand-worked run, Little's law, an M/M/1 queue, and bad input."""

import math

import numpy as np
import pytest

from cosim import ConfigError, serve

S = 1_000_000_000  # ns per second

# Five requests (seconds): arrival, start, end, final-chain tokens.
RUN = [(0, 0, 2, 100), (1, 1, 4, 200), (1, 2, 5, 150), (3, 4, 6, 50), (4, 5, 14, 500)]


def requests(rows=RUN):
    cols = list(zip(*rows))
    return {"arrival_ns": np.array(cols[0], dtype=np.int64) * S, "start_ns": np.array(cols[1], dtype=np.int64) * S,
            "end_ns": np.array(cols[2], dtype=np.int64) * S, "final_tokens": np.array(cols[3])}


def device(role, index, energy_j, busy_s, iterations, batched):
    return {"role": role, "index": index, "energy_j": energy_j, "busy_ns": busy_s * S, "iterations": iterations,
            "batched_sequences": batched}


DEVICES = [
    device("draft", 0, 100.0, 7, 1000, 0),   # FPGA boards: no batching
    device("draft", 1, 80.0, 3.5, 500, 0),
    device("prm", 0, 500.0, 7, 40, 100),
    device("target", 0, 900.0, 10.5, 300, 450),
    device("target", 1, 700.0, 3.5, 100, 250),
]


def test_latency_percentiles_by_hand():
    s = serve.serve_summary(requests(), DEVICES)
    # Latencies 2, 3, 4, 3, 10 s; sorted 2, 3, 3, 4, 10. Linear method: rank (n - 1) q / 100.
    assert s.latency_p50_s == 3.0                                   # rank 2
    assert s.latency_p90_s == pytest.approx(4 + 0.6 * (10 - 4))     # rank 3.6: 7.6
    assert s.latency_p99_s == pytest.approx(4 + 0.96 * (10 - 4))    # rank 3.96: 9.76
    assert s.latency_max_s == 10.0 and s.latency_mean_s == pytest.approx(22 / 5)
    # Queueing (start - arrival) 0, 0, 1, 1, 1 s; service (end - start) 2, 3, 3, 2, 9 s.
    assert s.queueing_mean_s == pytest.approx(3 / 5) and s.queueing_p99_s == 1.0
    assert s.service_mean_s == pytest.approx(19 / 5)
    assert serve.PERCENTILE_METHOD == "linear"


def test_throughput_energy_and_pools_by_hand():
    s = serve.serve_summary(requests(), DEVICES)
    assert s.requests == 5 and s.span_s == 14.0  # first arrival 0 s, last end 14 s
    assert s.throughput_req_s == pytest.approx(5 / 14)
    assert s.throughput_tok_s == pytest.approx(1000 / 14)
    assert s.energy_j == pytest.approx(2280.0)
    assert s.energy_j_per_token == pytest.approx(2.28) and s.energy_j_per_request == pytest.approx(456.0)
    draft, prm, target = s.pools["draft"], s.pools["prm"], s.pools["target"]
    assert draft.utilisation == pytest.approx((7 / 14 + 3.5 / 14) / 2)     # 0.375
    assert prm.utilisation == pytest.approx(0.5)
    assert target.utilisation == pytest.approx((10.5 / 14 + 3.5 / 14) / 2)  # 0.5
    assert draft.mean_batch is None and draft.devices == 2
    assert prm.mean_batch == pytest.approx(100 / 40)
    # Sums first: (450 + 250) / (300 + 100) = 1.75, not the mean of 1.5 and 2.5.
    assert target.mean_batch == pytest.approx(1.75)
    assert target.energy_j == pytest.approx(1600.0) and target.busy_s == pytest.approx(14.0)


def test_slo_attainment_counts_a_latency_equal_to_the_objective():
    assert serve.serve_summary(requests(), DEVICES, slo_s=3).slo_attainment == 3 / 5  # 2, 3, 3 s
    assert serve.serve_summary(requests(), DEVICES, slo_s=2.999).slo_attainment == 1 / 5
    assert serve.serve_summary(requests(), DEVICES, slo_s=10).slo_attainment == 1.0
    assert serve.serve_summary(requests(), DEVICES).slo_attainment is None


def test_requests_in_system_by_hand():
    # Present intervals [0,2) [1,4) [1,5) [3,6) [4,14): the count is 1, 3, 2, 3, 3, 2 over the
    # seconds 0..6, then 1 until 14; its integral is 22.
    s = serve.serve_summary(requests(), DEVICES)
    assert s.mean_in_system == pytest.approx(22 / 14)
    # Queues [1,2) [3,4) [4,5): 3 request-seconds.
    assert s.mean_in_queue == pytest.approx(3 / 14)
    r = requests()
    assert serve.requests_in_system(r["arrival_ns"], r["end_ns"], (1 * S, 5 * S)) == pytest.approx((3 + 2 + 3 + 3) / 4)
    # Little's law over the span: L = (requests / span) x mean latency.
    assert s.mean_in_system == pytest.approx(s.throughput_req_s * s.latency_mean_s)
    assert s.mean_in_queue == pytest.approx(s.throughput_req_s * s.queueing_mean_s)


def fcfs_single_server(arrivals, services):
    """Start and end of each request at one first-come first-served server (Lindley's recursion)."""
    start, end = np.empty_like(arrivals), np.empty_like(arrivals)
    free = 0.0
    for i, (a, x) in enumerate(zip(arrivals, services)):
        start[i] = max(a, free)
        end[i] = free = start[i] + x
    return start, end


def test_an_mm1_queue_meets_its_closed_forms():
    lam, mu, n = 1.0, 2.0, 200_000
    arrivals = serve.poisson(lam, n, seed=21)
    services = np.random.default_rng(22).exponential(1 / mu, n)
    start, end = fcfs_single_server(arrivals, services)
    run = {"arrival_ns": np.rint(arrivals * S), "start_ns": np.rint(start * S), "end_ns": np.rint(end * S),
           "final_tokens": np.full(n, 10)}
    busy = float(np.rint(services * S).sum())
    devices = [device("draft", 0, 1.0, 0, 0, 0), device("prm", 0, 1.0, 0, 0, 0),
               device("target", 0, 1.0, busy / S, n, n)]
    s = serve.serve_summary(run, devices)
    rho = lam / mu
    # M/M/1: L = rho / (1 - rho) = 1, W = 1 / (mu - lam) = 1 s, the latency's distribution is
    # exponential of rate mu - lam (its p99 is ln(100) s), utilisation rho. Tolerances hold
    # several standard errors of a 200,000-request run at rho = 0.5.
    assert s.mean_in_system == pytest.approx(rho / (1 - rho), rel=0.05)
    assert s.latency_mean_s == pytest.approx(1 / (mu - lam), rel=0.05)
    assert s.latency_p99_s == pytest.approx(math.log(100) / (mu - lam), rel=0.05)
    assert s.pools["target"].utilisation == pytest.approx(rho, rel=0.02)
    assert s.pools["target"].mean_batch == 1.0
    assert s.mean_in_system == pytest.approx(s.throughput_req_s * s.latency_mean_s, rel=1e-9)


def test_to_dict_is_one_flat_row():
    row = serve.serve_summary(requests(), DEVICES, slo_s=3).to_dict()
    assert row["latency_p99_s"] == pytest.approx(9.76) and row["slo_attainment"] == 0.6
    assert row["utilisation_draft"] == pytest.approx(0.375) and row["mean_batch_draft"] is None
    assert row["devices_target"] == 2 and row["energy_j_prm"] == 500.0
    assert "pools" not in row


def without(mapping, key):
    return {k: v for k, v in mapping.items() if k != key}


BAD = [
    (lambda: serve.serve_summary(without(requests(), "end_ns"), DEVICES), r"requests: no column 'end_ns'"),
    (lambda: serve.serve_summary({**requests(), "start_ns": np.array([0, 0, 0, 0, 5]) * S}, DEVICES),
     r"requests\['start_ns'\]\[1\]: 0 is before arrival_ns 1000000000"),
    (lambda: serve.serve_summary({**requests(), "end_ns": np.array([2, 4, 5, 6, 4]) * S}, DEVICES),
     r"requests\['end_ns'\]\[4\]: 4000000000 is before start_ns 5000000000"),
    (lambda: serve.serve_summary({**requests(), "final_tokens": [1, 2, 3]}, DEVICES),
     r"requests\['final_tokens'\]: expected one value per request \(5\)"),
    (lambda: serve.serve_summary({**requests(), "end_ns": [2e9, 4e9, math.nan, 6e9, 14e9]}, DEVICES),
     r"requests\['end_ns'\]\[2\]: expected a finite number >= 0, got nan"),
    (lambda: serve.serve_summary({k: [] for k in requests()}, DEVICES), r"requests: no finished request"),
    (lambda: serve.serve_summary(requests(), DEVICES, slo_s=0), r"slo_s: must be > 0"),
    (lambda: serve.serve_summary(requests(), DEVICES[:2]), r"devices: no target device"),
    (lambda: serve.serve_summary(requests(), DEVICES[2:]), r"devices: PRM devices but no draft device"),
    (lambda: serve.serve_summary(requests(), DEVICES + [DEVICES[0]]), r"devices\[5\]: draft device 0 is listed twice"),
    (lambda: serve.serve_summary(requests(), [without(DEVICES[0], "busy_ns")] + DEVICES[1:]),
     r"devices\[0\]: no 'busy_ns'"),
    (lambda: serve.serve_summary(requests(), [{**DEVICES[0], "role": "fpga"}] + DEVICES[1:]),
     r"devices\[0\].role: one of draft, prm, target, got 'fpga'"),
    (lambda: serve.serve_summary(requests(), [{**DEVICES[0], "energy_j": -1.0}] + DEVICES[1:]),
     r"devices\[0\].energy_j: must be >= 0"),
    (lambda: serve.serve_summary(requests(), [{**DEVICES[0], "iterations": 2.5}] + DEVICES[1:]),
     r"devices\[0\].iterations: must be a whole number"),
    (lambda: serve.requests_in_system([0, 1], [1, 2], (5, 5)), r"window: must end after it starts"),
]


@pytest.mark.parametrize("call,message", BAD)
def test_bad_input_is_named(call, message):
    with pytest.raises(ConfigError, match=message):
        call()
