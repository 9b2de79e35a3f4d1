"""The engine run itself: the trace handed to the engine a chunk of problems at a time
(checked as it goes: the algorithm, the context windows), the finished problems'
rows sent to a sink (memory or disk) as they come back, the native call in a worker
process."""

from __future__ import annotations

import itertools
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ._isolation import report_progress, run_isolated
from .._extension import native
from ._row_sinks import FileRows, MemoryRows, read_rows
from .._rows import SERVE_ROW_FIELDS, Totals, problem_rows
from .. import devices, systems
from ..config import _speculation
from ..config.scenario import Scenario
from ..schema._speculation import DRAFTS
from ..errors import ConfigError
from ..trace import Backtrack, Draft, Refine, Trace
from ..trace._io import check_problem
from ..trace._plain import SHARED_PREFIX, shared_prefix_tokens

# The columns a chunk of the trace crosses into the engine with, by name.
EVENT_COLUMNS = ("kind", "step", "tokens", "accepted", "scored")
PROBLEM_COLUMNS = ("prompt_tokens", "first_event", "events")


# Problems per chunk handed to the engine: large enough that the Python call per
# chunk is noise, small enough that a chunk's arrays are a few hundred kB.
CHUNK_PROBLEMS = 512


def _kv_limit(role: Any) -> tuple[int, str]:
    """The longest context a role's device can hold: the model's window, or less
    when the device reserves fewer tokens of KV cache."""
    device = role.device
    reserve = devices.kind_of(device).kv_reserve(device)
    window = role.model.context_window
    if 0 < reserve < window:
        return reserve, f"{reserve}-token KV reservation (kv_reserve_tokens) of the"
    return window, f"{window}-token window of the"


@dataclass(frozen=True)
class _Limit:
    """A role's model and the most tokens one of its passes may hold, in words; what a
    pass on a drafted step adds: a target that judges the drafts itself prefills its scoring
    prompt after the context (``scoring``), a judge that compares two versions of the step
    reads its prompt and both, not the context (``compares``, that prompt's tokens)."""

    role: str
    model: Any
    limit: int
    what: str
    scoring: int = 0
    compares: int | None = None


def _window_limits(scn: Scenario) -> list[_Limit]:
    """Each role's model, its token limit and what a pass on a drafted step adds."""
    system = systems.of(scn)
    limits = []
    for role in system.roles:
        limit, what = _kv_limit(getattr(scn, role))
        scoring = scn.serving.judge_prompt_tokens if system.verifier_is_target and role == "target" else 0
        compares = scn.serving.equivalence_prompt_tokens if system.lookahead and role == "prm" else None
        limits.append(_Limit(role, getattr(scn, role).model, limit, what, scoring, compares))
    return limits


def _schedule_refusal(scn: Scenario) -> tuple[str | None, int]:
    """Why a problem's recorded drafts per pass cannot apply to ``scn`` (None: they set the
    passes of a token-level system's request served alone), and the most a pass drafts."""
    system = systems.of(scn)
    if not system.output_only or "speculation" not in system.sections:
        return (f"the {system.name} system decodes no request by token-level speculation alone; the drafts a "
                f"pass were recorded by speculative-decoding or split-decoding", 0)
    if scn.batching.enabled:
        return ("with batching on, vLLM drafts the scenario's number for every request each step; a recorded "
                "schedule sets the passes of a request served alone (batching.enabled: false)", 0)
    return None, min(len(_speculation.acceptance(scn.speculation).rates), DRAFTS.value)


def _check_output(problem: Any, final_tokens: int, limits: list[_Limit]) -> None:
    """The autoregressive system generates the final chain after the prompt, within the window."""
    for lim in limits:
        if problem.prompt_tokens + final_tokens > lim.limit:
            raise ConfigError(f"problem {problem.id!r}: {problem.prompt_tokens} prompt tokens and {final_tokens} "
                              f"output tokens (its final chain) exceed the {lim.what} {lim.role} model "
                              f"{lim.model.name}")


def _check_prefix(problem: Any, prefix: int) -> None:
    """Every prompt begins with the tokens the trace says they share: a shorter one is refused,
    never served with the prefix cut to its length."""
    if problem.prompt_tokens < prefix:
        raise ConfigError(f"problem {problem.id!r}: {problem.prompt_tokens} prompt tokens, fewer than the {prefix} "
                          f"every prompt begins with (the trace header's metadata.{SHARED_PREFIX})")


def _compared(problem: Any, index: int, limit: _Limit) -> int:
    """The tokens a judge reads for the drafted step of events[index]: its prompt, the draft
    and the target's version (the draft's length where kept, else the refinement after it)."""
    event = problem.events[index]
    theirs = event.tokens
    if not event.accepted and index + 1 < len(problem.events):
        theirs = problem.events[index + 1].tokens
    return int(limit.compares) + event.tokens + theirs


