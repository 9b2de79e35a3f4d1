"""Seeded synthetic traces drawn from a dataset profile.

Every candidate step has a latent quality (good or bad) and a PRM score drawn
from it (see ``_quality``); verdicts follow from the score and the header's
thresholds, and the answer is right with a probability set by the quality of
the steps the final chain keeps. The target model (Config 1's 7B or Config 2's
1.5B) sets how good refined steps are.

Every random draw is keyed by (seed, problem, step, attempt), never by the
order in which the algorithm happens to ask for it. The forward-only (RSD)
run and the backtracking (BRSD) run of the same seed therefore see identical
draws wherever the two algorithms do the same thing: they agree event for event
up to the first backtrack, and RSD keeps every refinement unscored. Runs at
other thresholds, or for the other target, reuse the same draws too: one
answer-correctness uniform per problem and, per step and attempt, the lengths
of the draft and of the refinement, one hardness uniform that decides both
steps' quality, and a uniform for each one's score.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._dataset_stats import TOKENIZER_NOTE
from .._extension import native
from .._lazy import LazySequence
from ..errors import ConfigError
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader
from ._io import Trace
from ._profile_files import load_profile
from ._profiles import DatasetProfile
from ._quality import DRAFT, DrawnProblem, correctness_probability, good_step_probability, resolve_target, step_score

_MAX_REDRAWS = 10_000
_PROBLEM_STREAM, _STEP_STREAM = 0, 1


def _lognormal_int(rng: np.random.Generator, median: float, sigma: float, top: int) -> int:
    for _ in range(_MAX_REDRAWS):
        value = max(1, int(round(math.exp(math.log(median) + sigma * rng.standard_normal()))))
        if value <= top:
            return value
    raise ConfigError(f"cannot draw a value <= {top} from a lognormal of median {median}, sigma {sigma}")


@dataclass(frozen=True)
class Candidate:
    """One candidate step: its length, its latent quality and the PRM's score of it."""

    tokens: int
    good: bool
    score: float


@dataclass(frozen=True)
class StepDraws:
    draft: Candidate
    target: Candidate


# The report and threshold sweeps draw the same few hundred problems again (at
# other thresholds, forward-only, for the other target): their latest raw draws
# are kept for reuse, a bounded number (about 2 MB), so memory stays flat however
# long a trace is.
_REUSED_PROBLEMS, _REUSED_STEPS = 1 << 9, 1 << 12


@functools.lru_cache(maxsize=_REUSED_PROBLEMS)
def _problem_draws(prompt: tuple[float, float, int], steps: tuple[float, float, int], seed: int,
                   index: int) -> tuple[int, int, float]:
    rng = np.random.default_rng([seed, index, _PROBLEM_STREAM])
    return _lognormal_int(rng, *prompt), _lognormal_int(rng, *steps), float(rng.uniform())


@functools.lru_cache(maxsize=_REUSED_STEPS)
def _step_draws(tokens: tuple[float, float, int], seed: int, index: int, step: int,
                attempt: int) -> tuple[int, float, float, int, float]:
    """Draft tokens, hardness, the draft score's uniform, target tokens, the target score's uniform.
    One hardness is shared by the draft and its refinement: a step is good for a writer when it
    falls below the writer's good-step probability, so the better model writes good steps wherever
    the weaker one does, and a refinement of a rejected (mostly bad) draft meets the harder steps."""
    rng = np.random.default_rng([seed, index, _STEP_STREAM, step, attempt])
    draft_tokens = _lognormal_int(rng, *tokens)
    hardness, draft_u = float(rng.uniform()), float(rng.uniform())
    return draft_tokens, hardness, draft_u, _lognormal_int(rng, *tokens), float(rng.uniform())


