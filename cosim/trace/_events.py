"""The trace data model: problems and the events of their BRSD runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

FORMAT = "cosim-trace"
VERSION = 1  # the problems carry no arrival times
VERSION_ARRIVALS = 2  # every problem carries its arrival time, ``arrival_s``
VERSIONS = (VERSION, VERSION_ARRIVALS)


@dataclass(frozen=True)
class Draft:
    """The draft model proposed step ``step`` (``tokens`` long); the PRM scored it."""

    step: int
    tokens: int
    score: float
    accepted: bool
    type: str = field(default="draft", init=False, repr=False)


@dataclass(frozen=True)
class Refine:
    """The target model generated step ``step``. In BRSD the PRM scores it too
    (``score``); ``accepted`` says whether it was kept. Forward-only (RSD) traces
    keep every refinement unscored (``score`` None)."""

    step: int
    tokens: int
    score: float | None
    accepted: bool
    type: str = field(default="refine", init=False, repr=False)


@dataclass(frozen=True)
class Backtrack:
    """After a failed refinement of step ``to_step + 1``: drop it and step
    ``to_step``; the target produces an alternative for ``to_step`` next."""

    to_step: int
    type: str = field(default="backtrack", init=False, repr=False)


Event = Union[Draft, Refine, Backtrack]


@dataclass(frozen=True)
class Problem:
    id: str
    dataset: str
    prompt_tokens: int
    events: tuple[Event, ...]
    answer_correct: bool | None = None
    # Seconds from the start of the run at which the request arrives (trace version 2);
    # None: the run is closed-loop, a request starts as soon as a slot is free.
    arrival_s: float | None = None
    # Token-level systems, a request served alone: the drafts of each verification pass that
    # can draft, in order, as a live policy set them (docs/live.md); past its end, and where
    # empty, the scenario's schedule drafts.
    draft_schedule: tuple[int, ...] = ()


# The header metadata key of the prompt tokens every problem shares (cosim/trace/_plain.py).
SHARED_PREFIX = "shared_prefix_tokens"


@dataclass(frozen=True)
class TraceHeader:
    """Run-wide settings every problem is checked against (the algorithm's defaults: docs/system.md)."""

    accept_threshold: float = 0.7
    backtrack_threshold: float = 0.7
    max_backtracks: int = 5
    backtracking: bool = True
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self, version: int = VERSION) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": version,
            "accept_threshold": self.accept_threshold,
            "backtrack_threshold": self.backtrack_threshold,
            "max_backtracks": self.max_backtracks,
            "backtracking": self.backtracking,
            "metadata": self.metadata,
        }


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, Backtrack):
        return {"type": "backtrack", "to_step": event.to_step}
    return {"type": event.type, "step": event.step, "tokens": event.tokens, "score": event.score,
            "accepted": event.accepted}


def problem_to_json(problem: Problem) -> dict[str, Any]:
    out: dict[str, Any] = {"id": problem.id, "dataset": problem.dataset, "prompt_tokens": problem.prompt_tokens}
    if problem.answer_correct is not None:
        out["answer_correct"] = problem.answer_correct
    if problem.arrival_s is not None:
        out["arrival_s"] = problem.arrival_s
    out["events"] = [event_to_json(e) for e in problem.events]
    if problem.draft_schedule:
        out["draft_schedule"] = list(problem.draft_schedule)
    return out
