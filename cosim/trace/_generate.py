"""Seeded synthetic traces drawn from a dataset profile.

Every random draw is keyed by (seed, problem, step, attempt), never by the
order in which the algorithm happens to ask for it. The forward-only (RSD)
run and the backtracking (BRSD) run of the same seed therefore see identical
draws wherever the two algorithms do the same thing: they agree event for event
up to the first backtrack, and RSD keeps every refinement unscored.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._dataset_stats import TOKENIZER_NOTE
from .._lazy import LazySequence
from ..errors import ConfigError
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader
from ._io import Trace
from ._profiles import DatasetProfile, load_profile

_MAX_REDRAWS = 10_000
_SCORE_DIGITS = 1e4  # scores carry four decimals
_PROBLEM_STREAM, _STEP_STREAM = 0, 1


def _lognormal_int(rng: np.random.Generator, median: float, sigma: float, top: int) -> int:
    for _ in range(_MAX_REDRAWS):
        value = max(1, int(round(math.exp(math.log(median) + sigma * rng.standard_normal()))))
        if value <= top:
            return value
    raise ConfigError(f"cannot draw a value <= {top} from a lognormal of median {median}, sigma {sigma}")


def _score(rng: np.random.Generator, passes: bool, threshold: float) -> float:
    if passes:
        return math.ceil(rng.uniform(threshold, 1.0) * _SCORE_DIGITS) / _SCORE_DIGITS
    return math.floor(rng.uniform(0.0, threshold) * _SCORE_DIGITS) / _SCORE_DIGITS


@dataclass(frozen=True)
class _StepDraws:
    draft_tokens: int
    draft_score: float
    target_tokens: int
    target_score: float


class _Draws:
    def __init__(self, profile: DatasetProfile, header: TraceHeader, seed: int, index: int):
        self.profile, self.header, self.seed, self.index = profile, header, seed, index

    def problem(self) -> tuple[int, int, bool]:
        p = self.profile
        rng = np.random.default_rng([self.seed, self.index, _PROBLEM_STREAM])
        prompt = p.template_tokens + _lognormal_int(rng, p.prompt_tokens_median, p.prompt_tokens_sigma,
                                                    p.prompt_tokens_max)
        steps = _lognormal_int(rng, p.steps_median, p.steps_sigma, p.steps_max)
        correct = bool(rng.uniform() < p.accuracy)
        return prompt, steps, correct

    def step(self, step: int, attempt: int) -> _StepDraws:
        p, h = self.profile, self.header
        rng = np.random.default_rng([self.seed, self.index, _STEP_STREAM, step, attempt])
        draft_tokens = _lognormal_int(rng, p.step_tokens_median, p.step_tokens_sigma, p.step_tokens_max)
        draft_passes = rng.uniform() >= p.reject_probability
        draft_score = _score(rng, draft_passes, h.accept_threshold)
        target_tokens = _lognormal_int(rng, p.step_tokens_median, p.step_tokens_sigma, p.step_tokens_max)
        target_passes = rng.uniform() >= p.refine_failure_probability
        target_score = _score(rng, target_passes, h.backtrack_threshold)
        return _StepDraws(draft_tokens, draft_score, target_tokens, target_score)


def _problem(profile: DatasetProfile, header: TraceHeader, seed: int, index: int) -> Problem:
    draws = _Draws(profile, header, seed, index)
    prompt, n_steps, correct = draws.problem()
    budget = profile.max_context_tokens - prompt
    events: list[Event] = []
    chain: list[int] = []
    attempts: dict[int, int] = {}
    backtracks = 0

    def next_draws(step: int) -> _StepDraws:
        attempt = attempts.get(step, 0)
        attempts[step] = attempt + 1
        return draws.step(step, attempt)

    def fits(tokens: int) -> bool:
        return sum(chain) + tokens <= budget

    while len(chain) < n_steps:
        step = len(chain) + 1
        d = next_draws(step)
        if not (fits(d.draft_tokens) and fits(d.target_tokens)):
            break  # the solution is cut at the window, as generation stops at max tokens
        accepted = d.draft_score >= header.accept_threshold
        events.append(Draft(step, d.draft_tokens, d.draft_score, accepted))
        if accepted:
            chain.append(d.draft_tokens)
            continue
        # The target produces this step, and after a failed refinement backtracks
        # to produce the one before, until a refinement is kept.
        target = d
        while True:
            if not header.backtracking:
                events.append(Refine(step, target.target_tokens, None, True))
                chain.append(target.target_tokens)
                break
            passes = target.target_score >= header.backtrack_threshold
            kept = passes or backtracks >= header.max_backtracks or step == 1
            events.append(Refine(step, target.target_tokens, target.target_score, kept))
            if kept:
                chain.append(target.target_tokens)
                break
            events.append(Backtrack(step - 1))
            backtracks += 1
            chain.pop()
            step -= 1
            target = next_draws(step)
            if not fits(target.target_tokens):
                # The alternative runs into the window: generation stops there (the popped
                # step freed at least one token, so something always fits).
                target = dataclasses.replace(target, target_tokens=budget - sum(chain))
    if not chain:
        raise ConfigError(f"profile {profile.name!r}: problem {index} has no step that fits max_context_tokens")
    return Problem(f"{profile.name}-{index:05d}", profile.name, prompt, tuple(events), correct)


def generate(profile: Any, problems: int, seed: int = 0, backtracking: bool = True,
             header: TraceHeader | None = None) -> Trace:
    """A synthetic trace of ``problems`` problems drawn from a dataset profile.

    ``backtracking=False`` gives the forward-only (RSD) run of the same problems.
    """
    prof = load_profile(profile)
    if isinstance(problems, bool) or not isinstance(problems, int) or problems <= 0:
        raise ConfigError(f"problems: must be a whole number > 0, got {problems!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed: must be a whole number >= 0, got {seed!r}")
    base = header or TraceHeader()
    head = TraceHeader(
        accept_threshold=base.accept_threshold,
        backtrack_threshold=base.backtrack_threshold,
        max_backtracks=base.max_backtracks,
        backtracking=backtracking,
        metadata={
            "generator": {"profile": prof.name, "problems": problems, "seed": seed, "backtracking": backtracking},
            "tokenizer": TOKENIZER_NOTE,
        },
    )
    return Trace(head, GeneratedProblems(prof, head, seed, problems))


class GeneratedProblems(LazySequence):
    """The problems of a generated trace, each drawn when read: problem ``i``
    depends only on (seed, i), so nothing needs holding, and a trace of any
    length costs the same memory. Reading one twice draws it twice (same result)."""

    def __init__(self, profile: Any, header: TraceHeader, seed: int, count: int):
        self._profile, self._header, self._seed, self._count = profile, header, seed, count

    def __len__(self) -> int:
        return self._count

    def _item(self, index: int) -> Problem:
        return _problem(self._profile, self._header, self._seed, index)

    def __repr__(self) -> str:
        return f"GeneratedProblems({self._profile.name!r}, seed={self._seed}, {self._count} problems)"
