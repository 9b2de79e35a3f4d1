"""A live policy in the target-alone and token-level systems: it says how long each request's
output is and, for a request served alone, how many tokens each verification pass drafts;
the trace its answers make replays the run."""

import json
import re

import jsonschema
import pytest

import cosim
from cosim import ConfigError, PolicyError, load_device, load_model
from cosim.errors import TraceError
from cosim.config._speculation import eagle_head
from cosim.config.scenario import build_scenario, load_scenario
from cosim.live import Policy, ProfilePolicy, TracePolicy
from cosim.trace import Draft, Problem, Trace
from cosim.trace._plain import plain_header, plain_problem
from conftest import one_line_error, run_cli
from test_spec_decode import hand_pass
from test_speculative_decoding import DEVICE, MODEL, profile, scenario
from test_trace_format import schema

SYSTEMS = ["speculative-decoding-h100", "split-decoding-u280", "target-alone"]


def _times(result):
    per = result.per_problem
    return [list(per.column(k)) for k in ("ttft_s", "latency_s")]


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_trace_policy_replays_the_trace(name):
    # Answered from the trace, a live run is its replay: each request's instants exactly,
    # its energy within the per-pass power spans' rounding.
    trace = cosim.trace.generate("math500", 3, seed=1)
    scn = load_scenario(name)
    replay = cosim.simulate(scn, trace)
    live = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert _times(live.result) == _times(replay)
    assert list(live.result.per_problem.column("energy_j")) == pytest.approx(
        list(replay.per_problem.column("energy_j")), rel=1e-4)
    # Each output is the trace's final chain, written as one kept step.
    for made, given in zip(live.trace.problems, trace.problems):
        final = cosim.trace._replay.summarize(given, trace.header).final_tokens
        assert made.events == (Draft(1, final, 1.0, True),)


@pytest.mark.parametrize("name", ["target-alone", "speculative-decoding-h100"])
def test_a_profile_policy_writes_the_final_chain_its_play_makes(name):
    # A ProfilePolicy made with a generated trace plays its draws: a request's whole output
    # is the final chain of the problem the trace holds, so the live run is that trace's replay.
    scn = load_scenario(name)
    trace = cosim.trace.generate("math500", 4, seed=1, config=scn.config)
    live = cosim.cosimulate(scn, ProfilePolicy(trace), trace)
    assert _times(live.result) == _times(cosim.simulate(scn, trace))
    finals = [cosim.trace._replay.summarize(p, trace.header).final_tokens for p in trace.problems]
    assert [p.events[0].tokens for p in live.trace.problems] == finals


class Fixed(TracePolicy):
    """Drafts `answers` in turn, then the scenario's; sends back what it was shown (the run
    is in a worker process)."""

    def __init__(self, trace, answers):
        super().__init__(trace)
        self.answers, self.views = list(answers), []

    def speculate(self, view):
        self.views.append((view.kind, view.step, view.tokens, view.last_drafts, view.last_accepted, view.proposed,
                           view.most, view.output, view.time_s, view.devices["target"]))
        return self.answers[view.step - 1] if view.step <= len(self.answers) else None

    def collect(self):
        return self.views


