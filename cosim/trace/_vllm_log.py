"""Reading a vLLM serving benchmark's request log and importing it as plain requests
(docs/workload.md). The log is JSON Lines, one request a line, as LLMServingSim's
benchmark harness writes it around ``vllm bench serve``:

    {"request_id": "bench-0", "input_toks": 2358, "output_toks": 531,
     "arrival_time": 1787267980.08, "queued_ts": 27536.66, "scheduled_ts": 27536.66,
     "first_token_ts": 27537.35, "last_token_ts": 27554.23}

``arrival_time`` is when the client sent the request (epoch seconds); the ``*_ts`` are
vLLM's own per-request timestamps (RequestStateStats: monotonic seconds, the engine's
clock): queued when the engine took it in, scheduled when first admitted, first and last
token. The timestamps are optional as a group; what needs them (the engine's clock, the
measured latencies) names the first line that lacks them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._files import parse_json_line, read_json_lines
from ..errors import TraceError
from ._arrivals import MAX_ARRIVAL_S
from ._io import MAX_TOKENS, Trace
from ._plain import check_shared_prefix, plain_header, plain_problem
from .._token_metrics import token_latency

CLOCKS = ("client", "engine")
TIMESTAMPS = ("queued_ts", "scheduled_ts", "first_token_ts", "last_token_ts")
_FIELDS = ("request_id", "input_toks", "output_toks", "arrival_time", *TIMESTAMPS)


@dataclass(frozen=True)
class RequestLog:
    """The requests of a vLLM benchmark log, one entry per line, in file order."""

    source: str
    lines: tuple[int, ...]
    request_id: tuple[str, ...]
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    arrival_time: np.ndarray  # the client's send time, epoch seconds
    timestamps: dict[str, np.ndarray] | None  # vLLM's TIMESTAMPS, engine seconds; None if the log has none

    def __len__(self) -> int:
        return len(self.request_id)

    def _need_timestamps(self, what: str) -> dict[str, np.ndarray]:
        if self.timestamps is None:
            raise TraceError(f"{self.source}:{self.lines[0]}: {what} needs vLLM's timestamps "
                             f"({', '.join(TIMESTAMPS)}), which this log does not carry")
        return self.timestamps

    def arrivals_s(self, clock: str = "client") -> np.ndarray:
        """Each request's arrival in seconds after the first: the client's send time
        (``client``) or the engine's queue time (``engine``, vLLM's queued_ts)."""
        if clock not in CLOCKS:
            raise TraceError(f"clock: one of {', '.join(CLOCKS)}, got {clock!r}")
        times = self.arrival_time if clock == "client" else self._need_timestamps("the engine clock")["queued_ts"]
        arrivals = times - times.min()
        late = np.flatnonzero(arrivals > MAX_ARRIVAL_S)
        if late.size:  # named here, at its line: a trace's arrivals span at most MAX_ARRIVAL_S
            i, first = int(late[0]), int(np.argmin(times))
            field = "arrival_time" if clock == "client" else "queued_ts"
            raise TraceError(f"{self.source}:{self.lines[i]}: {field}: {float(times[i])!r} is "
                             f"{float(arrivals[i]):.6g} s after the first request's (line {self.lines[first]}); "
                             f"a trace's arrivals span at most {MAX_ARRIVAL_S:g} s")
        return arrivals

    def to_trace(self, clock: str = "client", dataset: str = "vllm-requests", shared_prefix_tokens: int = 0) -> Trace:
        """The requests as a trace of plain requests in arrival order (ties in file order),
        arriving at their time after the first (``clock``); ``shared_prefix_tokens``: every
        prompt begins with the same that many tokens (the log cannot say)."""
        arrivals = self.arrivals_s(clock)
        shortest = int(np.argmin(self.input_tokens))
        prefix = check_shared_prefix(shared_prefix_tokens, int(self.input_tokens[shortest]),
                                     f"{self.source}:{self.lines[shortest]} (request_id "
                                     f"{self.request_id[shortest]!r})")
        order = np.argsort(arrivals, kind="stable")
        problems = [plain_problem(self.request_id[i], int(self.input_tokens[i]), int(self.output_tokens[i]),
                                  float(arrivals[i]), dataset) for i in order.tolist()]
        ids: dict[str, int] = {}
        for i, name in enumerate(self.request_id):
            if name in ids:
                raise TraceError(f"{self.source}:{self.lines[i]}: request_id: {name!r} is also on line "
                                 f"{self.lines[ids[name]]}")
            ids[name] = i
        header = plain_header(Path(self.source).name, prefix, clock=clock,
                              arrivals=f"{'the client' if clock == 'client' else 'vLLM'}'s "
                                       f"{'arrival_time' if clock == 'client' else 'queued_ts'} after the first "
                                       f"request's", order="arrival order")
        return Trace(header, problems)

    def measured(self) -> Any:
        """The run's TTFT, TPOT and end-to-end latency as vLLM measured them: from queued_ts
        to first_token_ts and last_token_ts (cosim.serve.token_latency)."""
        ts = self._need_timestamps("the measured latencies")
        return token_latency(ts["queued_ts"], ts["first_token_ts"], ts["last_token_ts"], self.output_tokens)


def _number(record: dict[str, Any], name: str, where: str) -> float:
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TraceError(f"{where}: {name}: expected a finite number of seconds, got {json.dumps(value)}")
    if value < 0:
        raise TraceError(f"{where}: {name}: a time cannot be negative, got {value!r}")
    return float(value)


def _count(record: dict[str, Any], name: str, where: str) -> int:
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"{where}: {name}: expected a whole number of tokens, got {json.dumps(value)}")
    if not 1 <= value <= MAX_TOKENS:
        raise TraceError(f"{where}: {name}: must be between 1 and {MAX_TOKENS} tokens, got {value}")
    return value


def read_request_log(path: str | Path) -> RequestLog:
    """The log at ``path``, every line checked: TraceError naming the file, line and field
    of the first that is malformed, lacks a field, has a count below one, a time that is
    negative or not a number, or timestamps out of order."""
    path = Path(path)
    given = read_json_lines(path)
    lines: list[int] = []
    ids: list[str] = []
    columns: dict[str, list[float]] = {name: [] for name in _FIELDS[1:]}
    with_times: bool | None = None
    for number, line in enumerate(given, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        record = parse_json_line(line, where, TraceError)
        if not isinstance(record, dict):
            raise TraceError(f"{where}: expected a JSON object (one request)")
        for name in _FIELDS[:4]:
            if name not in record:
                raise TraceError(f"{where}: {name}: missing field")
        has = [name in record for name in TIMESTAMPS]
        if any(has) and not all(has):
            raise TraceError(f"{where}: {TIMESTAMPS[has.index(False)]}: missing field (vLLM's timestamps come "
                             f"together)")
        if with_times is None:
            with_times = all(has)
        elif with_times != all(has):
            raise TraceError(f"{where}: {TIMESTAMPS[0]}: {'missing' if with_times else 'unexpected'} field (the "
                             f"lines before {'have' if with_times else 'lack'} vLLM's timestamps)")
        name = record["request_id"]
        if not isinstance(name, str) or not name:
            raise TraceError(f"{where}: request_id: expected non-empty text, got {json.dumps(name)}")
        ids.append(name)
        lines.append(number)
        columns["input_toks"].append(_count(record, "input_toks", where))
        columns["output_toks"].append(_count(record, "output_toks", where))
        columns["arrival_time"].append(_number(record, "arrival_time", where))
        if with_times:
            times = [_number(record, name, where) for name in TIMESTAMPS]
            for (earlier, t0), (later, t1) in zip(zip(TIMESTAMPS, times), zip(TIMESTAMPS[1:], times[1:])):
                if t1 < t0:
                    raise TraceError(f"{where}: {later}: {t1!r} is before {earlier} {t0!r}")
            for name, t in zip(TIMESTAMPS, times):
                columns[name].append(t)
    if not ids:
        raise TraceError(f"{path}: no request in the log")
    timestamps = {name: np.array(columns[name]) for name in TIMESTAMPS} if with_times else None
    return RequestLog(str(path), tuple(lines), tuple(ids), np.array(columns["input_toks"], dtype=np.int64),
                      np.array(columns["output_toks"], dtype=np.int64), np.array(columns["arrival_time"]),
                      timestamps)


def import_vllm_requests(path: str | Path, clock: str = "client", dataset: str = "vllm-requests",
                         shared_prefix_tokens: int = 0) -> Trace:
    """A vLLM benchmark request log as a trace of plain requests (cosim trace import)."""
    return read_request_log(path).to_trace(clock, dataset, shared_prefix_tokens)
