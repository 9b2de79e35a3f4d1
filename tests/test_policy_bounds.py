"""Live policies are checked like any input: answers within the window (asked ahead too),
booleans where booleans are asked for, every hook's failure named, the header checked,
memory flat in the number of problems, and the shipped example policies runnable with
--policy as the README shows."""

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cosim
from cosim.live import ProfilePolicy, TracePolicy
from cosim.trace import TraceHeader
from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "heteroreason-u280-300"
MAX_TOKENS = 1_000_000  # a trace's largest token count (docs/trace-format.md)


@pytest.fixture(scope="module")
def scn():
    return cosim.load_scenario(SCENARIO)


@pytest.fixture(scope="module")
def problems():
    return cosim.trace.generate("math500", 4, seed=1).in_memory()


def _one_line_error(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _earlier_run(tmp_path):
    """An --out folder an earlier run wrote, and its contents."""
    out = tmp_path / "out"
    done = run_cli("run", SCENARIO, "--problems", "2", "--out", out, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return out, _contents(out)


def _contents(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _untouched(folder, before):
    """The --out folder holds what it held, and no staging is left beside it."""
    assert _contents(folder) == before
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".staging")]


def _limit_memory():
    # A regression would grow the worker by gigabytes: it fails here instead of swapping.
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


def test_an_answer_asked_ahead_past_the_trace_limit_stops_the_run_with_nothing_lost(tmp_path):
    policy = tmp_path / "ahead.py"
    policy.write_text(textwrap.dedent("""\
        from cosim.live import TracePolicy

        class Ahead(TracePolicy):
            def draft(self, view):
                return 10**9 if view.speculative else super().draft(view)
        """))
    out, before = _earlier_run(tmp_path)
    done = run_cli("run", SCENARIO, "--problems", "3", "--policy", f"{policy}:Ahead", "--out", out, "--quiet",
                   cwd=tmp_path, preexec_fn=_limit_memory, timeout=600)
    assert done.returncode == 2
    line = _one_line_error(done.stderr)
    assert "policy Ahead.draft, problem 'math500-00000', step " in line
    assert f"1000000000 tokens (asked ahead) is past the limit of {MAX_TOKENS} tokens a step" in line
    _untouched(out, before)


@pytest.mark.parametrize("kind", ["draft", "refine"])
def test_an_answer_asked_ahead_is_bounded_by_the_window_as_a_due_one(scn, problems, kind):
    window = min(scn.draft.model.context_window, scn.prm.model.context_window, scn.target.model.context_window)

    class Wide(TracePolicy):
        def ask(self, view, due):
            if not view.speculative:
                return due(view)
            # One token past the window, from what the view says the context holds.
            self.reach = view.problem.prompt_tokens + sum(view.chain) + (window + 1 - view.problem.prompt_tokens
                                                                         - sum(view.chain))
            return window + 1 - view.problem.prompt_tokens - sum(view.chain)

    if kind == "draft":
        Wide.draft = lambda self, view: self.ask(view, super(Wide, self).draft)
    else:
        Wide.refine = lambda self, view: self.ask(view, super(Wide, self).refine)
    with pytest.raises(cosim.PolicyError, match=rf"policy Wide\.{kind}, problem '.*', step \d+: \d+ tokens \(asked "
                                                rf"ahead\) take the context to {window + 1}, beyond the {window}-token "
                                                rf"window of the models"):
        cosim.cosimulate(scn, Wide(problems), problems)


def test_answer_correct_takes_booleans_numpy_s_included_and_refuses_text(scn, problems):
    class Numpy(TracePolicy):
        def answer_correct(self, request, problem, events):
            return np.bool_(request % 2 == 0)

    made = cosim.cosimulate(scn, Numpy(problems), problems).trace
    assert [p.answer_correct for p in made.problems] == [True, False, True, False]
    assert all(type(p.answer_correct) is bool for p in made.problems)

    for answer in ("no", 1, 0.0, "False"):
        class Wrong(TracePolicy):
            def answer_correct(self, request, problem, events, answer=answer):
                return answer

        with pytest.raises(cosim.PolicyError, match=r"policy Wrong\.answer_correct, problem 'math500-00000', "
                                                    r"step \d+: answer True, False or None \(not known\), got "):
            cosim.cosimulate(scn, Wrong(problems), problems)


def test_a_verdict_takes_numpy_booleans_and_scores_and_refuses_text(scn, problems):
    plain = cosim.cosimulate(scn, TracePolicy(problems), problems)

    class Numpy(TracePolicy):
        def verdict(self, view):
            kept, score = super().verdict(view)
            return np.bool_(kept), (None if score is None else np.float64(score))

    same = cosim.cosimulate(scn, Numpy(problems), problems)
    assert same.result.summary == plain.result.summary
    for answer in ("yes", (True, "0.9"), (np.True_, True), None):
        class Wrong(TracePolicy):
            def verdict(self, view, answer=answer):
                return answer

        with pytest.raises(cosim.PolicyError, match=r"policy Wrong\.verdict, problem 'math500-00000', step 1: "):
            cosim.cosimulate(scn, Wrong(problems), problems)


@pytest.mark.parametrize("hook", ["draft", "refine", "verdict", "answer_correct", "done", "collect"])
@pytest.mark.parametrize("raised", [SystemExit(3), ValueError("no such thing"), GeneratorExit()])
def test_any_exception_in_any_hook_is_a_policy_error_naming_it(scn, problems, hook, raised):
    def fail(self, *args):
        raise raised

    Failing = type("Failing", (TracePolicy,), {hook: fail})
    where = "" if hook == "collect" else r", problem 'math500-00000', step \d+"
    with pytest.raises(cosim.PolicyError, match=rf"^policy Failing\.{hook}{where}: {type(raised).__name__}"):
        cosim.cosimulate(scn, Failing(problems), problems)


@pytest.mark.parametrize("body,where", [
    ("import sys\nsys.exit(4)\n", "import of {file}: SystemExit: 4"),
    ("raise RuntimeError('cannot start')\n", "import of {file}: RuntimeError: cannot start"),
    ("from cosim.errors import ConfigError\nraise ConfigError('needs a GPU')\n",
     "import of {file}: ConfigError: needs a GPU"),
    ("from cosim.live import TracePolicy\nclass P(TracePolicy):\n    def __init__(self, trace):\n"
     "        raise SystemExit('bye')\n", "P.__init__(trace): SystemExit: bye"),
    ("from cosim.live import TracePolicy\nclass P(TracePolicy):\n    def __init__(self, trace):\n"
     "        raise KeyError('k')\n", "P.__init__(trace): KeyError: 'k'"),
])
def test_a_policy_failing_at_import_or_construction_is_a_one_line_error(tmp_path, body, where):
    file = tmp_path / "pol.py"
    file.write_text(body)
    out, before = _earlier_run(tmp_path)
    done = run_cli("run", SCENARIO, "--problems", "2", "--policy", f"{file}:P", "--out", out, cwd=tmp_path)
    assert done.returncode == 2
    assert _one_line_error(done.stderr) == f"cosim: error: policy {file}:P, {where.format(file=file)}"
    _untouched(out, before)


@pytest.mark.parametrize("header,message", [
    (TraceHeader(accept_threshold=7), r"header\.accept_threshold: must be in \[0, 1\], got 7"),
    (TraceHeader(backtrack_threshold=float("nan")), r"header\.backtrack_threshold: expected a number"),
    (TraceHeader(max_backtracks=-1), r"header\.max_backtracks: must be >= 0, got -1"),
    (TraceHeader(max_backtracks="5"), r"header\.max_backtracks: expected an integer, got \"5\""),
    (TraceHeader(max_backtracks=10**9), r"header\.max_backtracks: 1000000000 is absurdly large \(limit 1000\)"),
    (TraceHeader(backtracking="yes"), r"header\.backtracking: expected true or false"),
    (TraceHeader(metadata={"when": object()}), r"header\.metadata: a trace file could not hold it"),
    ("thresholds", r"header: expected a trace\.TraceHeader, got str"),
])
def test_the_header_given_to_cosimulate_is_checked_as_a_trace_header(scn, problems, header, message):
    with pytest.raises(cosim.errors.TraceError, match=message):
        cosim.cosimulate(scn, TracePolicy(problems), problems, header=header)


def test_a_header_of_numpy_numbers_is_taken_as_the_numbers_it_holds(scn, problems):
    plain = cosim.cosimulate(scn, TracePolicy(problems), problems, header=TraceHeader(0.7, 0.7, 5, True))
    numpy = cosim.cosimulate(scn, TracePolicy(problems), problems,
                             header=TraceHeader(np.float64(0.7), np.float32(0.7), np.int64(5), np.bool_(True)))
    assert numpy.result.summary == plain.result.summary


def test_a_profile_policy_made_from_a_generated_trace_plays_that_trace(scn):
    trace = cosim.trace.generate("gsm8k", 5, seed=9)
    live = cosim.cosimulate(scn, ProfilePolicy(trace), trace)
    assert live.trace.problems == list(trace.problems)  # the draws of the trace's own seed
    with pytest.raises(cosim.ConfigError, match="seed 3 and the trace's seed 9 disagree"):
        ProfilePolicy(trace, seed=3)
    with pytest.raises(cosim.ConfigError, match="not drawn by trace.generate"):
        ProfilePolicy(cosim.trace.Trace(TraceHeader(), list(trace.problems)))


@pytest.mark.parametrize("spec", ["policy_time_budget.py:TimeBudgetAcceptance",
                                  "policy_refine_budget.py:RefineBudget",
                                  "policy_adaptive_stepahead.py:AdaptiveStepAhead"])
def test_the_shipped_example_policies_run_with_policy_as_the_readme_shows(tmp_path, spec):
    done = run_cli("run", SCENARIO, "--problems", "3", "--policy", ROOT / "scenarios" / spec, "--out", "out",
                   "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = cosim.trace.load(tmp_path / "out" / "trace.jsonl")
    assert len(made) == 3 and made.header.metadata["live"]["policy"] == spec.split(":")[1]


def test_policy_help_says_it_runs_the_file_s_code(tmp_path):
    done = run_cli("run", "--help", cwd=tmp_path)
    assert "runs the file's code" in " ".join(done.stdout.split())


_PEAK = """
import resource, sys, tempfile
import cosim
from cosim.live import TracePolicy
n = int(sys.argv[1])
scn = cosim.load_scenario("heteroreason-u280-300")
trace = cosim.trace.generate("math500", n, seed=1)
with tempfile.TemporaryDirectory() as folder:
    live = cosim.cosimulate(scn, TracePolicy(trace), trace, rows_to=folder)
    assert len(live.trace) == n
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # the worker's peak, KiB
"""


def test_a_live_run_s_memory_stays_flat_in_the_number_of_problems():
    """The worker's peak resident memory at 4N problems against N: a run that held what
    each problem made grew about 3 kB a problem here; the bound is a third of that."""
    def peak(n):
        done = subprocess.run([sys.executable, "-c", _PEAK, str(n)], capture_output=True, text=True,
                              timeout=900, env={**os.environ, "PYTHONHASHSEED": "0"})
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    small, large = peak(1000), peak(4000)
    assert large - small < 3000 * 1.0, (small, large)  # KiB for 3000 more problems


@pytest.mark.parametrize("prompt,message", [
    (4096, r"prompt_tokens: 4096 leave no room for a step in the 4096-token window of the models"),
    (10**12, r"prompt_tokens: 1000000000000 leave no room"),
    (0, r"prompt_tokens: a whole number >= 1, got 0"),
    ("100", r"prompt_tokens: a whole number >= 1, got '100'"),
])
def test_problems_made_in_code_are_checked_before_the_policy_is_asked(scn, prompt, message):
    # The run's window is the smallest of its models' (the 7B target's 4096 tokens).
    assert min(scn.draft.model.context_window, scn.prm.model.context_window, scn.target.model.context_window) == 4096
    with pytest.raises(cosim.ConfigError, match=rf"^problem 'a': {message}"):  # not the policy's answer
        cosim.cosimulate(scn, ProfilePolicy("math500", seed=1), [cosim.trace.Problem("a", "math500", prompt, ())])


def test_what_collect_returns_must_leave_the_worker(scn, problems):
    class Unpicklable(TracePolicy):
        def collect(self):
            return lambda: "made in the worker"

    with pytest.raises(cosim.PolicyError, match=r"^policy Unpicklable\.collect: what it returns cannot leave the "
                                                r"simulation worker \(pickle: "):
        cosim.cosimulate(scn, Unpicklable(problems), problems)
