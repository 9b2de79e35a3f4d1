"""BRSD's keep-or-backtrack rule is written once (models/workflow/brsd_rule.hpp) and every
user gets the same answer from it: the rule itself over a hand-worked table, then one
hand-worked problem played by the trace generator, the recorder, the trace checker and
the live co-simulation (the native engine applies the rule to the policy's verdicts)."""

from types import SimpleNamespace

import pytest

import cosim
from cosim._extension import native
from cosim.live import Policy
from cosim.record._brsd import BrsdRun
from cosim.trace import Backtrack, Draft, Refine, Trace, TraceHeader
from cosim.trace._generate import Candidate, Play, StepDraws, threshold_rule
from cosim.trace._replay import Replay, ReplayError

# (passes, step, backtracks used, cap) -> (can backtrack, kept), worked out by hand: a failed
# refinement goes back only with backtracks left and a step before it.
TABLE = [
    ((True, 3, 0, 5), (True, True)),     # passes: kept
    ((False, 3, 0, 5), (True, False)),   # fails with backtracks left: backtracked over
    ((False, 3, 4, 5), (True, False)),   # the last backtrack left
    ((False, 3, 5, 5), (False, True)),   # the cap reached: kept whatever its score
    ((False, 3, 6, 5), (False, True)),   # past the cap
    ((False, 1, 0, 5), (False, True)),   # the first step: nothing to go back to
    ((False, 2, 0, 0), (False, True)),   # no backtracks allowed
    ((True, 1, 5, 5), (False, True)),
    ((False, 2, 1, 2), (True, False)),
]

HEADER = TraceHeader(accept_threshold=0.7, backtrack_threshold=0.7, max_backtracks=2)
TOKENS = 4
# One problem of three steps, by hand (thresholds 0.7, at most two backtracks): each line is
# what the rule makes of the score before it.
EVENTS = [
    Draft(1, TOKENS, 0.9, True),
    Draft(2, TOKENS, 0.1, False),
    Refine(2, TOKENS, 0.2, False),   # fails, 0 of 2 backtracks used, step 1 before it: back
    Backtrack(1),
    Refine(1, TOKENS, 0.3, True),    # fails, but step 1 cannot be backtracked over: kept
    Draft(2, TOKENS, 0.1, False),
    Refine(2, TOKENS, 0.2, False),   # fails, 1 of 2 used: back
    Backtrack(1),
    Refine(1, TOKENS, 0.9, True),    # passes
    Draft(2, TOKENS, 0.8, True),
    Draft(3, TOKENS, 0.1, False),
    Refine(3, TOKENS, 0.2, True),    # fails, 2 of 2 used: kept
]
# The PRM's scores in the order it is asked (drafts and refinements alike).
SCORES = [e.score for e in EVENTS if not isinstance(e, Backtrack)]


@pytest.mark.parametrize("given,expected", TABLE)
def test_the_rule_over_the_table(given, expected):
    passes, step, backtracks, cap = given
    assert native().can_backtrack(step, backtracks, cap) == expected[0]
    assert native().keeps_refinement(passes, step, backtracks, cap) == expected[1]


@pytest.mark.parametrize("given,expected", TABLE)
def test_the_trace_checker_takes_the_rule_over_the_table(given, expected):
    passes, step, backtracks, cap = given
    header = TraceHeader(backtrack_threshold=0.7, max_backtracks=cap)
    for accepted in (True, False):
        # The checker's state at a refinement of `step` with `backtracks` used.
        checker = Replay(header)
        checker.backtracks, checker.pending, checker.pending_step = backtracks, "refine", step
        checker.chain = [TOKENS] * (step - 1)
        event = Refine(step, TOKENS, 0.9 if passes else 0.2, accepted)
        if accepted == expected[1]:
            checker.feed(event)
        else:
            with pytest.raises(ReplayError, match="accepted is"):
                checker.feed(event)


def test_the_trace_generator_plays_the_hand_worked_problem():
    # Scores by (step, attempt): a backtrack takes the next attempt at the step before.
    script = {(1, 0): (0.9, 0.0), (2, 0): (0.1, 0.2), (1, 1): (0.0, 0.3), (2, 1): (0.1, 0.2), (1, 2): (0.0, 0.9),
              (2, 2): (0.8, 0.0), (3, 0): (0.1, 0.2)}

    def draw(step, attempt):
        draft, target = script[(step, attempt)]
        return StepDraws(Candidate(TOKENS, True, draft), Candidate(TOKENS, True, target))

    events = []
    Play(HEADER, draw, 3, 10_000, threshold_rule(HEADER), events).run()
    assert events == EVENTS


class _Model:
    """A causal model that writes TOKENS-token steps, and ends the answer after three."""

    def __init__(self, run):
        self.run = run
        self.tokenizer = SimpleNamespace(eos_token_id=0)

    def generate_step(self, context, max_tokens):
        return ([] if len(self.run().chain) == 3 else [1] * TOKENS), False


def test_the_recorder_plays_the_hand_worked_problem():
    scores = iter(SCORES)
    holder = {}
    run = BrsdRun(_Model(lambda: holder["run"]), _Model(lambda: holder["run"]), lambda context, step: next(scores),
                  [5], HEADER, 64, 10)
    holder["run"] = run
    assert run.all() == EVENTS


def test_the_trace_checker_takes_the_hand_worked_problem():
    checker = Replay(HEADER)
    for event in EVENTS:
        checker.feed(event)
    flipped = list(EVENTS)
    flipped[4] = Refine(1, TOKENS, 0.3, False)  # step 1 cannot be backtracked over
    checker = Replay(HEADER)
    with pytest.raises(ReplayError, match="accepted is false"):
        for event in flipped:
            checker.feed(event)


class _Scripted(Policy):
    """Steps of TOKENS tokens, three of them kept, and the PRM's scores in order."""

    def __init__(self):
        self.scores = list(SCORES)
        self.kept = 0

    def draft(self, view):
        return 0 if len(view.chain) == 3 else TOKENS

    def refine(self, view):
        return TOKENS

    def verdict(self, view):
        return self.scores.pop(0)


def test_the_live_engine_plays_the_hand_worked_problem():
    scn = cosim.load_scenario("gpu-baseline")
    problems = cosim.trace.generate("math500", 1, seed=0, header=HEADER).in_memory()
    live = cosim.cosimulate(scn, _Scripted(), problems, header=HEADER)
    assert list(live.trace.problems[0].events) == EVENTS
    assert isinstance(live.trace, Trace)