class Draws:
    def __init__(self, profile: DatasetProfile, seed: int, index: int, target: str):
        self.profile, self.seed, self.index = profile, seed, index
        self.good_draft = good_step_probability(profile, DRAFT)
        self.good_target = good_step_probability(profile, target)

    def problem(self) -> tuple[int, int, float]:
        """Prompt tokens, planned steps, and the uniform the answer's correctness is decided by."""
        p = self.profile
        question, steps, u_correct = _problem_draws(
            (p.prompt_tokens_median, p.prompt_tokens_sigma, p.prompt_tokens_max),
            (p.steps_median, p.steps_sigma, p.steps_max), self.seed, self.index)
        return p.template_tokens + question, steps, u_correct

    def step(self, step: int, attempt: int) -> StepDraws:
        p = self.profile
        draft_tokens, hardness, draft_u, target_tokens, target_u = _step_draws(
            (p.step_tokens_median, p.step_tokens_sigma, p.step_tokens_max), self.seed, self.index, step, attempt)
        draft_good, target_good = hardness < self.good_draft, hardness < self.good_target
        return StepDraws(Candidate(draft_tokens, draft_good, step_score(p, draft_good, draft_u)),
                         Candidate(target_tokens, target_good, step_score(p, target_good, target_u)))


class Play:
    """One problem's trajectory played from a state: each step drafted and kept, or
    refined by the target, a failed refinement backtracking to the step before, as the
    verdicts ``keeps(step, score, of_refinement, can_backtrack)`` rule. generate() plays
    with the header's thresholds; a live policy plays its own rule ahead
    (cosim/live/_profile_policy.py). ``events`` may be any list that appends."""

    def __init__(self, header: TraceHeader, draw: Any, steps: int, budget: int, keeps: Any, events: list[Any],
                 chain: list[Candidate] | None = None, attempts: dict[int, int] | None = None,
                 backtracks: int = 0):
        self.header, self.draw, self.steps, self.budget, self.keeps = header, draw, steps, budget, keeps
        self.events = events
        self.chain: list[Candidate] = [] if chain is None else chain
        self.attempts: dict[int, int] = {} if attempts is None else attempts
        self.backtracks = backtracks

    def used(self) -> int:
        return sum(c.tokens for c in self.chain)

    def fits(self, tokens: int) -> bool:
        return self.used() + tokens <= self.budget

    def take(self, step: int) -> StepDraws:
        attempt = self.attempts.get(step, 0)
        self.attempts[step] = attempt + 1
        return self.draw(step, attempt)

    def run(self) -> None:
        """Steps until the planned ones are kept or the next does not fit the window."""
        while len(self.chain) < self.steps:
            step = len(self.chain) + 1
            d = self.take(step)
            if not (self.fits(d.draft.tokens) and self.fits(d.target.tokens)):
                return  # the solution is cut at the window, as generation stops at max tokens
            accepted = self.keeps(step, d.draft.score, False, False)
            self.events.append(Draft(step, d.draft.tokens, d.draft.score, accepted))
            if accepted:
                self.chain.append(d.draft)
            else:
                self.refine_from(step, d.target)

    def refine_from(self, step: int, target: Candidate) -> None:
        """The target produces ``step``, and after a failed refinement backtracks to
        produce the one before, until a refinement is kept."""
        h = self.header
        while True:
            if not h.backtracking:
                self.events.append(Refine(step, target.tokens, None, True))
                self.chain.append(target)
                return
            can = native().can_backtrack(step, self.backtracks, h.max_backtracks)
            kept = native().keeps_refinement(bool(self.keeps(step, target.score, True, can)), step, self.backtracks,
                                             h.max_backtracks)
            self.events.append(Refine(step, target.tokens, target.score, kept))
            if kept:
                self.chain.append(target)
                return
            self.events.append(Backtrack(step - 1))
            self.backtracks += 1
            self.chain.pop()
            step -= 1
            target = self.take(step).target
            if not self.fits(target.tokens):
                # The alternative runs into the window: generation stops there (the popped
                # step freed at least one token, so something always fits).
                target = dataclasses.replace(target, tokens=self.budget - self.used())


def threshold_rule(header: TraceHeader) -> Any:
    """The algorithm's verdicts: a draft kept at the accept threshold, a refinement at the
    backtrack threshold."""
    def keeps(step: int, score: float, of_refinement: bool, can_backtrack: bool) -> bool:
        return score >= (header.backtrack_threshold if of_refinement else header.accept_threshold)
    return keeps


