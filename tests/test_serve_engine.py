"""Serving on a cluster, checked against what does not depend on the serving engine:
the single-request simulation, a target GPU's capacity worked by hand, Little's law
counted at sampled instants, the trace's own chains, and a brute-force search."""

import dataclasses
import math

import numpy as np
import pytest

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from conftest import TARGET_KV_ELEMENTS, TARGET_MACS


def cluster(name, draft=2, contexts=1, prm=2, target=2, batching=True):
    scn = cosim.load_scenario(name)
    for path, value in {"cluster.draft.devices": draft, "cluster.draft.contexts_per_device": contexts,
                        "cluster.prm.devices": prm, "cluster.target.devices": target,
                        "batching.enabled": batching}.items():
        scn = scn.with_value(path, value)
    return scn


@pytest.mark.parametrize("name", ["gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-vanilla"])
def test_at_a_vanishing_rate_each_request_takes_its_single_request_time(name):
    trace = cosim.trace.generate("math500", 12, seed=4).in_memory()
    alone = cosim.simulate(cosim.load_scenario(name), trace)
    # A request every 1000 s: each finds the cluster idle, and batches of one are timed as alone.
    served = cosim.serve.run(cluster(name), trace.with_arrivals([1000.0 * i for i in range(12)]))
    by_request = dict(zip(served.per_request.column("request"), served.per_request.column("latency_s")))
    expected = alone.per_problem.column("latency_s")
    # To the nanosecond; a GPU draft batching its step-ahead drafts finishes an aborted token's
    # iteration before its next work (docs/serving.md), where alone it stops at once.
    tolerance = {"rel": 0.01} if name == "gpu-stepahead" else {"abs": 1e-9}
    for i in range(12):
        assert by_request[i] == pytest.approx(expected[i], **tolerance)
    assert served.summary.queueing_mean_s == 0.0


def test_every_request_keeps_its_trace_chain_and_a_rerun_is_identical():
    trace = cosim.trace.generate("gsm8k", 150, seed=2).in_memory()
    scn = cosim.load_scenario("cluster-heteroreason-u280-200")
    first = cosim.serve.run(scn, trace, rate=3.0, seed=5)
    again = cosim.serve.run(scn, trace, rate=3.0, seed=5)
    assert first.per_request == again.per_request and first.summary == again.summary
    chains = []
    for problem in trace.problems:  # the final chain walked from the events
        chain = []
        for e in problem.events:
            if e.type == "backtrack":
                chain.pop()
            elif e.accepted:
                chain.append(e.tokens)
        chains.append(sum(chain))
    got = dict(zip(first.per_request.column("request"), first.per_request.column("final_tokens")))
    assert sorted(got) == list(range(150))
    assert [got[i] for i in range(150)] == chains
    assert sum(chains) / first.summary.span_s == pytest.approx(first.summary.throughput_tok_s, rel=1e-12)


def test_littles_law_holds_in_the_steady_part_of_a_loaded_run():
    trace = cosim.trace.generate("math500", 1500, seed=3)
    run = cosim.serve.run(cosim.load_scenario("cluster-heteroreason-u280-200"), trace, rate=1.2, seed=9)
    rows = run.per_request
    arrival, end = np.asarray(rows.column("arrival_s")), np.asarray(rows.column("end_s"))
    lo, hi = np.quantile(arrival, 0.2), np.quantile(arrival, 0.8)
    # L counted at 4000 instants of the window; lambda and W of the requests arriving in it.
    instants = np.linspace(lo, hi, 4000)
    present = [np.count_nonzero((arrival <= t) & (end > t)) for t in instants]
    inside = (arrival >= lo) & (arrival < hi)
    rate = np.count_nonzero(inside) / (hi - lo)
    assert np.mean(present) == pytest.approx(rate * np.mean((end - arrival)[inside]), rel=0.03)
    assert run.summary.mean_in_queue > 0.1  # loaded: requests waited for a slot


# RTX 3090 restated (cosim/data/devices/rtx3090.yaml): 936 GB/s at 0.710, 71 TFLOPS at 0.817,
# the smooth roofline's exponent 2.35, 1.5 ms + 28 x 150 us of launches per forward pass,
# 40 ms per serving request, BF16.
def _target_busy_ns(prompt, refined):
    """A one-step problem on gpu-baseline: the target takes the request (30 ms of serving
    stack, the GPU idle), prefills the prompt, decodes the refinement token by token."""
    overhead = 1.5e6 + 28 * 150e3
    bandwidth, flops, p = 936 * 0.710, 71e3 * 0.817, 2.35
    weights, kv = TARGET_MACS * 2, TARGET_KV_ELEMENTS * 2
    attention, head = 2 * 28 * 28 * 128, 3584 * 152064

    def forward(n, context, kv_tokens):
        macs = n * (TARGET_MACS - head) + head + attention * (n * context + n * (n - 1) / 2)
        compute, memory = 2 * macs / flops, (weights + kv_tokens * kv) / bandwidth
        return overhead + (compute**p + memory**p) ** (1 / p)

    prefill = forward(prompt, 0, prompt)
    decode = sum(forward(1, prompt + i, prompt + i) for i in range(refined))
    return 40e6 + prefill + decode


