"""What a policy sees and answers in a live co-simulation, and the policy that answers
from a trace (docs/live.md).

The engine asks at four kinds of decision point, never per token:

- ``draft(view)``: how many tokens the draft model's step ``view.step`` has, or 0 when
  the answer is complete. Asked when the step is due, and ahead of it
  (``view.speculative``) when the draft device starts it before the previous verdict.
- ``refine(view)``: how many tokens the target's step has; ahead too, for step-ahead runs.
- ``verdict(view)``: whether the PRM's verdict keeps the drafted step or the refinement
  (``view.of_refinement``): a bool, a score (kept at or above the header's threshold), or
  ``(kept, score)``. A refinement not kept is backtracked over when ``view.can_backtrack``,
  and kept otherwise.
- ``speculate(view)``: in the token-level systems, for a request served alone, how many
  tokens the next verification pass drafts (0 to ``view.most``), or None for the
  scenario's own schedule (``view.proposed``); asked before each pass that can draft. The
  base class answers None, and a policy that does not override it is never asked.

In the target-alone and token-level systems a request's output is one step: ``draft(view)``
at step 1, with ``view.whole`` set, says how many tokens it has (at least one).

``answer_correct(request, problem, events)``, optional, says whether the answer a run made
is right (True, False or None); ``done(request)``, once the problem has ended: what the
policy kept for it can go, so that a run's memory does not grow with its problems;
``collect()``, optional, what the policy sends back from the simulation worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, PolicyError
from ..trace import Backtrack, Draft, Problem, Refine, Trace
from ..trace._replay import summarize


@dataclass(slots=True)
class View:
    """One decision point: the simulated time, the problem's state and the devices'.
    (Made once per decision: a plain slotted class, cheap to build; do not keep it.)"""

    kind: str                  # "draft", "refine" or "verdict"
    problem: Problem           # the request's problem (its events are not consulted live)
    request: int               # its index in the run
    step: int                  # the step the question is about
    speculative: bool          # asked ahead of the step, for step-ahead work
    of_refinement: bool        # verdict: on a refinement (else on a drafted step)
    tokens: int                # verdict: the step's tokens; draft: what a step-ahead draft already has (0: none)
    time_s: float              # simulated time of the question
    waited_s: float            # verdict: since the step went to the PRM
    chain: tuple[int, ...]     # tokens of each step kept so far
    backtracks: int            # backtracks the problem has used
    can_backtrack: bool        # verdict on a refinement: a failed one can still be backtracked over
    kvmu: tuple[int, int, int]  # the draft device's KVMU pointers: valid, curr, ahead
    devices: dict[str, str]    # draft, prm, target: idle, prefill, decode or transfer
    # speculate: the scenario's drafts for the pass (``step`` counts passes from 1; ``tokens``
    # is the output the request has), the most a pass drafts, the output's length, and the
    # pass before's drafts and the drafts it kept (0, 0 before the first).
    proposed: int = 0
    most: int = 0
    output: int = 0
    last_drafts: int = 0
    last_accepted: int = 0
    whole: bool = False        # draft: the question is a target-alone or token-level request's whole output


def described(exc: BaseException) -> str:
    """An exception in one line: its class and its message's first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def hook_error(policy: Any, hook: str, problem: Problem | None, step: int | None, message: str) -> PolicyError:
    """The error of a policy's hook (its method ``hook``), naming the policy, the hook and,
    where the run is at one, the problem and the step."""
    where = "" if problem is None else f", problem {problem.id!r}, step {step}"
    return PolicyError(f"policy {type(policy).__name__}.{hook}{where}: {message}")


class Policy:
    """Subclass and answer ``draft``, ``refine`` and ``verdict`` (module docstring). The
    base class answers nothing: a policy says what the models would do."""

    def draft(self, view: View) -> int:
        raise NotImplementedError("Policy.draft: how many tokens has the draft model's step (0: answer complete)?")

    def refine(self, view: View) -> int:
        raise NotImplementedError("Policy.refine: how many tokens has the target's step?")

    def verdict(self, view: View) -> Any:
        raise NotImplementedError("Policy.verdict: does the PRM's verdict keep the step?")

    def speculate(self, view: View) -> int | None:
        """How many tokens the next verification pass drafts; None: the scenario's schedule."""
        return None

    def asks_drafts(self, problems: tuple[Problem, ...]) -> bool:
        """Whether a run of ``problems`` asks ``speculate`` at all (once, before the run): by
        default when the class answers it. A policy that would answer None to every pass of
        these problems says False, and their passes cost it nothing."""
        return type(self).speculate is not Policy.speculate

    def answer_correct(self, request: int, problem: Problem, events: tuple[Any, ...]) -> bool | None:
        """Whether the answer the run of request ``request`` made (``events``) is right
        (accuracy); None: not known."""
        return None

    def done(self, request: int) -> None:
        """Request ``request`` has ended (after answer_correct): drop what was kept for it."""