def test_a_policys_drafts_set_each_pass_as_worked_by_hand(tmp_path):
    # Every draft kept (rate 1). A 21-token answer: the prefill's token, then passes drafting
    # 3, 1, 0 (a plain decode), 2 as the policy says, then the scenario's 3, capped at the
    # tokens left: 4 + 2 + 1 + 3 + 4 + 4 + 2 = 20 tokens in seven passes.
    profile(tmp_path, "per_draft: 1.0\ndrafts: 3\n")
    scn = scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=3)
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 21)])
    policy = Fixed(trace, [3, 1, 0, 2])
    live = cosim.cosimulate(scn, policy, trace)
    target, head = load_model(MODEL), eagle_head(load_model(MODEL))
    ns, ctx, fresh, pos = 0.0, 300, 300, 0
    for answer in [3, 1, 0, 2, 3, 3, 3]:
        k = min(answer, 20 - pos - 1)
        if k == 0:
            ns += hand_pass(target, 1, ctx, False)
            ctx, fresh, pos = ctx + 1, fresh + 1, pos + 1  # the head has not seen this token yet
            continue
        ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False)
        ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False) for j in range(1, k))
        ns += hand_pass(target, k + 1, ctx, True)
        ctx, fresh, pos = ctx + k + 1, k + 1, pos + k + 1
    assert pos == 20
    first = load_device(DEVICE).gpu.request_overhead_ns + hand_pass(target, 300, 0, False)
    per = live.result.per_problem
    assert per.column("latency_s")[0] == pytest.approx((first + ns) * 1e-9, rel=1e-9)
    assert per.column("drafted_tokens")[0] == 3 + 1 + 2 + 3 + 3 + 1
    # What each pass was shown: the output so far, the scenario's drafts, the pass before,
    # the instant the pass begins (after the first token and the passes before).
    kind, step, tokens, last_drafts, last_accepted, proposed, most, output, time_s, state = zip(*live.policy_outcome)
    assert step == (1, 2, 3, 4, 5, 6, 7) and set(kind) == {"speculate"}
    assert tokens == (1, 5, 7, 8, 11, 15, 19)
    # The pass after one of no drafts is shown (0, 0): that pass drafted and kept none.
    assert list(zip(last_drafts, last_accepted)) == [(0, 0), (3, 3), (1, 1), (0, 0), (2, 2), (3, 3), (3, 3)]
    assert set(proposed) == {3} and set(most) == {3} and set(output) == {21}
    assert time_s[0] == pytest.approx(first * 1e-9, rel=1e-9)
    assert all(a < b for a, b in zip(time_s, time_s[1:]))
    assert state[0] == "idle"  # between the prefill and the first pass
    # The made trace records the drafts each pass made (the policy's, then the scenario's)
    # and replays the run.
    made = live.trace.problems[0]
    assert made.draft_schedule == (3, 1, 0, 2, 3, 3, 3)
    assert _times(cosim.simulate(scn, live.trace)) == _times(live.result)
    # Saved, it matches the trace schema and reads back as it was.
    saved = live.trace.save(tmp_path / "made.jsonl")
    validator = jsonschema.Draft202012Validator(schema())
    for line in saved.read_text().splitlines():
        validator.validate(json.loads(line))
    assert cosim.trace.load(saved).problems == live.trace.problems


def test_a_trace_policy_asks_the_passes_only_of_a_trace_that_recorded_them():
    # A trace without recorded drafts replays the scenario's schedule: its policy is asked
    # each request's output once and no pass. One that recorded them is asked every pass
    # that can draft: as many as each request's schedule lists.
    scn = load_scenario("speculative-decoding-h100")
    trace = cosim.trace.generate("math500", 2, seed=1)
    plain = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert plain.decisions == 2
    made = cosim.cosimulate(scn, Fixed(trace, [2, 1]), trace).trace
    passes = [len(p.draft_schedule) for p in made.problems]
    assert all(n > 2 for n in passes)
    again = cosim.cosimulate(scn, TracePolicy(made), made)
    assert again.decisions == 2 + sum(passes)
    assert _times(again.result) == _times(cosim.simulate(scn, made))


class Says(Policy):
    def __init__(self, answer):
        self.answer = answer

    def asks_drafts(self, problems):
        return self.answer


def test_whether_a_policy_sets_drafts_is_its_own_to_say():
    trace = cosim.trace.generate("math500", 1, seed=1)
    with pytest.raises(PolicyError, match=r"policy Says\.asks_drafts: expected True or False, got 'yes'"):
        cosim.cosimulate(load_scenario("speculative-decoding-h100"), Says("yes"), trace)


