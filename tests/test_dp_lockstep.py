"""Engines that share a MoE model's experts (vLLM's data parallel with expert parallel)
step in lockstep and take requests by load: a hand-worked timeline of two engines, each
step the longer of the two engines' passes (models/lockstep_group.hpp)."""

import pytest

import cosim
from cosim import load_device, load_link, load_model
from cosim.config.hardware import ParallelConfig
from cosim.config.scenario import build_scenario
from cosim.schema import _params
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from cosim._extension import native

MODEL = "qwen3-30b-a3b"


def scenario(dp=2):
    parallel = {"expert_parallel": dp, "data_parallel": dp} if dp > 1 else {}
    return build_scenario({"system": "autoregressive",
                           "target": {"device": "h100-sxm", "model": MODEL, "parallel": parallel},
                           "cluster": {"target": {"devices": 2}},
                           "batching": {"enabled": True, "async_scheduling": False, "prefix_caching": False}})


def pass_ns(step, dp=2):
    """One engine's forward pass: (decodes, their context, prefill tokens, its context)."""
    par = _params.replaced(ParallelConfig(), expert_parallel=dp, data_parallel=dp)
    d = load_device("h100-sxm")
    return native().gpu_batch_ns(_params.native(d.gpu), _params.native(load_model(MODEL)), _params.native(par),
                                 _params.native(load_link(d.peer_link)), [step], False)[0]


def served(scn, shapes):
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", p, o, 0.0) for i, (p, o) in enumerate(shapes)])
    per = cosim.serve.run(scn, trace).per_request
    order = sorted(range(len(per)), key=lambda i: per.column("request")[i])
    return [{k: per.column(k)[i] for k in ("ttft_s", "latency_s", "target_device")} for i in order]


def test_each_step_ends_with_the_slower_engines_pass():
    # Two requests at once: the balancer sends the first to engine 0 and the second (engine
    # 0 now holding one waiting request, a score of 4) to engine 1. Their prefills run in
    # one round, which ends with the 1,500-token one; then a decode each a round.
    long, short = served(scenario(), [(1500, 3), (20, 3)])
    assert (long["target_device"], short["target_device"]) == (0, 1)
    overhead = load_device("h100-sxm").gpu.request_overhead_ns
    first = max(pass_ns((0, 0, 1500, 0)), pass_ns((0, 0, 20, 0)))
    rounds = [max(pass_ns((1, 1500 + i, 0, 0)), pass_ns((1, 20 + i, 0, 0))) for i in range(2)]
    for r in (long, short):
        assert r["ttft_s"] == pytest.approx((overhead + first) * 1e-9, rel=1e-9)
        assert r["latency_s"] == pytest.approx((overhead + first + sum(rounds)) * 1e-9, rel=1e-9)
    # Alone, the short prompt's first token would come with its own pass.
    assert pass_ns((0, 0, 20, 0)) < 0.8 * first


def test_replicas_without_shared_experts_step_alone():
    # Two replicas of the model (no expert parallel): the short request's first token
    # comes with its own prefill, slots alternating between the GPUs.
    long, short = served(scenario(dp=1), [(1500, 3), (20, 3)])
    overhead = load_device("h100-sxm").gpu.request_overhead_ns
    assert short["ttft_s"] == pytest.approx((overhead + pass_ns((0, 0, 20, 0), dp=1)) * 1e-9, rel=1e-9)
    assert long["ttft_s"] == pytest.approx((overhead + pass_ns((0, 0, 1500, 0), dp=1)) * 1e-9, rel=1e-9)


def test_requests_go_to_the_engine_with_the_least_load():
    # Four requests at once, all long enough to stay: 0 to engine 0, 1 to engine 1 (tie
    # broken by index after 0 waits), then alternating as the waiting counts grow.
    rows = served(scenario(), [(100, 40)] * 4)
    assert [r["target_device"] for r in rows] == [0, 1, 0, 1]