def _draw(profile: DatasetProfile, header: TraceHeader, seed: int, index: int, target: str) -> DrawnProblem:
    draws = Draws(profile, seed, index, target)
    prompt, n_steps, u_correct = draws.problem()
    events: list[Event] = []
    play = Play(header, draws.step, n_steps, profile.max_context_tokens - prompt, threshold_rule(header), events)
    play.run()
    chain = play.chain
    if not chain:
        raise ConfigError(f"profile {profile.name!r}: problem {index} has no step that fits max_context_tokens")
    kept_good = tuple(c.good for c in chain)
    chance = correctness_probability(profile, kept_good)
    problem = Problem(f"{profile.name}-{index:05d}", profile.name, prompt, tuple(events), u_correct < chance)
    return DrawnProblem(problem, kept_good, chance)


def _whole(value: Any) -> Any:
    """A numpy (or other) integer as the int it holds; anything else as it is, to be refused."""
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value


def generate(profile: Any, problems: int, seed: int = 0, backtracking: bool = True,
             header: TraceHeader | None = None, target: str | None = None, config: int | None = None) -> Trace:
    """A synthetic trace of ``problems`` problems drawn from a dataset profile.

    ``backtracking=False`` gives the forward-only (RSD) run of the same problems.
    ``target`` (``"qwen2.5-math-7b"`` or ``"qwen2.5-math-1.5b"``) or ``config``
    (1 or 2) names the model that refines rejected steps (default: Config 1's
    7B); the header's thresholds decide the verdicts.
    """
    prof = load_profile(profile)
    model = resolve_target(target, config)
    problems, seed = _whole(problems), _whole(seed)  # numpy integers are integers
    if isinstance(problems, bool) or not isinstance(problems, int) or problems <= 0:
        raise ConfigError(f"problems: must be a whole number > 0, got {problems!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed: must be a whole number >= 0, got {seed!r}")
    base = header or TraceHeader()
    for name in ("accept_threshold", "backtrack_threshold"):
        value = getattr(base, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{name}: must be in [0, 1], got {value!r}")
    max_backtracks = _whole(base.max_backtracks)
    if isinstance(max_backtracks, bool) or not isinstance(max_backtracks, int) or max_backtracks < 0:
        raise ConfigError(f"max_backtracks: must be a whole number >= 0, got {base.max_backtracks!r}")
    head = TraceHeader(
        accept_threshold=float(base.accept_threshold),
        backtrack_threshold=float(base.backtrack_threshold),
        max_backtracks=max_backtracks,
        backtracking=backtracking,
        metadata={
            "generator": {"profile": prof.name, "problems": problems, "seed": seed, "backtracking": backtracking,
                          "target": model},
            "tokenizer": TOKENIZER_NOTE,
        },
    )
    return Trace(head, GeneratedProblems(prof, head, seed, problems, model))


class GeneratedProblems(LazySequence):
    """The problems of a generated trace, each drawn when read: problem ``i``
    depends only on (seed, i), so nothing needs holding, and a trace of any
    length costs the same memory. Reading one twice draws it twice (same result)."""

    def __init__(self, profile: Any, header: TraceHeader, seed: int, count: int, target: str | None = None):
        self._profile, self._header, self._seed, self._count = profile, header, seed, count
        self._target = resolve_target(target)

    def __len__(self) -> int:
        return self._count

    def _item(self, index: int) -> Problem:
        return self.drawn(index).problem

    def drawn(self, index: int) -> DrawnProblem:
        """Problem ``index`` with the quality of each step of its final chain and
        its probability of a right answer (which the trace itself does not carry)."""
        index = operator.index(index)
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"index {index} of {self._count}")
        return _draw(self._profile, self._header, self._seed, index, self._target)

    def __repr__(self) -> str:
        return (f"GeneratedProblems({self._profile.name!r}, seed={self._seed}, {self._count} problems, "
                f"target {self._target})")
