"""The serving engine's queueing, checked against what does not depend on it: a FIFO
model of the documented rules (tests/fifo_model.py), the links' own rule read off the
activity log, the devices' meters against the rows, and runs long enough that a time in
ns as a double could no longer hold every picosecond."""

import math

import numpy as np
import pytest

import cosim
from cosim import serve
from cosim.trace import Trace
from fifo_model import chains, serve as fifo_serve
from handmodel import Link

NS_PER_S = 1e9


# Links slow enough (20 kB/s) that a step's tokens take milliseconds to move, so that
# transfers of requests sharing a GPU's link queue behind one another.
SLOW_LINKS = {f"{role}.link.bandwidth_gbps": 2e-5 for role in ("draft", "prm", "target")}


def gpu_baseline(values=None):
    scn = cosim.load_scenario("gpu-baseline")
    for path, value in (values or {}).items():
        scn = scn.with_value(path, value)
    return scn


@pytest.fixture(scope="module")
def baseline_work():
    trace = cosim.trace.generate("math500", 220, seed=11).in_memory()
    return {links: (trace, chains(gpu_baseline(values), trace))
            for links, values in (("fast", {}), ("slow", SLOW_LINKS))}


@pytest.mark.parametrize("shape, rates, links", [((2, 1, 1, 1), (0.05, 0.2, 1.0), "fast"),
                                                 ((3, 2, 2, 1), (0.15, 0.4, 3.0), "fast"),
                                                 ((3, 2, 2, 1), (0.15, 0.4), "slow")])
def test_a_fifo_model_of_the_documented_rules_reproduces_every_request_to_the_nanosecond(baseline_work, shape,
                                                                                       rates, links):
    trace, work = baseline_work[links]
    draft, contexts, prm, target = shape
    scn = serve.with_cluster(gpu_baseline(SLOW_LINKS if links == "slow" else {}),
                             {"draft_devices": draft, "draft_contexts_per_device": contexts, "prm_devices": prm,
                              "target_devices": target})
    queued = []
    for rate in rates:
        arrivals_ns = serve.arrival_ns(serve.poisson(rate, len(trace), seed=3))
        slot, start_ps, end_ps = fifo_serve(work, [int(a) * 1000 for a in arrivals_ns], *shape)
        run = serve.run(scn, trace, rate=rate, seed=3)
        rows = run.per_request
        assert sorted(rows.column("request")) == list(range(len(trace)))
        for r, s, start_s, end_s in zip(rows.column("request"), rows.column("slot"), rows.column("start_s"),
                                        rows.column("end_s")):
            assert s == slot[r]
            assert start_s * NS_PER_S == pytest.approx(start_ps[r] / 1000, abs=1.0)
            assert end_s * NS_PER_S == pytest.approx(end_ps[r] / 1000, abs=1.0)
        queued.append(run.summary.queueing_mean_s)
    # Light to overloaded: the heaviest rate keeps requests waiting for a slot.
    assert queued[0] < 1.0 < queued[-1]