def test_throughput_stops_at_the_bottleneck_target_gpu():
    prompt, refined, n = 200, 40, 120
    problem = lambda i: TrajectoryBuilder(f"p{i}", prompt).reject(30).refine(refined).build()  # noqa: E731
    trace = Trace(TraceHeader(), [problem(i) for i in range(n)])
    # Eight requests in flight, four draft and four PRM GPUs, one target GPU serving a
    # request at a time: the target is busy from its first job to its last.
    scn = cluster("gpu-baseline", draft=8, prm=4, target=1, batching=False)
    capacity = 1e9 / _target_busy_ns(prompt, refined)
    for rate in (0.5 * capacity, 4 * capacity, 16 * capacity):
        run = cosim.serve.run(scn, trace, rate=rate, seed=1)
        expected = min(rate, capacity)
        # Below capacity the span is the arrivals' (Poisson: within a few percent of n / rate).
        assert run.summary.throughput_req_s == pytest.approx(expected, rel=0.08 if rate < capacity else 0.02)
    # Jobs hold the target all the time; it computes in all but each request's serving overhead.
    held = sum(d["held_ns"] for d in run.devices if d["role"] == "target") / (run.summary.span_s * 1e9)
    assert held == pytest.approx(1.0, abs=0.02)
    computing = 1 - 30e6 / _target_busy_ns(prompt, refined)
    assert run.summary.pools["target"].utilisation == pytest.approx(computing, abs=0.02)


def test_more_target_gpus_or_batching_raise_the_capacity():
    trace = cosim.trace.generate("gsm8k", 200, seed=1).in_memory()
    rate = 50.0  # far beyond any of these clusters: throughput is their capacity
    # Eight requests in flight, so that the target GPUs, not the slots, bound the throughput.
    one = cosim.serve.run(cluster("gpu-stepahead", draft=8, prm=2, target=1, batching=False), trace, rate=rate)
    two = cosim.serve.run(cluster("gpu-stepahead", draft=8, prm=2, target=2, batching=False), trace, rate=rate)
    batched = cosim.serve.run(cluster("gpu-stepahead", draft=8, prm=2, target=1, batching=True), trace, rate=rate)
    assert two.summary.throughput_req_s > 1.5 * one.summary.throughput_req_s
    assert batched.summary.throughput_req_s > 1.5 * one.summary.throughput_req_s
    assert batched.summary.pools["target"].mean_batch > 1.5
    assert one.summary.pools["target"].mean_batch is None  # not batching: no iterations


def test_plan_finds_the_cluster_a_brute_force_search_finds():
    trace = cosim.trace.generate("gsm8k", 60, seed=6).in_memory()
    scn = cosim.load_scenario("cluster-heteroreason-u280-200")
    rate, slo = 2.0, 20.12  # the p99 of 4 boards lies around 19.6-20.6 s: PRM and target counts decide

    def p99(c):
        return cosim.serve.run(cosim.serve.with_cluster(scn, c), trace, rate=rate, seed=2).summary.latency_p99_s

    costs = {"draft": 60.0, "prm": 330.0, "target": 330.0}
    grid = {"draft": [1, 2, 3, 4], "prm": [1, 2], "target": [1, 2]}
    found = cosim.serve.plan(p99, **grid, slo_s=slo, costs=costs)
    best = None
    for d in grid["draft"]:
        for p in grid["prm"]:
            for t in grid["target"]:
                c = {"draft_devices": d, "draft_contexts_per_device": 1, "prm_devices": p, "target_devices": t}
                cost = d * 60.0 + p * 330.0 + t * 330.0
                if p99(c) <= slo and (best is None or cost < best[0]):
                    best = (cost, c)
    assert best is not None and found.cluster == best[1] and found.cost == best[0]
    assert len(found.evaluations) <= found.candidates


def test_a_serving_run_names_what_it_cannot_do():
    trace = cosim.trace.generate("gsm8k", 5, seed=0)
    scn = cosim.load_scenario("cluster-heteroreason-u280-200")
    with pytest.raises(cosim.ConfigError, match="carries no arrival times; give a rate"):
        cosim.serve.run(scn, trace)
    with pytest.raises(cosim.ConfigError, match="rate"):
        cosim.serve.run(scn, trace, rate=-1)
    with pytest.raises(cosim.ConfigError, match="slo_s"):
        cosim.serve.run(scn, trace, rate=1.0, slo_s=0)
    assert math.isfinite(cosim.serve.run(scn, trace, rate=1.0).summary.latency_p99_s)
    assert dataclasses.is_dataclass(cosim.serve.run(scn, trace, rate=1.0).summary)