class _Fixed:
    """A problem's events, looked up by index (None past the end)."""

    def __init__(self, events: tuple[Any, ...]):
        self.events = events

    def get(self, i: int) -> Any:
        return self.events[i] if 0 <= i < len(self.events) else None


class TracePolicy(Policy):
    """Answers from a trace's events, in the order trace replay reads them: a live run
    with it is the replay of that trace. Questions asked ahead are answered as replay looks
    ahead: the next draft of the step, or the next refinement of it before a backtrack to
    an earlier step (else that step's next draft length)."""

    def __init__(self, trace: Trace):
        if not isinstance(trace, Trace):
            raise ConfigError(f"TracePolicy: expected a Trace, got {type(trace).__name__}")
        self.trace = trace
        self._position: dict[int, int] = {}  # request -> index of the last event consumed
        self._events: dict[int, Any] = {}

    def events_of(self, view: View) -> Any:
        """The events this policy answers from for ``view``'s request: an object with
        ``get(i)`` (None past the end); the problem's own events here."""
        return _Fixed(view.problem.events)

    def _state(self, view: View) -> tuple[Any, int]:
        if view.request not in self._events:
            self._events[view.request] = self.events_of(view)
            self._position[view.request] = -1
        return self._events[view.request], self._position[view.request]

    def _next(self, view: View, kind: type) -> Any:
        events, pos = self._state(view)
        if isinstance(events.get(pos + 1), Backtrack):
            pos += 1  # the engine made the backtrack itself, from the failed verdict
        event = events.get(pos + 1)
        if event is None:
            return None
        if not isinstance(event, kind) or event.step != view.step:
            raise ConfigError(f"problem {view.problem.id!r}: the trace's event {pos + 1} is {event!r}, where the "
                              f"run asks for a {kind.__name__.lower()} of step {view.step}")
        self._position[view.request] = pos + 1
        return event

    @staticmethod
    def _after(events: Any, pos: int) -> Any:
        i = pos + 1
        while (event := events.get(i)) is not None:
            yield event
            i += 1

    def _ahead_draft(self, events: Any, pos: int, step: int) -> int:
        for event in self._after(events, pos):
            if isinstance(event, Draft) and event.step == step:
                return event.tokens
        return 0

    def draft(self, view: View) -> int:
        if view.whole:
            # The request's output is the trace's final chain, as replay reads it.
            return summarize(view.problem, self.trace.header).final_tokens
        events, pos = self._state(view)
        if view.speculative:
            return self._ahead_draft(events, pos, view.step)
        event = self._next(view, Draft)
        return 0 if event is None else event.tokens

    def refine(self, view: View) -> int:
        events, pos = self._state(view)
        if view.speculative:
            for event in self._after(events, pos):
                if isinstance(event, Refine) and event.step == view.step:
                    return event.tokens
                if isinstance(event, Backtrack) and event.to_step < view.step:
                    break  # the context of the step changes
            return self._ahead_draft(events, pos, view.step)
        event = self._next(view, Refine)
        if event is None:
            raise ConfigError(f"problem {view.problem.id!r}: the trace ends where the run asks for a refinement")
        return event.tokens

    def verdict(self, view: View) -> Any:
        events, pos = self._state(view)
        event = events.get(pos)
        return event.accepted, event.score

    def speculate(self, view: View) -> int | None:
        # The drafts the trace recorded for the pass; past them, the scenario's.
        recorded = view.problem.draft_schedule
        return recorded[view.step - 1] if view.step <= len(recorded) else None

    def asks_drafts(self, problems: tuple[Problem, ...]) -> bool:
        # Problems that recorded no drafts replay the scenario's schedule: nothing to ask,
        # unless a subclass answers on its own.
        if type(self).speculate is not TracePolicy.speculate:
            return True
        return any(p.draft_schedule for p in problems)

    def answer_correct(self, request: int, problem: Problem, events: tuple[Any, ...]) -> bool | None:
        # The trace's own label, when the run made the trace's events.
        return problem.answer_correct if tuple(events) == tuple(problem.events) else None

    def done(self, request: int) -> None:
        self._events.pop(request, None)
        self._position.pop(request, None)