def _check_window(problem: Any, limits: list[_Limit]) -> None:
    chain: list[int] = []
    for index, event in enumerate(problem.events):
        if isinstance(event, Backtrack):
            chain.pop()
            continue
        for lim in limits:
            if lim.compares is not None:
                if not isinstance(event, Draft):
                    continue
                reach, prompt = _compared(problem, index, lim), " (its prompt and both versions of the step)"
            else:
                scoring = lim.scoring if isinstance(event, Draft) else 0
                reach = problem.prompt_tokens + sum(chain) + event.tokens + scoring
                prompt = f" with its {scoring}-token scoring prompt" if scoring else ""
            if reach > lim.limit:
                raise ConfigError(
                    f"problem {problem.id!r}, events[{index}] ({event.type} of step {event.step}, "
                    f"{event.tokens} tokens): the context reaches {reach} tokens{prompt}, beyond the "
                    f"{lim.what} {lim.role} model {lim.model.name}")
        if event.accepted:
            chain.append(event.tokens)


# What the metrics need of each problem besides the engine's numbers (its chain summary).
TRACE_COLUMNS = ("final_tokens", "acceptance_rate", "steps", "backtracks", "accepted_draft_tokens",
                 "target_tokens")


class TraceFeed:
    """Hands a trace to the engine a chunk at a time, in the simulation worker:
    each problem is checked (the algorithm, the context windows) as it goes, and
    only its summary is kept until the engine has finished it. The engine's numbers
    for finished problems come back with each call; with the summaries they become
    rows for ``sink`` and add to ``totals``, so memory does not grow with the
    trace's problems."""

    def __init__(self, scn: Scenario, trace: Trace, sink: Any, totals: Totals, serving: bool = False,
                 live: Any = None):
        self._problems = iter(trace.problems)
        self._header = trace.header
        self._limits = _window_limits(scn)
        self._output_only = systems.of(scn).output_only
        # Where a recorded draft_schedule cannot apply, why (None: it applies), and the most
        # drafts a pass may make where it does.
        self._no_schedule, self._most_drafts = _schedule_refusal(scn)
        self._prefix = shared_prefix_tokens(trace.header) if self._output_only else 0
        self._sink, self._totals = sink, totals
        # The summaries of requests handed over and not yet finished, by request index
        # (a cluster finishes them out of order): id, dataset, right answer (1, 0, or -1
        # when the trace does not say), then TRACE_COLUMNS.
        self._pending: dict[int, tuple[Any, ...]] = {}
        self._fed = 0
        self._arrivals: bool | None = None  # whether the trace's problems carry arrival times
        self._serving = serving
        # Served requests: the times (whole picoseconds) and tokens the serving metrics need, 40 bytes a
        # request; a first token time of -1 where the system reports none (the speculative systems).
        self._times = {**{name: array("q") for name in ("arrival_ps", "start_ps", "end_ps", "first_token_ps")},
                       "final_tokens": array("d")}
        # Live co-simulation (cosim.live): the problems go without events; each one's events
        # are what the policy answered, complete when the engine finishes it.
        self._live = live

    def _summary(self, problem: Any) -> tuple[Any, ...]:
        summary = check_problem(problem, self._header)
        return (problem.id, problem.dataset, -1 if problem.answer_correct is None else int(problem.answer_correct),
                *(getattr(summary, name) for name in TRACE_COLUMNS))

    def finished(self, engine: dict[str, Any]) -> None:
        """The engine's numbers for requests it finished: rows, totals, progress."""
        n = len(engine["end_ps"])
        if not n:
            return
        if self._live is not None:
            done = [self._summary(self._live.complete(int(i))) for i in engine["request"]]
        else:
            done = [self._pending.pop(int(i)) for i in engine["request"]]
        trace = {"id": [d[0] for d in done], "dataset": [d[1] for d in done],
                 "answer_correct": np.array([d[2] for d in done], dtype=np.int8),
                 **{name: np.array([d[3 + j] for d in done], dtype=np.float64)
                    for j, name in enumerate(TRACE_COLUMNS)}}
        rows, adds = problem_rows(engine, trace, self._serving)
        if self._serving:
            for name in ("arrival_ps", "start_ps", "end_ps"):
                self._times[name].extend(np.asarray(engine[name], dtype=np.int64).tolist())
            self._times["final_tokens"].extend(trace["final_tokens"].tolist())
            first = engine.get("first_token_ps")
            self._times["first_token_ps"].extend([-1] * n if first is None else
                                                 np.asarray(first, dtype=np.int64).tolist())
        self._totals.add(rows, adds)
        self._sink.add(rows)
        report_progress(self._totals.problems)

    def request_times(self) -> dict[str, np.ndarray]:
        """Per finished request, in the order they finished: arrival, start, end and the first output
        token (int64 ps; -1 where the system reports none), final tokens."""
        return {name: np.frombuffer(values, np.int64 if values.typecode == "q" else np.float64)
                for name, values in self._times.items()}

    def __call__(self, finished: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
        self.finished(finished)
        chunk = list(itertools.islice(self._problems, CHUNK_PROBLEMS))
        if not chunk:
            return None
        kinds = native().EVENT_KINDS
        code = {Draft: kinds["draft"], Refine: kinds["refine"], Backtrack: kinds["backtrack"]}
        events: dict[str, list[int]] = {name: [] for name in EVENT_COLUMNS}
        problems: dict[str, list[int]] = {name: [] for name in (*PROBLEM_COLUMNS, "output_tokens")}
        arrivals: list[int] = []
        schedule: dict[str, list[int]] = {"schedule": [], "first_pass": [], "passes": []}
        for problem in chunk:
            # A live run's problems arrive as a trace's do.
            arrival = getattr(problem, "arrival_s", None)
            if self._arrivals is None:
                self._arrivals = arrival is not None
            if (arrival is not None) != self._arrivals:
                which = "has no arrival_s where" if self._arrivals else "has an arrival_s where none of"
                raise ConfigError(f"problem {problem.id!r}: {which} the problems before it have one")
            if arrival is not None:
                arrivals.append(round(arrival * 1e9))
            if self._live is not None:
                self._live.begin(self._fed, problem)
                problems["prompt_tokens"].append(problem.prompt_tokens)
                problems["first_event"].append(0)
                problems["events"].append(0)
                problems["output_tokens"].append(0)
                self._fed += 1
                continue
            summary = check_problem(problem, self._header)
            if self._output_only:
                _check_prefix(problem, self._prefix)
                _check_output(problem, summary.final_tokens, self._limits)
            else:
                _check_window(problem, self._limits)
            self._pending[self._fed] = (problem.id, problem.dataset,
                                        -1 if problem.answer_correct is None else int(problem.answer_correct),
                                        *(getattr(summary, name) for name in TRACE_COLUMNS))
            self._fed += 1
            problems["prompt_tokens"].append(problem.prompt_tokens)
            problems["first_event"].append(len(events["kind"]))
            problems["events"].append(len(problem.events))
            problems["output_tokens"].append(summary.final_tokens)
            recorded = getattr(problem, "draft_schedule", ())
            if recorded and self._no_schedule:
                raise ConfigError(f"problem {problem.id!r}: draft_schedule: {self._no_schedule}")
            for i, k in enumerate(recorded):
                if k > self._most_drafts:
                    raise ConfigError(f"problem {problem.id!r}: draft_schedule[{i}]: {k} drafts; a pass drafts 0 to "
                                      f"the acceptance profile's {self._most_drafts} positions")
            schedule["first_pass"].append(len(schedule["schedule"]))
            schedule["passes"].append(len(recorded))
            schedule["schedule"].extend(recorded)
            for e in problem.events:
                backtrack = isinstance(e, Backtrack)
                events["kind"].append(code[type(e)])
                events["step"].append(e.to_step if backtrack else e.step)
                events["tokens"].append(0 if backtrack else e.tokens)
                events["accepted"].append(0 if backtrack else int(e.accepted))
                events["scored"].append(int(isinstance(e, Refine) and e.score is not None))
        tables = ({k: np.asarray(v, dtype=np.int64) for k, v in events.items()},
                  {k: np.asarray(v, dtype=np.int64) for k, v in problems.items()})
        if arrivals:
            tables[1]["arrival_ns"] = np.asarray(arrivals, dtype=np.int64)
        if schedule["schedule"]:
            tables[1].update({k: np.asarray(v, dtype=np.int64) for k, v in schedule.items()})
        return tables


def run_engine(scn: Scenario, trace: Trace, system: dict[str, Any], *, keep: bool = False, vcd_stem: str = "",
               every_token: bool = False, rows_folder: Path | None = None,
               progress: Callable[[int], None] | None = None, serving: bool = False,
               live: Any = None) -> dict[str, Any]:
    """The native run in a worker: what it returns, with the rows (columns, or a reader of
    the Arrow file in ``rows_folder``), the summary and totals, and, ``serving``, the
    per-request times the serving metrics need."""

    def work() -> dict[str, Any]:
        # The trace is read (generated, or parsed line by line) here in the worker, a chunk
        # at a time, and the rows of finished problems go to the sink as they come.
        fields = SERVE_ROW_FIELDS if serving else None
        sink = FileRows(rows_folder, fields) if rows_folder is not None else MemoryRows()
        totals = Totals()
        feed = TraceFeed(scn, trace, sink, totals, serving, live)
        try:
            chosen = systems.of(scn)
            if vcd_stem and not chosen.waveforms:
                raise ConfigError(f"the {scn.system} system writes no waveform (a --timeline shows its requests)")
            raw = chosen.run(native(), system, feed, keep, vcd_stem=vcd_stem, every_token=every_token,
                             shared_prefix=shared_prefix_tokens(trace.header) if chosen.output_only else 0,
                             live=live, header=trace.header)
            if "trace_error" in raw:
                raise raw["trace_error"]
            feed.finished(raw.pop("problems"))
            raw["rows"] = sink.finish()
        except BaseException:
            sink.discard()
            raise
        raw.update(summary=totals.summary(), totals=totals.public(), last_end_s=totals.last_end_s)
        if serving:
            raw["requests"] = feed.request_times()
        if live is not None:
            raw["live"] = live.outcome()
        return raw

    raw = run_isolated(work, on_progress=progress)
    if rows_folder is not None:
        raw["rows"] = read_rows(rows_folder)
    return raw