def _union(intervals):
    merged = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1] + 1e-3:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def test_no_transfer_waits_while_its_link_direction_is_free():
    # Eight U280 boards, two PRM and two target GPUs at batch size 1: shadow sync posts each
    # refinement's tokens ahead of their decoding on the target GPUs' links, which other
    # requests share.
    scn = serve.with_cluster(cosim.load_scenario("heteroreason-u280-200"),
                             {"draft_devices": 8, "prm_devices": 2, "target_devices": 2})
    trace = cosim.trace.generate("math500", 150, seed=4)
    run = serve.run(scn, trace, rate=0.5, seed=2, activities=True)
    acts = run.activities
    link, ready = acts.column("link"), acts.column("ready_ns")
    start, end = acts.column("start_ns"), acts.column("end_ns")
    kind, tokens = acts.column("kind"), acts.column("tokens")
    links = acts.column("links")
    legs = np.flatnonzero(link >= 0)
    assert len(legs) > 10_000
    waited = 0
    for direction in ("transfer_h2d", "transfer_d2h"):
        for index in np.unique(link[legs]):
            mine = legs[(link[legs] == index) & (kind[legs] == direction)]
            busy = _union(zip(start[mine], end[mine]))
            begins = np.array([b[0] for b in busy])
            for i in mine:
                assert start[i] >= ready[i] - 1e-3
                if start[i] <= ready[i] + 1e-3:
                    continue
                # It waited: the direction was carrying other transfers all the while.
                k = np.searchsorted(begins, ready[i], side="right") - 1
                assert k >= 0 and busy[k][0] <= ready[i] + 1e-3 and busy[k][1] >= start[i] - 1e-3, \
                    f"{links[index]} {direction}: a leg ready at {ready[i]} ns started at {start[i]} ns"
                waited += 1
            # One transfer at a time: the direction was busy for exactly the legs' own durations
            # (latency + bytes / bandwidth; a leg's `tokens` are its bytes), however they interleaved.
            cfg = Link("pcie_gen3_x16" if links[index].startswith("pcie_draft") else "pcie_gen4_x16")
            own = sum(cfg.ns(int(tokens[i])) for i in mine)
            assert sum(b - a for a, b in busy) == pytest.approx(own, abs=1e-3 * len(mine))
    assert waited > 0  # the links were loaded enough that some transfers queued


CLUSTERS = {
    "heteroreason boards shared, GPUs batching": ("heteroreason-u280-200", {"draft_devices": 4,
                                                                           "draft_contexts_per_device": 2}, True, 2.0),
    "heteroreason one slot": ("heteroreason-u280-200", {}, False, 0.1),
    "heteroreason GPUs at batch 1": ("heteroreason-u280-200", {"draft_devices": 4, "prm_devices": 2,
                                                               "target_devices": 2}, False, 1.0),
    "jetson drafts batching": ("heteroreason-jetson", {"draft_devices": 2, "draft_contexts_per_device": 2}, True, 0.5),
    "gpu-stepahead batching": ("gpu-stepahead", {"draft_devices": 2, "draft_contexts_per_device": 2,
                                                 "prm_devices": 2, "target_devices": 2}, True, 1.5),
    "gpu-baseline shared": ("gpu-baseline", {"draft_devices": 2, "draft_contexts_per_device": 2}, False, 0.3),
}


@pytest.mark.parametrize("name", CLUSTERS)
def test_each_pools_utilisation_is_the_busy_time_its_requests_rows_give(name):
    scenario, cluster, batching, rate = CLUSTERS[name]
    scn = serve.with_cluster(cosim.load_scenario(scenario).with_value("batching.enabled", batching), cluster)
    run = serve.run(scn, cosim.trace.generate("math500", 80, seed=2), rate=rate, seed=1)
    s = run.summary
    for role, pool in s.pools.items():
        # The devices' meters (time out of idle) against what each request's work gave them.
        rows = math.fsum(run.per_request.column(f"busy_s_{role}"))
        assert rows / (s.span_s * pool.devices) == pytest.approx(pool.utilisation, abs=1e-6)
        held = sum(d["held_ns"] for d in run.devices if d["role"] == role)
        assert held >= pool.busy_s * NS_PER_S * (1 - 1e-9)  # a job holds its device at least while it works