def test_no_drafts_is_the_target_alone(tmp_path):
    # A pass of no drafts is a plain decode: a policy that never drafts gives the target
    # alone's latency on the same GPU and model.
    profile(tmp_path, "per_draft: 0.8\ndrafts: 4\n")
    scn = scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=4)
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 200 + 50 * i, 40 + 7 * i) for i in range(3)])
    never = cosim.cosimulate(scn, Fixed(trace, [0] * 100), trace)
    alone = build_scenario({"system": "autoregressive", "target": {"device": DEVICE, "model": MODEL}})
    assert list(never.result.per_problem.column("latency_s")) == pytest.approx(
        list(cosim.simulate(alone, trace).per_problem.column("latency_s")), rel=1e-9)
    assert list(never.result.per_problem.column("drafted_tokens")) == [0, 0, 0]


def test_the_policy_says_how_long_each_output_is():
    class Lengths(Policy):
        def draft(self, view):
            assert view.whole and view.step == 1
            return 30 + view.request

    problems = [Problem(f"p{i}", "mine", 100, ()) for i in range(3)]
    live = cosim.cosimulate(load_scenario("speculative-decoding-h100"), Lengths(), problems)
    assert list(live.result.per_problem.column("final_tokens")) == [30, 31, 32]
    assert [p.events for p in live.trace.problems] == [(Draft(1, n, 1.0, True),) for n in (30, 31, 32)]
    assert all(p.draft_schedule == () for p in live.trace.problems)  # the base class sets no drafts


@pytest.mark.parametrize("answer, message", [
    (9, r"speculate, problem 'r0', step 1: answer 0 to 8 drafts \(the acceptance profile's positions\), got 9"),
    (-1, r"answer 0 to 8 drafts"),
    (2.5, r"answer a whole number of drafts or None"),
    (True, r"answer a whole number of drafts or None"),
])
def test_a_wrong_number_of_drafts_names_the_policy(answer, message):
    trace = Trace(plain_header("test"), [plain_problem("r0", 100, 20)])
    with pytest.raises(PolicyError, match=message):
        cosim.cosimulate(load_scenario("speculative-decoding-h100"), Fixed(trace, [answer]), trace)


@pytest.mark.parametrize("answer, message", [(0, r"answer at least 1 output token, got 0"),
                                              (10**9, r"1000000000 output tokens take the context to 1000000100, beyond the \d+-token "
                                                       r"window of the target"),
                                              ("x", r"answer a whole number of output tokens")])
def test_a_wrong_output_length_names_the_policy(answer, message):
    class Length(Policy):
        def draft(self, view):
            return answer

    with pytest.raises(PolicyError, match=r"Length\.draft, problem 'p', step 1: " + message):
        cosim.cosimulate(load_scenario("target-alone"), Length(), [Problem("p", "mine", 100, ())])


def test_serving_asks_each_output_and_replays():
    # Batched, vLLM drafts the scenario's number every step: a policy sets the outputs only.
    scn = load_scenario("speculative-decoding-h100").with_values({"batching.enabled": True})
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 150, 60 + i, 0.01 * i) for i in range(6)])
    live = cosim.cosimulate(scn, Fixed(trace, [1] * 100), trace)
    assert live.policy_outcome == []
    assert _times(live.result) == _times(cosim.simulate(scn, trace))


@pytest.mark.parametrize("name", ["heteroreason-u280-200", "target-alone"])
def test_a_live_run_keeps_the_problems_arrivals(name):
    # Problems that arrive apart start when they arrive, as in their replay.
    trace = cosim.trace.generate("math500", 3, seed=1).with_arrivals([0.0, 100.0, 200.0])
    live = cosim.cosimulate(load_scenario(name), TracePolicy(trace), trace)
    assert list(live.result.per_problem.column("start_s")) == [0.0, 100.0, 200.0]
    assert [p.arrival_s for p in live.trace.problems] == [0.0, 100.0, 200.0]