def test_a_batching_gpu_holds_an_iterations_kv_beside_the_weights_of_its_models():
    gpu = cosim.load_device("rtx3090").gpu
    weights = {m: cosim.load_model(m).params * gpu.weight_bytes_per_param
               for m in ("qwen2.5-math-prm-7b", "qwen2.5-math-7b", "qwen2.5-0.5b")}
    # The target GPU of an FPGA system holds the target and the draft model (phase 1).
    target_weights = weights["qwen2.5-math-7b"] + weights["qwen2.5-0.5b"]
    target_kv = TARGET_KV_ELEMENTS * gpu.kv_bytes_per_element
    trace = cosim.trace.generate("math500", 16, seed=3).in_memory()
    scn = cluster("heteroreason-u280-200", draft=4, prm=1, target=1)
    roomy = cosim.serve.run(scn, trace, rate=20.0, seed=1)
    assert all(p.kv_limited_iterations == 0 for p in roomy.summary.pools.values())
    # Room for 1,000 tokens of the target's KV: the longest context here fits, two rarely do.
    longest = max(p.prompt_tokens + sum(getattr(e, "tokens", 0) for e in p.events) for p in trace.problems)
    assert longest < 1000
    tight = (target_weights + 1000 * target_kv) / gpu.memory_bytes
    limited = cosim.serve.run(scn.with_value("batching.gpu_memory_utilization", tight), trace, rate=20.0, seed=1)
    assert limited.summary.pools["target"].kv_limited_iterations > 0
    assert limited.summary.pools["target"].mean_batch < roomy.summary.pools["target"].mean_batch
    assert limited.summary.latency_mean_s > roomy.summary.latency_mean_s
    # No room at all beside the weights is refused before anything runs.
    none = scn.with_value("batching.gpu_memory_utilization", (target_weights - 1e6) / gpu.memory_bytes)
    with pytest.raises(cosim.ConfigError, match=r"batching.gpu_memory_utilization: .* of target's 25.76 GB leaves "
                                                r"no room for KV cache beside 16.22 GB of weights"):
        cosim.serve.run(none, trace, rate=20.0, seed=1)


def test_boards_behind_one_switch_share_its_link_to_the_host():
    from handmodel import Fpga, Link

    # The same problem twice, at once, on two boards with a PRM and a target GPU each: only
    # the boards' shared host link joins them. Both prompts' KV migrate at the same moment;
    # the switch forwards the first while it arrives, the second after it.
    problems = [TrajectoryBuilder(name, 100).accept(40).accept(30).build() for name in ("a", "b")]
    trace = Trace(TraceHeader(), problems).with_arrivals([0.0, 0.0])
    scn = cluster("heteroreason-u280-200", draft=2, prm=2, target=2, batching=False)
    apart = cosim.serve.run(scn, trace)
    shared = cosim.serve.run(scn.with_value("cluster.draft.boards_per_host_link", 2)
                             .with_value("cluster.draft.host_link", "pcie_gen3_x16"), trace)
    a, b = sorted(row["latency_s"] for row in apart.per_request)
    assert a == b
    first, second = sorted(row["latency_s"] for row in shared.per_request)
    kv_ns = Link("pcie_gen3_x16").ns(100 * Fpga("u280", clock_mhz=200).kv_bytes())
    assert first == pytest.approx(a, abs=1e-12)  # a Gen3 switch link as fast as the boards' own
    assert second - first == pytest.approx(kv_ns * 1e-9, rel=1e-6)


def test_a_host_link_without_boards_to_share_it_is_refused(tmp_yaml):
    path = tmp_yaml("h.yaml", "system: heteroreason\ncluster:\n  draft: {devices: 4, host_link: pcie_gen3_x16}\n")
    with pytest.raises(cosim.ConfigError, match=r"h.yaml:3: cluster.draft.host_link: boards share a host link "
                                                r"only with cluster.draft.boards_per_host_link > 1"):
        cosim.load_scenario(path)
    bad = tmp_yaml("n.yaml", "system: heteroreason\ncluster:\n  draft: {devices: 4, boards_per_host_link: 2, "
                             "host_link: pcie_gen9}\n")
    with pytest.raises(cosim.ConfigError, match=r"n.yaml:3: cluster.draft.host_link: .*pcie_gen9"):
        cosim.load_scenario(bad)