def test_utilisation_counts_computing_not_a_stream_waiting_for_tokens():
    # One slot: a refinement's shadow-sync passes are one job on the board, which waits for
    # each token between passes. The board is busy for the passes only.
    trace = cosim.trace.generate("math500", 100, seed=7)
    run = serve.run(cosim.load_scenario("heteroreason-u280-200"), trace, rate=0.1, seed=7, activities=True)
    s = run.summary
    acts = run.activities
    device, work = acts.column("device"), acts.column("work_ns")
    start, end, kind = acts.column("start_ns"), acts.column("end_ns"), acts.column("kind")
    on_board = (device == "draft") & (kind != "stall")
    # Work on the board is its activities' time (none overlap: one context), nothing else.
    assert math.fsum(work[on_board]) == pytest.approx(math.fsum((end - start)[on_board]), rel=1e-12)
    assert s.pools["draft"].utilisation == pytest.approx(math.fsum(work[on_board]) / (s.span_s * NS_PER_S),
                                                         abs=1e-6)
    held = next(d["held_ns"] for d in run.devices if d["role"] == "draft") / (s.span_s * NS_PER_S)
    assert held > s.pools["draft"].utilisation + 0.05  # the stream jobs held it while they waited


def test_a_request_starts_no_earlier_than_it_arrives_in_long_runs():
    # 50 requests over about 25,000 s: past 2^53 ps (9,007 s) a time in ns as a double cannot
    # hold every picosecond, and the start computed for request 22 fell before its arrival.
    run = serve.run(cosim.load_scenario("gpu-baseline"), cosim.trace.generate("math500", 50, seed=1),
                    rate=0.002, seed=1)
    rows = run.per_request
    arrival = serve.arrival_ns(serve.poisson(0.002, 50, seed=1))
    assert arrival[-1] > 2**53 / 1000
    for r, a, q, start_s in zip(rows.column("request"), rows.column("arrival_s"), rows.column("queue_s"),
                                rows.column("start_s")):
        assert a == arrival[r] / NS_PER_S  # the arrival as drawn, to the nanosecond
        assert q >= 0.0 and start_s >= a
    assert run.summary.requests == 50


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_thousand_requests_at_a_twentieth_of_a_request_a_second_complete(seed):
    run = serve.run(cosim.load_scenario("gpu-baseline"), cosim.trace.generate("math500", 1000, seed=seed),
                    rate=0.05, seed=seed)
    assert run.summary.requests == 1000 and run.summary.span_s > 15_000
    assert min(run.per_request.column("queue_s")) >= 0.0


def test_times_are_exact_up_to_a_million_seconds():
    # The last of these requests arrives a second before 10^6 s, the end of the documented range;
    # each finds the cluster idle.
    trace = cosim.trace.generate("gsm8k", 6, seed=3)
    arrivals = [0.0, 100.0, 250_000.5, 500_000.25, 999_900.0, 999_999.0]
    run = serve.run(cosim.load_scenario("gpu-baseline"), trace.with_arrivals(arrivals))
    alone = cosim.simulate(cosim.load_scenario("gpu-baseline"), trace).per_problem.column("latency_s")
    rows = run.per_request
    for r, a, latency in zip(rows.column("request"), rows.column("arrival_s"), rows.column("latency_s")):
        assert a == arrivals[r]
        # Each request alone: its single-request latency, to the precision of a double at 10^6 s.
        assert latency == pytest.approx(alone[r], abs=1e-9)


def test_a_refinement_leaves_the_target_as_soon_as_it_is_decoded():
    # Two requests on two boards sharing one PRM and one target GPU at batch size 1; request
    # 1's 19-token refinement used to wait 1.27 s on the target's link behind the tokens
    # request 0's shadow sync had posted for the future.
    tr = cosim.trace.generate("math500", problems=35, seed=1)
    trace = Trace(tr.header, [tr.problems[9], tr.problems[34]]).with_arrivals([1.0, 1.617])
    run = serve.run(serve.with_cluster(cosim.load_scenario("heteroreason-u280-200"), {"draft_devices": 2}), trace,
                    activities=True)
    refine = [a for a in run.activities if a.problem == 1 and a.kind == "refine" and a.tokens == 19]
    sent = [a for a in run.activities if a.problem == 1 and a.device == "pcie_target" and a.tokens == 76]
    assert len(refine) == 1 and sent
    for leg in sent:  # to the PRM for its score: within microseconds (behind its own last token)
        assert 0 <= leg.start_ns - refine[0].end_ns < 5_000
