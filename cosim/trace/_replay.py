"""The BRSD algorithm (docs/system.md) as a state machine over trace events.

One implementation serves three purposes: it checks that a problem's events
are a run the algorithm could have made (the loader), it derives the final
accepted chain and the token counts (metrics), and it assigns step indices
as a scripted trajectory is written (the builder).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._extension import native
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader


class ReplayError(ValueError):
    """An event the algorithm could not have produced; ``field`` names the culprit."""

    def __init__(self, index: int, field: str, message: str):
        super().__init__(message)
        self.index = index
        self.field = field


@dataclass(frozen=True)
class ChainSummary:
    final_steps: tuple[int, ...]       # tokens of each step of the final accepted chain
    drafted_tokens: int
    accepted_draft_tokens: int         # drafts the PRM accepted (even if a backtrack dropped them later)
    discarded_draft_tokens: int        # drafts the PRM rejected
    target_tokens: int                 # every token the target generated (kept or not)
    kept_target_tokens: int
    reverted_tokens: int               # accepted tokens dropped by backtracks
    drafts: int
    rejected_drafts: int
    refinements: int
    failed_refinements: int
    backtracks: int

    @property
    def final_tokens(self) -> int:
        return sum(self.final_steps)

    @property
    def steps(self) -> int:
        return len(self.final_steps)

    @property
    def acceptance_rate(self) -> float:
        """RSD's token-weighted acceptance: accepted draft tokens over all tokens
        accepted drafts and the target produced (RSD's token_counts[0] / ([0] + [1]))."""
        total = self.accepted_draft_tokens + self.target_tokens
        return self.accepted_draft_tokens / total if total else 0.0


class Replay:
    """Feeds events one at a time; raises ReplayError at the first impossible one,
    before changing any state."""

    def __init__(self, header: TraceHeader):
        self.header = header
        self.chain: list[int] = []          # tokens of each accepted step, in order
        self.pending: str | None = None     # "refine" after a rejected draft or a backtrack, "backtrack"
        self.pending_step = 0
        self.backtracks = 0
        self.index = -1
        self.counts = dict(drafted=0, accepted=0, discarded=0, target=0, kept_target=0, reverted=0, drafts=0,
                           rejected=0, refinements=0, failed=0)

    @property
    def next_step(self) -> int:
        return len(self.chain) + 1

    def _fail(self, field: str, message: str) -> None:
        raise ReplayError(self.index, field, message)

    def _check_step(self, event: Draft | Refine, expected: int) -> None:
        if event.step != expected:
            self._fail("step", f"step {event.step} out of order: the algorithm is at step {expected}")

    def _check_tokens_and_score(self, event: Draft | Refine) -> None:
        if event.tokens <= 0:
            self._fail("tokens", f"tokens must be > 0, got {event.tokens}")
        if event.score is not None and not 0.0 <= event.score <= 1.0:
            self._fail("score", f"score must be in [0, 1], got {event.score}")

    def feed(self, event: Event) -> None:
        self.index += 1
        if isinstance(event, Draft):
            self._draft(event)
        elif isinstance(event, Refine):
            self._refine(event)
        elif isinstance(event, Backtrack):
            self._backtrack(event)
        else:
            self._fail("type", f"unknown event {event!r}")

    def _draft(self, event: Draft) -> None:
        if self.pending == "refine":
            self._fail("type", f"step {self.pending_step} needs a refine event next, got a draft")
        if self.pending == "backtrack":
            self._fail("type", "a failed refinement must be followed by a backtrack, got a draft")
        self._check_step(event, self.next_step)
        self._check_tokens_and_score(event)
        expected = event.score >= self.header.accept_threshold
        if event.accepted != expected:
            self._fail("accepted", f"accepted is {str(event.accepted).lower()} but score {event.score} is "
                                   f"{'>=' if expected else '<'} the acceptance threshold "
                                   f"{self.header.accept_threshold}")
        c = self.counts
        c["drafts"] += 1
        c["drafted"] += event.tokens
        if event.accepted:
            c["accepted"] += event.tokens
            self.chain.append(event.tokens)
        else:
            c["discarded"] += event.tokens
            c["rejected"] += 1
            self.pending, self.pending_step = "refine", event.step

    def _refine(self, event: Refine) -> None:
        if self.pending != "refine":
            self._fail("type", "a refine must follow a rejected draft or a backtrack")
        self._check_step(event, self.pending_step)
        self._check_tokens_and_score(event)
        if not self.header.backtracking:
            if event.score is not None:
                self._fail("score", "a forward-only (RSD) trace does not score refinements: score must be null")
            if not event.accepted:
                self._fail("accepted", "a forward-only (RSD) trace keeps every refinement: accepted must be true")
        else:
            if event.score is None:
                self._fail("score", "with backtracking the PRM scores every refinement: score is missing")
            passes = event.score >= self.header.backtrack_threshold
            rule, cap = native(), self.header.max_backtracks  # BRSD's rule, models/workflow/brsd_rule.hpp
            can_backtrack = rule.can_backtrack(event.step, self.backtracks, cap)
            expected = rule.keeps_refinement(passes, event.step, self.backtracks, cap)
            if event.accepted != expected:
                why = ("score >= the backtracking threshold" if passes else
                       "no backtrack is possible (cap reached or first step), so it is kept" if not can_backtrack
                       else "score < the backtracking threshold")
                self._fail("accepted", f"accepted is {str(event.accepted).lower()} but score {event.score} vs "
                                       f"threshold {self.header.backtrack_threshold} means "
                                       f"{str(expected).lower()} ({why}; {self.backtracks} of "
                                       f"{self.header.max_backtracks} backtracks used)")
        c = self.counts
        c["refinements"] += 1
        c["target"] += event.tokens
        if event.accepted:
            c["kept_target"] += event.tokens
            self.chain.append(event.tokens)
            self.pending = None
        else:
            c["failed"] += 1
            self.pending = "backtrack"

    def _backtrack(self, event: Backtrack) -> None:
        if self.pending != "backtrack":
            self._fail("type", "a backtrack must follow a failed refinement")
        expected = self.pending_step - 1
        if event.to_step != expected:
            self._fail("to_step", f"to_step must be {expected} (the step before the failed refinement), "
                                  f"got {event.to_step}")
        if self.backtracks >= self.header.max_backtracks:
            self._fail("to_step", f"more than {self.header.max_backtracks} backtracks in one problem")
        self.backtracks += 1
        self.counts["reverted"] += self.chain.pop()
        self.pending, self.pending_step = "refine", expected

    def finish(self) -> ChainSummary:
        if self.pending == "refine":
            self._fail("events", f"the trace ends before step {self.pending_step} is refined")
        if self.pending == "backtrack":
            self._fail("events", "the trace ends after a failed refinement without its backtrack")
        if not self.chain:
            self._fail("events", "the final chain is empty")
        c = self.counts
        return ChainSummary(
            final_steps=tuple(self.chain),
            drafted_tokens=c["drafted"],
            accepted_draft_tokens=c["accepted"],
            discarded_draft_tokens=c["discarded"],
            target_tokens=c["target"],
            kept_target_tokens=c["kept_target"],
            reverted_tokens=c["reverted"],
            drafts=c["drafts"],
            rejected_drafts=c["rejected"],
            refinements=c["refinements"],
            failed_refinements=c["failed"],
            backtracks=self.backtracks,
        )


def summarize(problem: Problem, header: TraceHeader | None = None) -> ChainSummary:
    """The final accepted chain and token counts of one problem's events."""
    replay = Replay(header or TraceHeader())
    for event in problem.events:
        replay.feed(event)
    return replay.finish()
