"""One problem's BRSD run (docs/system.md) over real models, made an event at a time:
the recorder takes them all at once, a live co-simulation as far as the simulation's
questions need (cosim.record.RecordingPolicy)."""

from __future__ import annotations

from typing import Any, Iterator

from .._extension import native
from ..trace import Backtrack, Draft, Refine, TraceHeader
from ._models import CausalModel, Scorer


class BrsdRun:
    """Greedy decoding, step delimiter "\\n\\n"; the PRM scores every draft step and, with
    backtracking, every refinement; a refinement below the backtracking threshold reverts to
    the previous step (at most ``max_backtracks`` per problem, never before step 1), whose
    alternative the target writes. The run ends at EOS or after ``max_steps`` steps."""

    def __init__(self, draft: CausalModel, target: CausalModel, prm: Scorer, prompt: list[int],
                 header: TraceHeader, max_step_tokens: int, max_steps: int):
        self.draft, self.target, self.prm, self.prompt = draft, target, prm, prompt
        self.header, self.max_step_tokens, self.max_steps = header, max_step_tokens, max_steps
        self.chain: list[list[int]] = []
        self.events: list[Any] = []
        self._steps = self._run()
        self.ended = False

    def get(self, i: int) -> Any:
        """Event ``i``, running the models as far as it (None once the run has ended before it)."""
        while len(self.events) <= i and not self.ended:
            try:
                self.events.append(next(self._steps))
            except StopIteration:
                self.ended = True
        return self.events[i] if i < len(self.events) else None

    def all(self) -> list[Any]:
        i = 0
        while self.get(i) is not None:
            i += 1
        return self.events

    def context(self) -> list[int]:
        return self.prompt + [t for s in self.chain for t in s]

    def _run(self) -> Iterator[Any]:
        head, chain = self.header, self.chain
        backtracks = 0
        done = False
        while not done and len(chain) < self.max_steps:
            step = len(chain) + 1
            drafted, draft_eos = self.draft.generate_step(self.context(), self.max_step_tokens)
            if not drafted:  # EOS at once: the answer is complete
                return
            score = self.prm(self.context(), drafted)
            if score >= head.accept_threshold:
                chain.append(drafted)
                done = draft_eos
                yield Draft(step, len(drafted), round(score, 6), True)
                continue
            yield Draft(step, len(drafted), round(score, 6), False)
            while True:  # the target writes this step (and, after a backtrack, the one before)
                refined, refined_eos = self.target.generate_step(self.context(), self.max_step_tokens)
                if not refined:  # the target ended the answer at once: a one-token step, its EOS
                    refined = [self.target.tokenizer.eos_token_id]
                if not head.backtracking:
                    chain.append(refined)
                    done = refined_eos
                    yield Refine(step, len(refined), None, True)
                    break
                rscore = self.prm(self.context(), refined)
                kept = native().keeps_refinement(bool(rscore >= head.backtrack_threshold), step, backtracks,
                                                 head.max_backtracks)
                if kept:
                    chain.append(refined)
                    done = refined_eos
                    yield Refine(step, len(refined), round(rscore, 6), True)
                    break
                yield Refine(step, len(refined), round(rscore, 6), False)
                backtracks += 1
                chain.pop()
                yield Backtrack(step - 1)
                step -= 1
