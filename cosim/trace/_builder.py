"""Writing trajectories by hand, for tests and scenario scripts.

    b = TrajectoryBuilder("p1", prompt_tokens=120)
    b.accept(64)                      # a 64-token draft step, accepted
    b.reject(50).refine(70)           # a rejected draft, refined with 70 tokens
    b.reject(40).refine_fails(30)     # a refinement that still scores too low ...
    b.backtrack().refine(55)          # ... so back to the previous step, which the target redoes
    problem = b.build()

Step numbers come from the same algorithm the trace loader checks against, so
a builder call the algorithm does not allow raises at once.
"""

from __future__ import annotations

import numbers

from ..errors import ConfigError
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader
from ._replay import Replay, ReplayError, summarize

ACCEPTED_SCORE = 0.9
REJECTED_SCORE = 0.3


class TrajectoryBuilder:
    def __init__(self, problem_id: str, prompt_tokens: int, dataset: str = "scripted",
                 answer_correct: bool | None = None, header: TraceHeader | None = None):
        if isinstance(prompt_tokens, bool) or not isinstance(prompt_tokens, numbers.Integral) or prompt_tokens <= 0:
            raise ConfigError(f"{problem_id}: prompt_tokens must be a whole number > 0, got {prompt_tokens!r}")
        prompt_tokens = int(prompt_tokens)  # a numpy integer is the int it holds
        self.id, self.prompt_tokens, self.dataset = problem_id, prompt_tokens, dataset
        self.answer_correct = answer_correct
        self.header = header or TraceHeader()
        self._replay = Replay(self.header)
        self.events: list[Event] = []

    def _add(self, event: Event) -> TrajectoryBuilder:
        try:
            self._replay.feed(event)
        except ReplayError as exc:
            self._replay.index -= 1  # feed() validates before it changes anything
            raise ConfigError(f"{self.id}: cannot add {event}: {exc}") from None
        self.events.append(event)
        return self

    def _target_step(self) -> int:
        return self._replay.pending_step if self._replay.pending == "refine" else self._replay.next_step

    def accept(self, tokens: int, score: float = ACCEPTED_SCORE) -> TrajectoryBuilder:
        """The draft model writes the next step and the PRM accepts it."""
        return self._add(Draft(self._replay.next_step, tokens, score, True))

    def reject(self, tokens: int, score: float = REJECTED_SCORE) -> TrajectoryBuilder:
        """The draft model writes the next step and the PRM rejects it."""
        return self._add(Draft(self._replay.next_step, tokens, score, False))

    def refine(self, tokens: int, score: float | None = ACCEPTED_SCORE) -> TrajectoryBuilder:
        """The target writes the pending step, and it is kept."""
        if not self.header.backtracking:
            score = None
        return self._add(Refine(self._target_step(), tokens, score, True))

    def refine_fails(self, tokens: int, score: float = REJECTED_SCORE) -> TrajectoryBuilder:
        """The target writes the pending step, and it still scores below the backtracking threshold."""
        return self._add(Refine(self._target_step(), tokens, score, False))

    def backtrack(self) -> TrajectoryBuilder:
        """Revert to the step before the failed refinement."""
        return self._add(Backtrack(self._replay.pending_step - 1))

    def build(self) -> Problem:
        problem = Problem(self.id, self.dataset, self.prompt_tokens, tuple(self.events), self.answer_correct)
        try:
            summarize(problem, self.header)
        except ReplayError as exc:
            raise ConfigError(f"{self.id}: {exc}") from None
        return problem
