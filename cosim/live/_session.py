"""One live run's side of the decisions, in the simulation worker: each question the
engine asks handed to the policy as a View, its answer checked, and the events the
answers make recorded as a trace that replays the run."""

from __future__ import annotations

import math
import numbers
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._extension import native
from ..errors import ConfigError, OutputError, PolicyError
from ..trace import Backtrack, Draft, Problem, Refine, TraceHeader
from ..trace._events import problem_to_json
from ..trace._io import MAX_TOKENS, json_text
from ._policy import Policy, View, described, hook_error

ROLES = ("draft", "prm", "target")


@dataclass
class _Request:
    problem: Problem
    events: list[Any] = field(default_factory=list)
    pending: tuple[str, int, int] | None = None  # a step waiting for its verdict: kind, step, tokens
    schedule: list[int] = field(default_factory=list)  # token-level: each pass's drafts


class LiveSession:
    """The policy's answers for every request in flight, and what they made."""

    def __init__(self, policy: Policy, header: TraceHeader, window: int, body: Path | None = None,
                 made: Path | None = None, output_only: bool = False):
        self.policy, self.header, self.window = policy, header, window
        # The target-alone and token-level systems: a request's output is one step, asked by `draft`.
        self.output_only = output_only
        # Whether the policy sets the drafts of token-level passes (ask_drafts_for decides).
        self.asks_drafts = False
        self._requests: dict[int, _Request] = {}
        # The problems the answers made: held, or (``body``) written one JSON line each as they
        # end, so that a long run's memory does not grow with its problems. ``made``: the trace
        # file the body becomes, which errors name (the body is a hidden file beside it).
        self.recorded: list[Problem] = []
        self._body, self._made, self._handle, self._arrivals = body, made or body, None, False
        self.decisions = 0
        self.policy_s = 0.0
        self.overridden = 0  # verdicts that went against the PRM score the policy gave

    def begin(self, index: int, problem: Problem) -> None:
        # A problem made in code is checked as a trace file's would be: its prompt is a whole
        # number of tokens that leaves room for a step in the models' window.
        prompt = problem.prompt_tokens
        if isinstance(prompt, bool) or not isinstance(prompt, numbers.Integral) or prompt < 1:
            raise ConfigError(f"problem {problem.id!r}: prompt_tokens: a whole number >= 1, got {prompt!r}")
        if prompt >= self.window:
            raise ConfigError(f"problem {problem.id!r}: prompt_tokens: {prompt} leave no room for a step in the "
                              f"{self.window}-token window of the models")
        self._requests[index] = _Request(problem)

    def complete(self, index: int) -> Problem:
        r = self._requests.pop(index)
        steps = sum(1 for e in r.events if not isinstance(e, Backtrack) and e.accepted)
        answer = self._call("answer_correct", r.problem, steps, index, r.problem, tuple(r.events))
        if answer is not None and not is_bool(answer):
            raise self._named("answer_correct", r.problem, steps,
                              f"answer True, False or None (not known), got {answer!r}")
        done = Problem(r.problem.id, r.problem.dataset, r.problem.prompt_tokens, tuple(r.events),
                       answer if answer is None else bool(answer), r.problem.arrival_s, tuple(r.schedule))
        self._call("done", r.problem, steps, index)  # the policy may drop what it kept for the problem
        if self._body is None:
            self.recorded.append(done)
        else:
            if self._handle is None:
                self._arrivals = done.arrival_s is not None
            self._writing(lambda: self._open().write(json_text(problem_to_json(done)) + "\n"))
        return done

    def _open(self) -> Any:
        if self._handle is None:
            self._handle = self._body.open("w", encoding="utf-8")
        return self._handle

    def _writing(self, write: Any) -> None:
        """``write()``, a failure named by the trace the body becomes, never by the body."""
        try:
            write()
        except OSError as exc:
            raise OutputError(f"{self._made}: writing failed: {exc.strerror or type(exc).__name__}") from None

    def outcome(self) -> dict[str, Any]:
        # What a policy sends back from the worker: collect(), once every problem has ended.
        collected = self._call("collect", None, None)
        try:  # it crosses back from the worker
            pickle.dumps(collected)
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises
            raise self._named("collect", None, None, f"what it returns cannot leave the simulation worker "
                                                     f"(pickle: {described(exc)})") from None
        if self._handle is not None:
            self._writing(self._handle.close)
        return {"problems": self.recorded, "arrivals": self._arrivals, "decisions": self.decisions,
                "policy_s": self.policy_s, "overridden": self.overridden, "policy": collected}

    def _named(self, hook: str, problem: Problem | None, step: int | None, message: str) -> PolicyError:
        return hook_error(self.policy, hook, problem, step, message)

    def _fail(self, view: View, message: str) -> PolicyError:
        return self._named(view.kind, view.problem, view.step, message)

    def ask_drafts_for(self, problems: tuple[Problem, ...]) -> None:
        """Asks the policy, once before the run, whether the run's token-level passes are its to set."""
        if not callable(getattr(self.policy, "asks_drafts", None)):  # a policy of its own, not a Policy
            self.asks_drafts = callable(getattr(self.policy, "speculate", None))
            return
        answer = self._call("asks_drafts", None, None, tuple(problems))
        if not is_bool(answer):
            raise self._named("asks_drafts", None, None, f"expected True or False, got {answer!r}")
        self.asks_drafts = bool(answer)

    def _call(self, hook: str, problem: Problem | None, step: int | None, *args: Any) -> Any:
        """An optional hook of the policy called, what it raises named (None when it has none)."""
        method = getattr(self.policy, hook, None)
        if not callable(method):
            return None
        try:
            return method(*args)
        except PolicyError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: a policy does not end the run by exiting
            raise self._named(hook, problem, step, described(exc)) from exc

    def decide(self, q: dict[str, Any]) -> Any:
        """The engine's question (decision_calls.cpp) in, the answer it takes out."""
        r = self._requests[q["request"]]
        view = View(q["kind"], r.problem, q["request"], q["step"], q["speculative"], q["of_refinement"], q["tokens"],
                    q["time_s"], q["waited_s"], tuple(q["chain"]), q["backtracks"], q["can_backtrack"],
                    tuple(q["kvmu"]), dict(zip(ROLES, q["devices"])), q.get("proposed", 0), q.get("most", 0),
                    q.get("output", 0), q.get("last_drafts", 0), q.get("last_accepted", 0),
                    self.output_only and q["kind"] == "draft")
        method = getattr(self.policy, view.kind)
        start = time.perf_counter()
        try:
            answer = method(view)
        except PolicyError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - named and passed on, SystemExit too
            raise self._fail(view, described(exc)) from exc
        finally:
            self.policy_s += time.perf_counter() - start
            self.decisions += 1
        if view.kind == "verdict":
            return self._verdict(view, r, answer)
        if view.kind == "speculate":
            return self._drafts(view, r, answer)
        if self.output_only:
            return self._output(view, r, answer)
        tokens = self._tokens(view, answer)
        if not view.speculative and tokens > 0:
            if view.kind == "refine" and not self.header.backtracking:
                r.events.append(Refine(view.step, tokens, None, True))  # forward-only: kept, unscored
            else:
                r.pending = (view.kind, view.step, tokens)
        return tokens

    def _tokens(self, view: View, answer: Any) -> int:
        if not is_whole(answer):
            raise self._fail(view, f"answer a whole number of tokens, got {answer!r}")
        least = 1 if view.kind == "refine" and not view.speculative else 0  # 0 ahead: no step-ahead work
        if answer < least:
            raise self._fail(view, f"answer at least {least} tokens, got {answer}")
        # A step asked ahead is bounded as a due one: the device drafts or refines it now, on
        # the context the chain has now, so it must fit the window (and a trace's counts).
        ahead = " (asked ahead)" if view.speculative else ""
        if answer > MAX_TOKENS:
            raise self._fail(view, f"{answer} tokens{ahead} is past the limit of {MAX_TOKENS} tokens a step")
        reach = view.problem.prompt_tokens + sum(view.chain) + int(answer)
        if reach > self.window:
            raise self._fail(view, f"{answer} tokens{ahead} take the context to {reach}, beyond the "
                                   f"{self.window}-token window of the models")
        return int(answer)

    def _drafts(self, view: View, r: _Request, answer: Any) -> int:
        """A pass's drafts: the answer, or the scenario's where it is None; recorded for replay."""
        if answer is None:
            answer = view.proposed
        if not is_whole(answer):
            raise self._fail(view, f"answer a whole number of drafts or None (the scenario's), got {answer!r}")
        if not 0 <= answer <= view.most:
            raise self._fail(view, f"answer 0 to {view.most} drafts (the acceptance profile's positions), got {answer}")
        r.schedule.append(int(answer))
        return int(answer)

    def _output(self, view: View, r: _Request, answer: Any) -> int:
        """A target-alone or token-level request's output length: its one step, kept."""
        if not is_whole(answer):
            raise self._fail(view, f"answer a whole number of output tokens, got {answer!r}")
        if answer < 1:
            raise self._fail(view, f"answer at least 1 output token, got {answer}")
        reach = view.problem.prompt_tokens + int(answer)
        if answer > MAX_TOKENS or reach > self.window:
            raise self._fail(view, f"{answer} output tokens take the context to {reach}, beyond the "
                                   f"{self.window}-token window of the target")
        r.events.append(Draft(1, int(answer), 1.0, True))  # as a plain request's trace writes it
        return int(answer)

    def _verdict(self, view: View, r: _Request, answer: Any) -> bool:
        threshold = self.header.backtrack_threshold if view.of_refinement else self.header.accept_threshold
        score: float | None = None
        if isinstance(answer, tuple) and len(answer) == 2:
            kept, score = answer
        elif isinstance(answer, numbers.Real) and not is_bool(answer):
            score = float(answer)
            kept = score >= threshold
        else:
            kept = answer
        if not is_bool(kept):
            raise self._fail(view, f"answer a bool, a score in [0, 1] or (bool, score), got {answer!r}")
        kept = bool(kept)
        if score is not None and (is_bool(score) or not (isinstance(score, numbers.Real) and
                                                         0.0 <= float(score) <= 1.0)):
            raise self._fail(view, f"the score must be a number in [0, 1], got {score!r}")
        # BRSD's rule (models/workflow/brsd_rule.hpp), as the engine applies it to this answer.
        final = native().keeps_refinement(kept, view.step, view.backtracks, self.header.max_backtracks) \
            if view.of_refinement else kept
        # The trace keeps the algorithm's rule (kept at or above the threshold; a refinement
        # that cannot be backtracked over is kept whatever its score): a verdict that goes
        # against the score is written with the nearest score that agrees with it.
        free = view.of_refinement and not view.can_backtrack
        if score is None or (not free and (float(score) >= threshold) != final):
            if score is not None:
                self.overridden += 1
            score = threshold if final else math.nextafter(threshold, 0.0)
        kind, step, tokens = r.pending if r.pending else (view.kind, view.step, view.tokens)
        r.pending = None
        if view.of_refinement:
            r.events.append(Refine(step, tokens, float(score), final))
            if not final:
                r.events.append(Backtrack(step - 1))
        else:
            r.events.append(Draft(step, tokens, float(score), kept))
        return kept


def is_whole(value: Any) -> bool:
    """A whole number, Python's or numpy's: never a bool, a float or text."""
    return type(value) is int or (not is_bool(value) and isinstance(value, numbers.Integral))


def is_bool(value: Any) -> bool:
    """True or False, Python's or numpy's: never a number or text that reads as one."""
    return isinstance(value, bool | np.bool_)
