"""Live co-simulation: policies decide as the simulation reaches each decision."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cosim
from cosim.live import Policy, ProfilePolicy, TracePolicy
from cosim.trace import Backtrack, Refine, Trace, TraceHeader, TrajectoryBuilder
from conftest import run_cli
from ctrl_c import as_typed_at_a_terminal
from handmodel import FAST_FPGA, all_accept_timeline
from test_worker_lifetime import EVENT_BOUND_S, children, gone_within

SYSTEMS = ["gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
           "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-jetson", "heteroreason-vanilla",
           "heteroreason-noprefetch", "heteroreason-nobacktrack"]
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_trace_policy_replays_its_trace_exactly(name):
    scn = cosim.load_scenario(name)
    trace = cosim.trace.generate("olympiadbench", 25, seed=7, backtracking=scn.backtracking).in_memory()
    replay = cosim.simulate(scn, trace)
    live = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert live.result.per_problem == replay.per_problem
    assert live.result.summary == replay.summary
    assert live.trace.problems == trace.problems  # its answers made the same events, scores and labels


@pytest.mark.parametrize("profile,backtracking", [("math500", True), ("gsm8k", False), ("olympiadbench", True)])
def test_the_profile_policy_plays_the_generated_trace_step_by_step(profile, backtracking):
    scn = cosim.load_scenario("heteroreason-u280-300" if backtracking else "heteroreason-nobacktrack")
    trace = cosim.trace.generate(profile, 40, seed=3, backtracking=backtracking).in_memory()
    live = cosim.cosimulate(scn, ProfilePolicy(profile, seed=3, header=trace.header), trace)
    assert live.trace.problems == trace.problems
    assert live.result.per_problem == cosim.simulate(scn, trace).per_problem


class Watching(TracePolicy):
    """A trace policy that writes down every question it is asked (it runs in the
    simulation worker: the file is how the test sees them)."""

    def __init__(self, trace, path):
        super().__init__(trace)
        self.path = path

    def _note(self, kind, view):
        with open(self.path, "a") as f:
            f.write(json.dumps([kind, view.step, view.speculative, view.time_s, list(view.kvmu)]) + "\n")

    def draft(self, view):
        self._note("draft", view)
        return super().draft(view)

    def refine(self, view):
        self._note("refine", view)
        return super().refine(view)

    def verdict(self, view):
        self._note("verdict", view)
        return super().verdict(view)


def test_the_decision_points_of_an_all_accept_problem_worked_by_hand(tmp_path):
    steps, prompt = [40, 30, 50], 100
    b = TrajectoryBuilder("accept", prompt)
    for n in steps:
        b.accept(n)
    trace = Trace(TraceHeader(), [b.build()])
    scn = cosim.scenario("heteroreason", 1, draft={"overrides": FAST_FPGA})
    notes = tmp_path / "asked.jsonl"
    cosim.cosimulate(scn, Watching(trace, notes), trace)
    asked_all = [tuple(json.loads(line)) for line in notes.read_text().splitlines()]
    # docs/system.md: the target starts step 1 ahead in phase 1; each step is drafted, the next
    # one drafted ahead while the PRM scores it, the verdict kept, the target run ahead again.
    asked = [(kind, step, spec) for kind, step, spec, _, _ in asked_all]
    assert asked == [("refine", 1, True), ("draft", 1, False), ("draft", 2, True), ("verdict", 1, False),
                     ("refine", 2, True), ("draft", 2, False), ("draft", 3, True), ("verdict", 2, False),
                     ("refine", 3, True), ("draft", 3, False), ("draft", 4, True), ("verdict", 3, False),
                     ("refine", 4, True), ("draft", 4, False)]
    verdicts = [(t, tuple(kvmu)) for kind, _, _, t, kvmu in asked_all if kind == "verdict"]
    hand = all_accept_timeline(prompt, steps, True, FAST_FPGA)["verdicts"]
    for (t, _), expected in zip(verdicts, hand):
        assert t == pytest.approx(expected * 1e-9, abs=1e-8)
    # This decoder drafts the next step before each verdict: the KVMU holds it ahead.
    assert [k for _, k in verdicts] == [(100, 140, 170), (140, 170, 220), (170, 220, 220)]


class Broken(TracePolicy):
    def __init__(self, trace, fail_at=3, answer=None):
        super().__init__(trace)
        self.fail_at, self.answer = fail_at, answer

    def verdict(self, view):
        if view.step == self.fail_at:
            if self.answer is not None:
                return self.answer
            raise ValueError("the PRM is down")
        return super().verdict(view)


def test_a_policy_that_raises_or_answers_nonsense_is_named_with_its_problem_and_step():
    scn = cosim.load_scenario("heteroreason-u280-300")
    trace = cosim.trace.generate("math500", 3, seed=1).in_memory()
    with pytest.raises(cosim.PolicyError, match=r"policy Broken\.verdict, problem 'math500-00000', step 3: "
                                                r"ValueError: the PRM is down"):
        cosim.cosimulate(scn, Broken(trace), trace)
    with pytest.raises(cosim.PolicyError, match=r"Broken\.verdict.*answer a bool, a score in \[0, 1\]"):
        cosim.cosimulate(scn, Broken(trace, answer="yes"), trace)
    with pytest.raises(cosim.ConfigError, match=r"the policy has no draft\(\) method"):
        cosim.cosimulate(scn, object(), trace)


class KeepEverything(ProfilePolicy):
    def decide(self, view, score):
        return True, score


def test_a_policy_that_overrides_the_prm_goes_on_from_the_state_it_made():
    scn = cosim.load_scenario("heteroreason-u280-300")
    trace = cosim.trace.generate("math500", 60, seed=2).in_memory()
    base = cosim.cosimulate(scn, ProfilePolicy("math500", seed=2), trace)
    kept = cosim.cosimulate(scn, KeepEverything("math500", seed=2), trace)
    assert not any(isinstance(e, Refine) for p in kept.trace.problems for e in p.events)  # nothing refined
    assert all(e.accepted for p in kept.trace.problems for e in p.events)  # every draft kept
    assert kept.overridden_verdicts > 0  # the PRM scored some of them below the threshold
    assert kept.result.summary["accuracy"] < base.result.summary["accuracy"]  # bad drafts stay in the chains
    replay = cosim.simulate(scn, kept.trace)  # its trace replays the run
    assert replay.per_problem == kept.result.per_problem


class Strict(ProfilePolicy):
    # A rule of the score alone, stricter than the thresholds: many rejections,
    # refinements and backtracks, each asked ahead before it is due.
    def decide(self, view, score):
        return score >= (0.9 if view.of_refinement else 0.85), score


@pytest.mark.parametrize("depth", [1, 2])
def test_a_rule_of_the_score_alone_answers_ahead_as_its_own_trace_looks_ahead(depth):
    scn = cosim.load_scenario("heteroreason-u280-300").with_value("toggles.step_ahead_depth", depth)
    trace = cosim.trace.generate("olympiadbench", 60, seed=4).in_memory()
    live = cosim.cosimulate(scn, Strict("olympiadbench", seed=4), trace)
    events = [e for p in live.trace.problems for e in p.events]
    assert sum(isinstance(e, Backtrack) for e in events) > 10 and sum(isinstance(e, Refine) for e in events) > 50
    # Replay looks ahead in the trace; the policy answered ahead from its own future: the same.
    assert cosim.simulate(scn, live.trace).per_problem == live.result.per_problem


def test_run_with_a_policy_writes_a_trace_that_replays_the_run(tmp_path):
    policy = tmp_path / "mine.py"
    policy.write_text("from cosim.live import TracePolicy\n\nclass Mine(TracePolicy):\n    pass\n")
    first = run_cli("run", "heteroreason-u280-200", "--problems", "6", "--policy", f"{policy}:Mine", "--out", "a",
                    "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "policy decisions" in first.stdout
    again = run_cli("run", "heteroreason-u280-200", "--trace", "a/trace.jsonl", "--out", "b", "--quiet",
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "a" / "per_problem.csv").read_text() == (tmp_path / "b" / "per_problem.csv").read_text()
    bad = run_cli("run", "heteroreason-u280-200", "--policy", f"{policy}:Nobody", cwd=tmp_path)
    assert bad.returncode == 2 and "has no class Nobody" in bad.stderr and "Traceback" not in bad.stderr


def test_ctrl_c_during_a_policy_call_stops_the_run(tmp_path):
    slow = tmp_path / "slow.py"
    # The policy says when it is inside its call (a file), then sleeps far past any bound below.
    slow.write_text("import time\nfrom cosim.live import TracePolicy\n\nclass Slow(TracePolicy):\n"
                    "    def verdict(self, view):\n        open('in_verdict', 'w').close()\n"
                    "        time.sleep(600)\n        return super().verdict(view)\n")
    proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", "run", "heteroreason-u280-200", "--problems", "2",
                             "--policy", f"{slow}:Slow", "--quiet"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_typed_at_a_terminal)
    deadline = time.monotonic() + EVENT_BOUND_S
    while not (tmp_path / "in_verdict").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "in_verdict").exists(), "the policy was never called"
    workers = children(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=EVENT_BOUND_S)  # far under the policy's 600 s sleep
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert gone_within(workers, EVENT_BOUND_S)


@pytest.mark.parametrize("script,args", [("policy_time_budget.py", ["--late-ms", "0", "--margin", "1"]),
                                         ("policy_refine_budget.py", ["--budget-s", "0"]),
                                         ("policy_adaptive_stepahead.py", [])])
def test_the_example_policies_print_their_comparison(script, args, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "scenarios" / script), "--problems", "30", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "scenarios")})
    assert proc.returncode == 0, proc.stderr
    rows = {line[:26].strip(): line[26:].split() for line in proc.stdout.splitlines() if line.startswith("  ")}
    accuracy = [float(v) for v in rows["accuracy"]]
    if script != "policy_adaptive_stepahead.py":  # keeping every draft (any margin, no budget) costs accuracy
        assert accuracy[1] < accuracy[0]
        assert float(rows["mean latency (s)"][1]) < float(rows["mean latency (s)"][0])
    else:  # the same decisions, other step-ahead work: the same answers
        assert accuracy[0] == accuracy[1] == accuracy[2]
        # It drafts ahead where depth 2 does or less: it can only throw less away.
        assert float(rows["wasted energy share"][2]) <= float(rows["wasted energy share"][1])
