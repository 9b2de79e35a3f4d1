"""first_accept_s, the time from a problem's start to the first step the host keeps,
against verdict times worked out by hand (tests/handmodel.py)."""

import math

import pytest

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from cosim.trace._plain import plain_header, plain_problem
from handmodel import FAST_FPGA, Gpu, all_accept_timeline

PROMPT = 100
NS = 1e-9


def run(problem, fpga=None, backtracking=True):
    scn = cosim.scenario("heteroreason", 1, draft={"overrides": fpga or {}})
    return cosim.simulate(scn, Trace(TraceHeader(backtracking=backtracking), [problem])).per_problem[0]


@pytest.mark.parametrize("fpga", [None, FAST_FPGA], ids=["u280", "fast"])
def test_an_accepted_first_step_is_kept_when_its_verdict_reaches_the_host(fpga):
    steps = [40, 30, 50]
    b = TrajectoryBuilder("accept", PROMPT)
    for n in steps:
        b.accept(n)
    row = run(b.build(), fpga)
    # Phase 1's prompt prefill and KV migration, the first step drafted on the FPGA, sent to
    # the PRM over both links, scored over the whole context, the verdict back to the host.
    first_verdict_ns = all_accept_timeline(PROMPT, steps, True, fpga)["verdicts"][0]
    assert row["first_accept_s"] == pytest.approx(first_verdict_ns * NS, abs=10 * NS)
    assert row["first_accept_s"] < row["latency_s"]


def test_a_step_kept_and_later_reverted_by_a_backtrack_still_counts():
    # Step 2 is rejected, its refinement fails its score, and the host goes back to step 1.
    problem = (TrajectoryBuilder("b", PROMPT).accept(40).reject(10).refine_fails(20).backtrack().refine(30)
               .accept(10).build())
    row = run(problem)
    # What follows the first step does not move its verdict: the next step is drafted on the
    # FPGA while the PRM scores it.
    assert row["first_accept_s"] == pytest.approx(all_accept_timeline(PROMPT, [40], True)["verdicts"][0] * NS,
                                                  abs=10 * NS)


def test_a_rejected_first_step_is_kept_only_once_its_refinement_is():
    rsd = TraceHeader(backtracking=False)
    rejected = run(TrajectoryBuilder("r", PROMPT, header=rsd).reject(40).refine(30).accept(10).build(),
                   backtracking=False)
    # The reject's verdict comes when an accept's would have; the refinement (kept unscored)
    # ends later, and before the last step's verdict.
    reject_verdict_s = all_accept_timeline(PROMPT, [40], True)["verdicts"][0] * NS
    assert reject_verdict_s < rejected["first_accept_s"] < rejected["latency_s"]


def test_the_target_alone_keeps_its_first_output_token():
    gpu = Gpu("rtx3090", "qwen2.5-math-7b")
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 20), plain_problem("r1", 57, 1)])
    per = cosim.simulate(cosim.load_scenario("target-alone"), trace).per_problem
    for i, prompt in enumerate((300, 57)):
        first_token_s = (gpu.request + gpu.prefill(prompt, 0)) * NS  # overhead, then the prompt's prefill
        assert per.column("first_accept_s")[i] == pytest.approx(first_token_s, rel=1e-9)
        assert not math.isnan(per.column("first_accept_s")[i])


def test_a_served_request_counts_from_its_arrival():
    scn = cosim.load_scenario("cluster-gpu-stepahead")
    served = cosim.serve.run(scn, cosim.trace.generate("math500", 6, seed=0), rate=4.0, seed=1).per_request
    first, queue, latency = (served.column(n) for n in ("first_accept_s", "queue_s", "latency_s"))
    assert all(q < f < lat for f, q, lat in zip(first, queue, latency))
