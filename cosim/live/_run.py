"""``cosim.cosimulate``: a scenario run whose problems unfold from a policy's answers
while the simulated hardware keeps time (docs/live.md)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import _inputs, systems
from ..engine import _preflight
from ..engine._run_session import RunSession
from ..engine._workflow import system_dict
from ..outputs._atomic import write_atomically
from ..config.scenario import Scenario
from ..errors import ConfigError
from ..result import Result
from ..schema._toggles import DECISION_KINDS
from ..trace import Problem, Trace, TraceHeader, load
from ..trace._parse import check_header
from ._policy import Policy
from ._session import LiveSession
from ..trace._events import VERSION, VERSION_ARRIVALS


@dataclass
class LiveResult:
    """A live run: the simulated result, the trace the policy's answers made (replaying it
    with ``simulate`` gives the same result), and what the policy cost."""

    result: Result
    trace: Trace
    decisions: int
    policy_s: float            # wall time inside the policy's methods
    overridden_verdicts: int   # verdicts that went against the score the policy gave
    policy_outcome: Any = None  # what the policy's collect() sent back from the simulation worker

    @property
    def us_per_decision(self) -> float:
        return 1e6 * self.policy_s / self.decisions if self.decisions else 0.0


def _problems(problems: Trace | Sequence[Problem]) -> Trace:
    if isinstance(problems, Trace):
        return problems
    if isinstance(problems, Sequence) and not isinstance(problems, str) and all(isinstance(p, Problem)
                                                                                 for p in problems):
        return Trace(TraceHeader(), list(problems))
    raise ConfigError("problems: a Trace (its problems' prompts, ids and arrivals are used) or a list of "
                      "trace.Problem")


# The trace a live run's answers make, in its rows_to folder.
MADE_TRACE = "trace.jsonl"


def _made_file(header: TraceHeader, body: Path, path: Path, arrivals: bool) -> Trace:
    """The made trace's file: its header (known once the run has ended), then the problems
    the worker wrote as they ended; read back lazily, as any trace file."""
    def write(handle: Any) -> None:
        handle.write(json.dumps(header.to_json(VERSION_ARRIVALS if arrivals else VERSION), separators=(",", ":"),
                                ensure_ascii=False, allow_nan=False) + "\n")
        if body.exists():
            with body.open(encoding="utf-8") as lines:
                shutil.copyfileobj(lines, handle)

    try:
        write_atomically(path, write)
    finally:
        body.unlink(missing_ok=True)
    _inputs.own_output(path)
    return load(path)


def cosimulate(scn: Scenario, policy: Policy, problems: Trace | Sequence[Problem], *,
               header: TraceHeader | None = None, activities: bool = False, vcd: str | Path | None = None,
               timeline: str | Path | None = None, progress: Callable[[int], None] | None = None,
               rows_to: str | Path | None = None) -> LiveResult:
    """Simulates ``problems`` on ``scn`` with their steps, verdicts and backtracks decided
    by ``policy`` as the simulation reaches each decision (cosim.live.Policy): the
    problems' prompts, ids and datasets are used, their events are not (a TracePolicy
    answers from them). ``header``: the algorithm's thresholds and backtracking (default:
    the trace's). The engine calls the policy once per decision, never per token.
    ``vcd``, ``timeline``, ``activities``, ``rows_to``, ``progress``: as for simulate; with
    ``rows_to``, the trace the answers make is written there too (trace.jsonl) as its
    problems end, and read back from it, so that memory does not grow with the problems."""
    if not isinstance(scn, Scenario):
        raise ConfigError(f"cosimulate: expected a Scenario (cosim.load_scenario), got {type(scn).__name__}")
    for method in DECISION_KINDS:  # a policy answers each kind of question by its method of that name
        if not callable(getattr(policy, method, None)):
            raise ConfigError(f"cosimulate: the policy has no {method}() method (subclass cosim.live.Policy)")
    trace = _problems(problems)
    if not trace.problems:
        raise ConfigError("cosimulate: no problems")
    head = check_header(trace.header if header is None else header, "header")
    if not scn.backtracking and head.backtracking:
        raise ConfigError(f"cosimulate: {scn.name} runs forward-only RSD: give header=TraceHeader(backtracking=False)")
    _preflight.check(scn)
    system = systems.of(scn)
    # A target-alone or token-level request's output is the target's alone; a step-level
    # system's context must fit every model.
    window = scn.target.model.context_window if system.output_only else \
        min(getattr(scn, role).model.context_window for role in ("draft", "prm", "target"))
    session = RunSession(scn, vcd=vcd, timeline=timeline, rows_to=rows_to)
    rows_folder = session.rows_folder
    # With rows_to, the trace the answers make goes there as its problems end (trace.jsonl).
    body = rows_folder / f".{MADE_TRACE}.part" if rows_folder is not None else None
    live = LiveSession(policy, head, window, body, rows_folder / MADE_TRACE if rows_folder is not None else None,
                       output_only=system.output_only)
    live.ask_drafts_for(tuple(trace.problems))
    raw = session.run(Trace(head, trace.problems), system_dict(scn), staged=body,
                      keep=activities or timeline is not None, progress=progress, live=live)
    outcome = raw.pop("live")
    result = Result.from_native(scn, raw)
    session.publish(raw["last_end_s"], result=result)
    meta = dict(head.metadata, live={"policy": type(policy).__name__,
                                     "overridden_verdicts": outcome["overridden"]})
    made_header = TraceHeader(head.accept_threshold, head.backtrack_threshold, head.max_backtracks,
                              head.backtracking, meta)
    if body is None:
        made = Trace(made_header, outcome["problems"])
    else:
        made = _made_file(made_header, body, rows_folder / MADE_TRACE, outcome["arrivals"])
    return LiveResult(result, made, outcome["decisions"], outcome["policy_s"], outcome["overridden"],
                      outcome["policy"])
