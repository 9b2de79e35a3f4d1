"""The plain autoregressive system at batch 1: a request's latency is the GPU's serving
overhead, its prompt's prefill (which gives the first token) and one decode per further
token, the roofline of docs/hardware.md written again in tests/handmodel.py."""

import math

import pytest

import cosim
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem

from handmodel import Gpu


def hand_times(gpu, prompt, output):
    """(first token, end) of a lone request from its start, in seconds."""
    first = gpu.request + gpu.prefill(prompt, 0)
    end = first + sum(gpu.decode(prompt + i) for i in range(output - 1))
    return first * 1e-9, end * 1e-9


def test_a_lone_request_takes_overhead_prefill_and_its_decodes():
    gpu = Gpu("rtx3090", "qwen2.5-math-7b")
    shapes = [(300, 1), (57, 200), (1200, 64)]
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", p, o) for i, (p, o) in enumerate(shapes)])
    result = cosim.simulate(cosim.load_scenario("target-alone"), trace)
    per = result.per_problem
    for i, (prompt, output) in enumerate(shapes):
        first, end = hand_times(gpu, prompt, output)
        assert per.column("latency_s")[i] == pytest.approx(end, rel=1e-9)
        assert per.column("ttft_s")[i] == pytest.approx(first, rel=1e-9)
        if output > 1:
            assert per.column("tpot_s")[i] == pytest.approx((end - first) / (output - 1), rel=1e-9)
        else:
            assert math.isnan(per.column("tpot_s")[i])  # no token after the first
        assert per.column("generated_tokens")[i] == output and per.column("drafted_tokens")[i] == 0
    # The GPU's power over its work and its idle time in the serving overhead, nothing else.
    power = cosim.load_device("rtx3090").power
    first, end = hand_times(gpu, 57, 200)
    joules = power.idle_w * gpu.request * 1e-9 + power.prefill_w * (first - gpu.request * 1e-9) \
        + power.decode_w * (end - first)
    assert per.column("energy_j")[1] == pytest.approx(joules, rel=1e-9)
    assert per.column("energy_j_draft")[1] == 0 and per.column("energy_j_prm")[1] == 0


def test_requests_queue_for_a_gpu_at_batch_1_and_spread_over_two():
    gpu = Gpu("rtx3090", "qwen2.5-math-7b")
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 100, 50, 0.0) for i in range(3)])
    one = cosim.serve.run(cosim.load_scenario("target-alone"), trace)
    _, alone = hand_times(gpu, 100, 50)
    assert sorted(one.per_request.column("latency_s")) == pytest.approx([alone, 2 * alone, 3 * alone], rel=1e-9)
    two = cosim.serve.run(cosim.load_scenario("target-alone").with_value("cluster.target.devices", 2), trace)
    assert sorted(two.per_request.column("latency_s")) == pytest.approx([alone, alone, 2 * alone], rel=1e-9)
    assert sorted(two.per_request.column("target_device")) == [0, 0, 1]
    assert set(two.summary.pools) == {"target"}
    # TTFT from arrival: the first waits only for its own prefill, the third for two requests first.
    first, _ = hand_times(gpu, 100, 50)
    assert sorted(one.per_request.column("ttft_s")) == pytest.approx([first, alone + first, 2 * alone + first],
                                                                     rel=1e-9)
    assert one.summary.tokens.ttft_median_s == pytest.approx(alone + first, rel=1e-9)
    # The GPU computes for each request's prefill and decodes, and is held for its overhead too.
    (device,) = one.devices
    assert device["busy_ns"] == pytest.approx(3 * (alone * 1e9 - gpu.request), rel=1e-9)
    assert device["held_ns"] == pytest.approx(3 * alone * 1e9, rel=1e-9)


def test_the_autoregressive_system_generates_a_reasoning_trace_final_chain():
    trace = cosim.trace.generate("math500", 5, seed=3)
    result = cosim.simulate(cosim.load_scenario("target-alone"), trace)
    summaries = trace.summaries()
    assert list(result.per_problem.column("generated_tokens")) == [s.final_tokens for s in summaries]
    gpu = Gpu("rtx3090", "qwen2.5-math-7b")
    for i, (problem, s) in enumerate(zip(trace.problems, summaries)):
        assert result.per_problem.column("latency_s")[i] == pytest.approx(
            hand_times(gpu, problem.prompt_tokens, s.final_tokens)[1], rel=1e-9)


@pytest.mark.parametrize("given,message", [
    ({"draft": {"device": "u280"}}, r"the autoregressive system runs the target alone; it has no draft"),
    ({"toggles": {"step_ahead": True}}, r"it has no toggles"),
    ({"cluster": {"prm": {"devices": 2}}}, r"the autoregressive system has no prm pool"),
])
def test_what_the_autoregressive_system_lacks_is_refused(given, message):
    with pytest.raises(cosim.ConfigError, match=message):
        cosim.scenario("autoregressive", **given)
    with pytest.raises(cosim.ConfigError, match=r"runs the target alone"):
        cosim.load_scenario("target-alone").with_value("pcie.bandwidth_gbps", 8)
    with pytest.raises(cosim.ConfigError, match=r"batching\.block_size sets the autoregressive system's vLLM "
                                                r"engine; heteroreason batches by KV bytes"):
        cosim.load_scenario("heteroreason-u280-200").with_value("batching.block_size", 32)


def test_a_request_beyond_the_target_window_is_refused_before_the_run():
    trace = Trace(plain_header("test"), [plain_problem("long", 4000, 200)])
    with pytest.raises(cosim.ConfigError, match=r"problem 'long': 4000 prompt tokens and 200 output tokens "
                                                r"\(its final chain\) exceed the 4096-token window"):
        cosim.simulate(cosim.load_scenario("target-alone"), trace)


def test_the_target_alone_plans_its_target_pool_and_draws_its_requests(tmp_path):
    import json

    from conftest import run_cli

    scenario = tmp_path / "ar.yaml"
    scenario.write_text("system: autoregressive\nbatching: {enabled: true, max_batch: 32, token_budget: 512}\n")
    done = run_cli("plan", scenario, "--rate", "4", "--requests", "40", "--profile", "math500", "--slo", "1000",
                   "--target", "1-2", "--out", tmp_path / "plan", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (plan,) = json.loads((tmp_path / "plan" / "plan.json").read_text())["plans"]
    # Any objective one GPU meets: the cheapest is one GPU, and only the target pool varied.
    assert plan["cluster"]["target_devices"] == 1 and plan["candidates"] == 2
    assert plan["costs"]["draft"] == 0 and plan["costs"]["prm"] == 0
    served = run_cli("serve", scenario, "--rate", "4", "--requests", "10", "--profile", "math500",
                     "--timeline", tmp_path / "t.json", "--out", tmp_path / "s", cwd=tmp_path)
    assert served.returncode == 0, served.stderr
    events = json.loads((tmp_path / "t.json").read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert "target 0 (RTX 3090)" in names and not any(n.startswith(("draft ", "prm ")) for n in names)
    assert "TTFT" in served.stdout and "TPOT" in served.stdout
