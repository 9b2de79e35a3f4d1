"""A policy that plays the models from a dataset profile's step-quality model, step by
step: the same keyed draws trace.generate makes (each step's length, whether it is good,
the PRM's score), taken as the run asks for them. With the header's thresholds it makes
exactly the trace generate() draws; a subclass that decides otherwise (a verdict against
the score, no step-ahead draft) goes on from the state it made, and the answer's
correctness follows from the quality of the steps it kept (docs/live.md)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, PolicyError
from ..trace import Backtrack, Draft, Problem, Refine, Trace, TraceHeader
from ..trace._generate import Candidate, Draws, Play, StepDraws, threshold_rule
from ..trace._profile_files import load_profile
from ..trace._quality import correctness_probability, resolve_target
from ..trace._replay import summarize
from ._policy import Policy, View, described, hook_error


@dataclass
class _State:
    draws: Draws
    steps: int                 # planned steps of the solution
    budget: int                # tokens the chain may hold beyond the prompt
    u_correct: float
    chain: list[Candidate] = field(default_factory=list)
    attempts: dict[int, int] = field(default_factory=dict)
    current: dict[int, StepDraws] = field(default_factory=dict)  # the draws of each step's latest attempt
    pending: Candidate | None = None  # the step under verdict
    pending_kind: str = ""
    backtracks: int = 0
    drawn: dict[tuple[int, int], StepDraws] = field(default_factory=dict)  # keyed draws, made once

    def draw(self, step: int, attempt: int) -> StepDraws:
        key = (step, attempt)
        d = self.drawn.get(key)
        if d is None:
            d = self.drawn[key] = self.draws.step(step, attempt)
        return d

    def used(self) -> int:
        return sum(c.tokens for c in self.chain)

    def fits(self, tokens: int) -> bool:
        return self.used() + tokens <= self.budget

    def peek(self, step: int) -> StepDraws:
        return self.draw(step, self.attempts.get(step, 0))

    def take(self, step: int) -> StepDraws:
        attempt = self.attempts.get(step, 0)
        self.attempts[step] = attempt + 1
        self.current[step] = self.draw(step, attempt)
        return self.current[step]


class _Found(Exception):
    """The event a question asked ahead needs has been played."""


class _Events(list):
    """The future events played so far; appending one ``last(event, play)`` is true of ends
    the play (``play()``: the chain's length and the backtracks used, as played)."""

    def __init__(self, last: Any, found: _Found, play: Any):
        super().__init__()
        self._last, self._found, self._play, self._skip = last, found, play, False

    def skip_next(self) -> None:
        self._skip = True

    def append(self, event: Any) -> None:
        if self._skip:  # the current event, replayed to know what follows it
            self._skip = False
            return
        super().append(event)
        if self._last is not None and self._last(event, self._play):
            raise self._found


def _generated(trace: Trace, seed: Any, header: Any, target: Any, config: Any) -> tuple[Any, ...]:
    """The profile, seed, header and target a generated trace was drawn with (its header's
    generator note), so that request i of a run is the trace's problem i."""
    drawn = trace.header.metadata.get("generator")
    if not isinstance(drawn, dict) or not {"profile", "seed"} <= set(drawn):
        raise ConfigError("ProfilePolicy: the trace was not drawn by trace.generate (its header names no "
                          "generator); give the profile and seed it was drawn with")
    if seed is not None and seed != drawn["seed"]:
        raise ConfigError(f"ProfilePolicy: seed {seed} and the trace's seed {drawn['seed']} disagree")
    return (drawn["profile"], drawn["seed"], header or trace.header,
            target if target is not None or config is not None else drawn.get("target"))


class ProfilePolicy(Policy):
    """The draft model, the target and the PRM as a profile's step-quality model plays
    them; problem ``request`` of the run is generate()'s problem of that index. ``profile``
    may be a generated trace (as ``--policy`` passes it): its profile, seed, header and
    target are taken from its header."""

    def __init__(self, profile: Any, seed: int | None = None, header: TraceHeader | None = None,
                 target: str | None = None, config: int | None = None):
        if isinstance(profile, Trace):  # as --policy makes it: the draws of a generated trace
            profile, seed, header, target = _generated(profile, seed, header, target, config)
        self.profile = load_profile(profile)
        self.seed = 0 if seed is None else seed
        self.header = header or TraceHeader()
        self.target = resolve_target(target, config)
        self._states: dict[int, _State] = {}

    def state(self, view: View) -> _State:
        st = self._states.get(view.request)
        if st is None:
            draws = Draws(self.profile, self.seed, view.request, self.target)
            prompt, steps, u_correct = draws.problem()
            st = _State(draws, steps, self.profile.max_context_tokens - prompt, u_correct)
            self._states[view.request] = st
        return st

    def _future(self, st: _State, view: View, last: Any = None) -> list[Any]:
        """The events after the current one if every verdict from here is what decide()
        rules with what it knows now (the thresholds, unless overridden): the run this
        policy would go on to make, from this state (a copy), up to the first event
        ``last`` is true of (all of them without it): a question asked ahead concerns the
        next step or two, so it need not play the whole answer."""
        h = self.header
        if type(self).decide is ProfilePolicy.decide:
            keeps = threshold_rule(h)  # no view to build
        else:
            def keeps(step: int, score: float, of_refinement: bool, can_backtrack: bool) -> bool:
                ahead = dataclasses.replace(view, kind="verdict", step=step, speculative=False,
                                            of_refinement=of_refinement, can_backtrack=can_backtrack)
                return self._decided(ahead, score, view.kind)[0]
        events = _Events(last, _Found(), lambda: (len(play.chain), play.backtracks))
        play = Play(h, st.draw, st.steps, st.budget, keeps, events, list(st.chain), dict(st.attempts),
                    st.backtracks)
        try:
            pending, kind = st.pending, st.pending_kind
            step = len(play.chain) + 1
            if pending is not None and kind == "draft":  # the draft under verdict
                if keeps(step, pending.score, False, False):
                    play.chain.append(pending)
                else:
                    play.refine_from(step, st.current[step].target)
            elif pending is not None and kind == "refine":  # the refinement under verdict
                events.skip_next()  # the refinement itself is the current event, not a future one
                play.refine_from(step, pending)
            play.run()
        except _Found:
            pass
        return list(events)

    def _refine_found(self, step: int) -> Any:
        """When the play has shown what a refinement of ``step`` asked ahead is (below): its
        refinement before any backtrack to an earlier step; else the step's first draft,
        once a backtrack to an earlier step came, or once no refinement of it can come
        (the chain is longer than the backtracks left could undo)."""
        seen_back, drafted = False, False
        h = self.header

        def found(e: Any, play: Any) -> bool:
            nonlocal seen_back, drafted
            if isinstance(e, Refine) and e.step == step and not seen_back:
                return True
            if isinstance(e, Backtrack) and e.to_step < step:
                seen_back = True
            if isinstance(e, Draft) and e.step == step:
                drafted = True
            if drafted and seen_back:
                return True
            chain, backtracks = play()
            return drafted and (not h.backtracking or h.max_backtracks - backtracks < chain - step + 1)
        return found

    @staticmethod
    def _ahead_draft(events: list[Any], step: int) -> int:
        return next((e.tokens for e in events if isinstance(e, Draft) and e.step == step), 0)

    def draft(self, view: View) -> int:
        st = self.state(view)
        if view.whole:  # a target-alone or token-level request writes the final chain the play makes
            events = tuple(self._future(st, view))
            return summarize(dataclasses.replace(view.problem, events=events), self.header).final_tokens
        if view.speculative:  # as trace replay looks ahead: the next draft of the step
            wanted = view.step
            return self._ahead_draft(
                self._future(st, view, lambda e, _: isinstance(e, Draft) and e.step == wanted), wanted)
        if len(st.chain) >= st.steps:
            return 0
        d = st.peek(view.step)
        if not (st.fits(d.draft.tokens) and st.fits(d.target.tokens)):
            return 0  # the solution is cut at the window, as generation stops at max tokens
        st.pending, st.pending_kind = st.take(view.step).draft, "draft"
        return st.pending.tokens

    def refine(self, view: View) -> int:
        st = self.state(view)
        if view.speculative:  # the next refinement of the step before an earlier step changes, else its draft
            future = self._future(st, view, self._refine_found(view.step))
            for e in future:
                if isinstance(e, Refine) and e.step == view.step:
                    return e.tokens
                if isinstance(e, Backtrack) and e.to_step < view.step:
                    break
            return self._ahead_draft(future, view.step)
        target = st.current[view.step].target
        if not st.fits(target.tokens):
            target = dataclasses.replace(target, tokens=st.budget - st.used())
        if not self.header.backtracking:
            st.chain.append(target)  # forward-only: kept without a verdict
            return target.tokens
        st.pending, st.pending_kind = target, "refine"
        return target.tokens

    def verdict(self, view: View) -> Any:
        st = self.state(view)
        candidate = st.pending
        assert candidate is not None
        kept, score = self._decided(view, candidate.score, view.kind)
        st.pending = None
        if not view.of_refinement:
            if kept:
                st.chain.append(candidate)
            return kept, score
        if kept or not view.can_backtrack:
            st.chain.append(candidate)
        else:
            # Backtracked over: the step before goes, and the target writes it again.
            st.backtracks += 1
            st.chain.pop()
            st.take(view.step - 1)
        return kept, score

    def _decided(self, view: View, score: float, asking: str) -> tuple[bool, float]:
        """decide()'s answer, checked; an error in it names decide, and the hook the run was
        asking (``asking``: decide is also played ahead, to size step-ahead work)."""
        try:
            answer = self.decide(view, score)
        except (KeyboardInterrupt, PolicyError):
            raise
        except BaseException as exc:  # noqa: BLE001 - named and passed on, SystemExit too
            raise hook_error(self, f"decide (asked by {asking})", view.problem, view.step, described(exc)) from exc
        if not (isinstance(answer, tuple) and len(answer) == 2):
            raise hook_error(self, f"decide (asked by {asking})", view.problem, view.step,
                             f"answer (kept, score), got {answer!r}")
        return answer

    def decide(self, view: View, score: float) -> tuple[bool, float]:
        """The verdict on a step the PRM scored ``score``: the algorithm's thresholds.
        Override to decide otherwise (the score stays what the PRM said)."""
        threshold = self.header.backtrack_threshold if view.of_refinement else self.header.accept_threshold
        return score >= threshold, score

    def done(self, request: int) -> None:
        self._states.pop(request, None)

    def answer_correct(self, request: int, problem: Problem, events: tuple[Any, ...]) -> bool | None:
        st = self._states.pop(request, None)
        if st is None:
            return None
        kept = tuple(c.good for c in st.chain)
        return st.u_correct < correctness_probability(self.profile, kept)
