"""The latent-quality step model behind synthetic traces.

Every candidate step, drafted or refined, is good or bad: good with a
probability set per dataset and per model that writes it (the 0.5B draft, the
7B or the 1.5B target). One uniform per step and attempt, its hardness, decides
for every writer (good below the writer's probability), so a stronger model
gets a step right wherever a weaker one does, and the target refining a
rejected draft meets the harder steps. The PRM's score is a noisy reading of that quality:
its log-odds are normal, with one mean and spread for good steps and another
for bad ones. Verdicts follow from the score and the trace's thresholds. The
final answer is right with probability

    clean_chain_accuracy x (1 - bad_step_penalty) ** (bad steps in the final chain)

so a kept bad step takes away ``bad_step_penalty`` of the chance, and a
backtrack that replaces it gives that chance back.

A score comes from a uniform draw through the inverse distribution function:
the same draw gives the same score at any threshold, so raising a threshold can
only turn an accept into a reject.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Iterable, Sequence

from ..errors import ConfigError
from ..config._model_names import CONFIG_TARGETS
from ._events import Backtrack, Draft, Event, Problem, Refine
from ._profiles import DatasetProfile

DRAFT = "draft"
# Profile field with each writer's probability of a good step.
_GOOD_FIELD = {
    DRAFT: "draft_good_step_probability",
    CONFIG_TARGETS[1]: "target_7b_good_step_probability",
    CONFIG_TARGETS[2]: "target_1_5b_good_step_probability",
}
TARGETS = tuple(CONFIG_TARGETS.values())
CONFIGS = tuple(CONFIG_TARGETS)
SCORE_DIGITS = 4  # trace scores carry four decimals
_HALF_DIGIT = 0.5 * 10.0**-SCORE_DIGITS
_NORMAL = NormalDist()
# numpy's uniforms lie in [0, 1); the inverse normal needs the open interval.
_U_EDGE = 1e-12


def resolve_target(target: Any = None, config: Any = None) -> str:
    """The target model a trace is drawn for: a model name, or the scenario
    config that uses it (1: 7B, 2: 1.5B); Config 1's target when neither is given."""
    if config is not None:
        if type(config).__module__ == "numpy" and callable(getattr(config, "item", None)):
            config = config.item()  # a numpy integer is the int it holds
        if isinstance(config, bool) or config not in CONFIG_TARGETS:
            raise ConfigError(f"config: must be 1 (7B target) or 2 (1.5B target), got {config!r}")
        if target is not None and target != CONFIG_TARGETS[config]:
            raise ConfigError(f"target {target!r} and config {config} disagree (config {config} is "
                              f"{CONFIG_TARGETS[config]})")
        return CONFIG_TARGETS[config]
    if target is None:
        return CONFIG_TARGETS[1]
    if target not in TARGETS:
        raise ConfigError(f"target: one of {', '.join(TARGETS)}, got {target!r}")
    return target


def good_step_probability(profile: DatasetProfile, writer: str) -> float:
    """Probability that a step written by ``writer`` (``"draft"`` or a target model) is good."""
    if writer not in _GOOD_FIELD:
        raise ConfigError(f"writer: one of {', '.join(_GOOD_FIELD)}, got {writer!r}")
    return getattr(profile, _GOOD_FIELD[writer])


def _logit_params(profile: DatasetProfile, good: bool) -> tuple[float, float]:
    if good:
        return profile.prm_good_logit_mean, profile.prm_good_logit_sigma
    return profile.prm_bad_logit_mean, profile.prm_bad_logit_sigma


def step_score(profile: DatasetProfile, good: bool, u: float) -> float:
    """The PRM's score of a step of the given quality from a uniform draw ``u``
    (inverse distribution function: a larger ``u`` never gives a lower score)."""
    mean, sigma = _logit_params(profile, good)
    z = _NORMAL.inv_cdf(min(max(u, _U_EDGE), 1.0 - _U_EDGE))
    return round(1.0 / (1.0 + math.exp(-(mean + sigma * z))), SCORE_DIGITS)


def pass_probability(profile: DatasetProfile, good: bool, threshold: float) -> float:
    """Probability that a step of the given quality scores at least ``threshold``
    (closed form; the four-decimal rounding of scores included)."""
    edge = threshold - _HALF_DIGIT
    if edge <= 0.0:
        return 1.0
    if edge >= 1.0:
        return 0.0
    mean, sigma = _logit_params(profile, good)
    return 1.0 - _NORMAL.cdf((math.log(edge / (1.0 - edge)) - mean) / sigma)


def reject_probability(profile: DatasetProfile, writer: str, threshold: float) -> float:
    """Probability that the PRM scores a step by ``writer`` below ``threshold``."""
    good = good_step_probability(profile, writer)
    return (good * (1.0 - pass_probability(profile, True, threshold))
            + (1.0 - good) * (1.0 - pass_probability(profile, False, threshold)))


def correctness_probability(profile: DatasetProfile, kept_good: Iterable[bool]) -> float:
    """Probability of a right answer given the quality of each step of the final
    chain (True: good): each bad step takes away ``bad_step_penalty`` of it."""
    bad = sum(1 for good in kept_good if not good)
    return profile.clean_chain_accuracy * (1.0 - profile.bad_step_penalty) ** bad


def kept_qualities(events: Sequence[Event], qualities: Sequence[bool | None]) -> tuple[bool, ...]:
    """The quality of each step of the final chain, from a problem's events and
    the quality of each candidate step (``qualities[i]`` for ``events[i]``; a
    backtrack's entry is ignored): kept steps are pushed, backtracks pop."""
    if len(events) != len(qualities):
        raise ConfigError(f"kept_qualities: {len(events)} events but {len(qualities)} qualities")
    chain: list[bool] = []
    for event, good in zip(events, qualities):
        if isinstance(event, Backtrack):
            chain.pop()
        elif isinstance(event, Draft | Refine) and event.accepted:
            if good is None:
                raise ConfigError(f"kept_qualities: kept step {event.step} has no quality")
            chain.append(bool(good))
    return tuple(chain)


@dataclass(frozen=True)
class DrawnProblem:
    """A generated problem with what the trace does not carry: the quality of
    each step of its final chain and its probability of a right answer."""

    problem: Problem
    kept_good: tuple[bool, ...]
    correct_probability: float