def _trace_file(tmp_path, schedule):
    path = tmp_path / "t.jsonl"
    header = plain_header("test").to_json()
    row = {"id": "r0", "dataset": "d", "prompt_tokens": 100,
           "events": [{"type": "draft", "step": 1, "tokens": 6, "score": 1.0, "accepted": True}],
           "draft_schedule": schedule}
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize("schedule, message", [
    ([1, -2], r"t\.jsonl:2: draft_schedule\[1\]: must be >= 0, got -2"),
    ([1, "2"], r"t\.jsonl:2: draft_schedule\[1\]: expected an integer"),
    (3, r"t\.jsonl:2: draft_schedule: expected a list of draft counts"),
    ([1] * 6, r"t\.jsonl:2: draft_schedule: 6 passes for an output of 6 tokens; at most 5 can draft"),
])
def test_a_recorded_schedule_is_checked_line_by_line(tmp_path, schedule, message):
    with pytest.raises(TraceError, match=message):
        list(cosim.trace.load(_trace_file(tmp_path, schedule)).problems)


@pytest.mark.parametrize("name, values, message", [
    ("heteroreason-u280-200", {}, r"problem 'r0': draft_schedule: the heteroreason system decodes no request"),
    ("target-alone", {}, r"problem 'r0': draft_schedule: the autoregressive system"),
    ("speculative-decoding-h100", {"batching.enabled": True}, r"draft_schedule: with batching on"),
])
def test_a_recorded_schedule_is_refused_where_it_cannot_apply(tmp_path, name, values, message):
    trace = cosim.trace.load(_trace_file(tmp_path, [1, 2]))
    with pytest.raises(ConfigError, match=message):
        cosim.simulate(load_scenario(name).with_values(values), trace)


def test_a_recorded_schedule_past_the_profile_is_refused(tmp_path):
    # The built-in EAGLE-3 profile gives eight positions.
    trace = cosim.trace.load(_trace_file(tmp_path, [1, 9]))
    with pytest.raises(ConfigError, match=r"problem 'r0': draft_schedule\[1\]: 9 drafts; a pass drafts 0 to the "
                                          r"acceptance profile's 8 positions"):
        cosim.simulate(load_scenario("speculative-decoding-h100"), trace)


def test_the_command_line_runs_a_drafting_policy(tmp_path):
    # `cosim run --policy` on a token-level system: the made trace carries each pass's drafts.
    policy = tmp_path / "p.py"
    policy.write_text("from cosim.live import TracePolicy\n\nclass Two(TracePolicy):\n"
                      "    def speculate(self, view):\n        return 2\n")
    done = run_cli("run", "speculative-decoding-h100", "--problems", 2, "--policy", f"{policy}:Two", "--out", "o",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = cosim.trace.load(tmp_path / "o" / "trace.jsonl")
    assert all(p.draft_schedule and set(p.draft_schedule) == {2} for p in made.problems)
    bad = tmp_path / "q.py"
    bad.write_text("from cosim.live import TracePolicy\n\nclass Many(TracePolicy):\n"
                   "    def speculate(self, view):\n        return 99\n")
    line = one_line_error(run_cli("run", "speculative-decoding-h100", "--problems", 2, "--policy", f"{bad}:Many",
                                  "--out", "o2", "--quiet", cwd=tmp_path))
    assert "Many.speculate" in line and "got 99" in line
    assert not (tmp_path / "o2").exists()
    # With its progress bar, the bar is cleared before the error is printed: the error
    # starts a line of its own (the bar redraws with carriage returns).
    shown = run_cli("run", "speculative-decoding-h100", "--problems", 2, "--policy", f"{bad}:Many", "--out", "o2",
                    cwd=tmp_path)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    last = re.split(r"[\r\n]", shown.stderr.strip())[-1]
    assert last == line
