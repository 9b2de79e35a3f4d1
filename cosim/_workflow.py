"""Replaying a trace through a system: checks that need both (context
windows), the trace as arrays a chunk of problems at a time (streamed into
the engine, never held whole), the native call in a worker process, and the
metrics (docs/metrics.md)."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import _preflight
from .config import _params
from .outputs._atomic import writable_file, writable_folder
from .outputs._gtkwave import write_gtkw
from ._isolation import native, report_progress, run_isolated
from ._row_sinks import FileRows, MemoryRows, read_rows
from ._rows import Totals, problem_rows
from .outputs._timeline import write_timeline
from .errors import ConfigError, OutputError
from .config.hardware import FpgaDevice, GpuDevice, fpga_profile_native
from .result import Result
from .config.scenario import Scenario
from .trace import Backtrack, Draft, Refine, Trace
from .trace._io import check_problem

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
    reserve = device.accelerator.kv_reserve_tokens if isinstance(device, FpgaDevice) else device.gpu.kv_reserve_tokens
    window = role.model.context_window
    if 0 < reserve < window:
        return reserve, f"{reserve}-token KV reservation (kv_reserve_tokens) of the"
    return window, f"{window}-token window of the"


def _window_limits(scn: Scenario) -> list[tuple[str, Any, int, str]]:
    return [(role, getattr(scn, role).model, *_kv_limit(getattr(scn, role))) for role in ("draft", "prm", "target")]


def _check_window(problem: Any, limits: list[tuple[str, Any, int, str]]) -> None:
    chain: list[int] = []
    for index, event in enumerate(problem.events):
        if isinstance(event, Backtrack):
            chain.pop()
            continue
        reach = problem.prompt_tokens + sum(chain) + event.tokens
        for role, model, limit, what in limits:
            if reach > limit:
                raise ConfigError(
                    f"problem {problem.id!r}, events[{index}] ({event.type} of step {event.step}, "
                    f"{event.tokens} tokens): the context reaches {reach} tokens, beyond the "
                    f"{what} {role} model {model.name}")
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

    def __init__(self, scn: Scenario, trace: Trace, sink: Any, totals: Totals):
        self._problems = iter(trace.problems)
        self._header = trace.header
        self._limits = _window_limits(scn)
        self._sink, self._totals = sink, totals
        # The summaries of requests handed over and not yet finished, by request index
        # (a cluster finishes them out of order): id, dataset, right answer (1, 0, or -1
        # when the trace does not say), then TRACE_COLUMNS.
        self._pending: dict[int, tuple[Any, ...]] = {}
        self._fed = 0
        self._arrivals: bool | None = None  # whether the trace's problems carry arrival times

    def finished(self, engine: dict[str, Any]) -> None:
        """The engine's numbers for requests it finished: rows, totals, progress."""
        n = len(engine["end_ns"])
        if not n:
            return
        done = [self._pending.pop(int(i)) for i in engine["request"]]
        trace = {"id": [d[0] for d in done], "dataset": [d[1] for d in done],
                 "answer_correct": np.array([d[2] for d in done], dtype=np.int8),
                 **{name: np.array([d[3 + j] for d in done], dtype=np.float64)
                    for j, name in enumerate(TRACE_COLUMNS)}}
        rows, adds = problem_rows(engine, trace)
        self._totals.add(rows, adds)
        self._sink.add(rows)
        report_progress(self._totals.problems)

    def __call__(self, finished: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
        self.finished(finished)
        chunk = list(itertools.islice(self._problems, CHUNK_PROBLEMS))
        if not chunk:
            return None
        kinds = native().EVENT_KINDS
        code = {Draft: kinds["draft"], Refine: kinds["refine"], Backtrack: kinds["backtrack"]}
        events: dict[str, list[int]] = {name: [] for name in EVENT_COLUMNS}
        problems: dict[str, list[int]] = {name: [] for name in PROBLEM_COLUMNS}
        arrivals: list[int] = []
        for problem in chunk:
            summary = check_problem(problem, self._header)
            _check_window(problem, self._limits)
            arrival = getattr(problem, "arrival_s", None)
            if self._arrivals is None:
                self._arrivals = arrival is not None
            if (arrival is not None) != self._arrivals:
                raise ConfigError(f"problem {problem.id!r}: " + ("has no arrival_s where the problems before it have one"
                                                                 if self._arrivals else
                                                                 "has an arrival_s where the problems before it have none"))
            if arrival is not None:
                arrivals.append(round(arrival * 1e9))
            self._pending[self._fed] = (problem.id, problem.dataset,
                                        -1 if problem.answer_correct is None else int(problem.answer_correct),
                                        *(getattr(summary, name) for name in TRACE_COLUMNS))
            self._fed += 1
            problems["prompt_tokens"].append(problem.prompt_tokens)
            problems["first_event"].append(len(events["kind"]))
            problems["events"].append(len(problem.events))
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
        return tables


def _gpu_section(device: GpuDevice, model: Any, link: Any) -> dict[str, Any]:
    return {"gpu": _params.native(device.gpu), "power": _params.native(device.power),
            "model": _params.native(model), "link": _params.native(link)}


def system_dict(scn: Scenario) -> dict[str, Any]:
    """The flat description the native engine takes."""
    from .serve._system import serving_sections

    draft = scn.draft
    if isinstance(draft.device, FpgaDevice):
        # The draft model's phase-1 prompt prefill runs on the target GPU, in BF16.
        prefill_gpu = _params.native(scn.target.device.gpu)
        draft_section = {"kind": "fpga", "fpga": _params.native(draft.device.accelerator),
                         "hbm": _params.native(draft.device.hbm), "prefill_gpu": prefill_gpu,
                         "fpga_profile": fpga_profile_native(draft.device),
                         "power": _params.native(draft.device.power), "model": _params.native(draft.model),
                         "link": _params.native(draft.link)}
    else:
        draft_section = {"kind": "gpu", **_gpu_section(draft.device, draft.model, draft.link)}
    t = scn.toggles
    return {
        "options": {
            "sequential": scn.sequential,
            "step_ahead_draft": t.step_ahead,
            "step_ahead_refine": t.step_ahead,
            "target_ahead_after_refine": t.target_ahead_after_refine,
            "prefetch_cache": t.prefetch_cache and t.step_ahead,
            "shadow_sync": t.shadow_sync,
            "prm_prefix_cache": scn.serving.prm_prefix_cache,
            "token_bytes": scn.serving.token_bytes,
            "control_bytes": scn.serving.control_bytes,
        },
        "draft": draft_section,
        "prm": _gpu_section(scn.prm.device, scn.prm.model, scn.prm.link),
        "target": _gpu_section(scn.target.device, scn.target.model, scn.target.link),
        **serving_sections(scn),
    }


VCD_DETAILS = ("step", "token")
# The comment the native waveform writer puts last (before the final time stamp).
VCD_END = re.compile(rb"\$comment\nheteroreason-cosim: end of waveform\n\$end\n\n(#\d+\n)?$")


def _publish_vcd(partial: Path, final: Path) -> None:
    """Renames a finished waveform into place once it is known whole and on disk; SystemC's
    writer ignores write errors, so a file without its last comment was cut short."""
    try:
        with partial.open("rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 256))
            whole = VCD_END.search(handle.read()) is not None
            os.fsync(handle.fileno())
        if not whole:
            raise OutputError(f"{final}: the waveform was not written whole (a full disk or a file size limit?)")
        os.replace(partial, final)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"{final}: writing the waveform failed: {exc.strerror or exc}") from None


def simulate(scn: Scenario, trace: Trace, *, vcd: str | Path | None = None, timeline: str | Path | None = None,
             activities: bool = False, vcd_detail: str = "step", rows_to: str | Path | None = None,
             progress: Callable[[int], None] | None = None) -> Result:
    """Replays the whole trace through the scenario's system in one SystemC elaboration.

    ``vcd``: write SystemC waveforms there (KVMU pointers and mode, MUX, device
    states and power in W, step, PCIe bytes in flight; a GTKWave save file beside
    it); ``vcd_detail="step"``
    moves the draft device's pointers at each step boundary and verdict and shows
    shadow sync as one summary state (4) with its mean power; ``"token"`` shows
    every drafted token and shadow-sync pass (a time stamp each, several times
    slower). Timing and results are the same either way. ``timeline``: write a
    Perfetto trace-event JSON there. ``activities``: keep every device activity
    and KVMU verdict in the result (implied by ``timeline``). ``rows_to``: a folder
    where the per-problem rows are written (per_problem.csv and per_problem.arrow)
    as the problems finish, so memory stays flat however long the trace; the
    result's ``per_problem`` then reads that Arrow file. ``progress``: called with
    the number of problems finished so far, every few hundred problems.
    """
    if not isinstance(scn, Scenario):
        raise ConfigError(f"simulate: expected a Scenario (cosim.load_scenario), got {type(scn).__name__}")
    if not isinstance(trace, Trace):
        raise ConfigError(f"simulate: expected a Trace (cosim.trace.load or generate), got {type(trace).__name__}")
    if not trace.problems:
        raise ConfigError("simulate: the trace has no problems")
    _preflight.check(scn)
    if not scn.backtracking and trace.header.backtracking:
        raise ConfigError(f"simulate: {scn.name} runs forward-only RSD (algorithm: rsd) and the trace backtracks; "
                          f"draw it with backtracking=False (--no-backtracking) or give an RSD trace")
    if vcd_detail not in VCD_DETAILS:
        raise ConfigError(f"vcd_detail: one of {', '.join(VCD_DETAILS)}, got {vcd_detail!r}")
    vcd_stem = ""
    vcd_final = vcd_partial = None
    if vcd is not None:
        vcd_path = writable_file(vcd, "vcd")  # as given: a device or folder is refused, not written beside
        # SystemC appends ".vcd" itself. It writes a hidden partial file, renamed once the run
        # is through: a run that fails midway (a bad problem found while streaming) leaves an
        # earlier waveform at that path as it was.
        stem = vcd_path.with_suffix("") if vcd_path.suffix == ".vcd" else vcd_path
        vcd_final = writable_file(stem.with_name(stem.name + ".vcd"), "vcd")
        partial_stem = stem.with_name(f".{stem.name}.partial-{os.getpid()}")
        vcd_stem, vcd_partial = str(partial_stem), partial_stem.with_name(partial_stem.name + ".vcd")
    timeline_path = writable_file(timeline, "timeline") if timeline is not None else None
    rows_folder = writable_folder(rows_to, "rows_to") if rows_to is not None else None
    keep = activities or timeline_path is not None
    system = system_dict(scn)
    every_token = vcd_detail == "token"

    def work() -> dict[str, Any]:
        # The trace is read (generated, or parsed line by line) here in the worker, a chunk
        # at a time, and the rows of finished problems go to the sink as they come.
        sink = FileRows(rows_folder) if rows_folder is not None else MemoryRows()
        totals = Totals()
        feed = TraceFeed(scn, trace, sink, totals)
        try:
            raw = native().simulate_workflow(system, feed, keep, vcd_stem, every_token)
            if "trace_error" in raw:
                raise raw["trace_error"]
            feed.finished(raw.pop("problems"))
            raw["rows"] = sink.finish()
        except BaseException:
            sink.discard()
            raise
        raw.update(summary=totals.summary(), totals=totals.public(), last_end_s=totals.last_end_s)
        return raw

    try:
        raw = run_isolated(work, on_progress=progress)
    except BaseException:
        if vcd_partial is not None:
            vcd_partial.unlink(missing_ok=True)
        raise
    if rows_folder is not None:
        raw["rows"] = read_rows(rows_folder)
    result = Result.from_native(scn, raw)
    if vcd_partial is not None:
        _publish_vcd(vcd_partial, vcd_final)
        write_gtkw(vcd_final.with_suffix(".gtkw"), vcd_final, raw["last_end_s"] * 1e12)
    if timeline_path is not None:
        labels = {role: getattr(scn, role).device.name for role in ("draft", "prm", "target")}
        write_timeline(result, timeline_path, labels)
    return result
