"""One line of a trace file, checked field by field and against the algorithm: the
header, a problem and its events, each error naming the file, line and field."""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import TraceError
from ._arrivals import arrival_problem
from ._events import (FORMAT, SHARED_PREFIX, VERSION, VERSION_ARRIVALS, VERSIONS, Backtrack, Draft, Event, Problem,
                      Refine, TraceHeader)
from ._replay import ChainSummary, ReplayError, summarize

# No model here has a context anywhere near this; a larger count is a broken file.
MAX_TOKENS = 1_000_000

_HEADER_FIELDS = {"format", "version", "accept_threshold", "backtrack_threshold", "max_backtracks", "backtracking",
                  "metadata"}
_PROBLEM_FIELDS = {"id", "dataset", "prompt_tokens", "answer_correct", "events", "draft_schedule"}
# No acceptance profile lists anywhere near this many positions; more is a broken file.
MAX_DRAFTS = 1024
_EVENT_FIELDS = {
    "draft": {"type", "step", "tokens", "score", "accepted"},
    "refine": {"type", "step", "tokens", "score", "accepted"},
    "backtrack": {"type", "to_step"},
}


def _field(exc: ReplayError) -> str:
    return "events" if exc.field == "events" else f"events[{exc.index}].{exc.field}"


def check_problem(problem: Problem, header: TraceHeader) -> ChainSummary:
    try:
        return summarize(problem, header)
    except ReplayError as exc:
        raise TraceError(f"problem {problem.id!r}: {_field(exc)}: {exc}") from None


class Line:
    """Field checks for one line, raising TraceError(file:line: field: ...)."""

    def __init__(self, file: str, number: int):
        self.file, self.number = file, number

    def fail(self, field: str, message: str) -> TraceError:
        return TraceError(f"{self.file}:{self.number}: {field}: {message}" if field else
                          f"{self.file}:{self.number}: {message}")

    def keys(self, obj: dict, allowed: set[str], required: set[str], prefix: str) -> None:
        for key in obj:
            if key not in allowed:
                raise self.fail(f"{prefix}{key}", "unknown field")
        for key in sorted(required):
            if key not in obj:
                raise self.fail(f"{prefix}{key}", "missing field")

    def integer(self, value: Any, field: str, minimum: int, maximum: int = MAX_TOKENS) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {json.dumps(value)}")
        if value < minimum:
            raise self.fail(field, f"must be >= {minimum}, got {value}")
        if value > maximum:
            raise self.fail(field, f"{value} is absurdly large (limit {maximum})")
        return value

    def number_(self, value: Any, field: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(field, f"expected a number, got {json.dumps(value)}")
        return float(value)

    def boolean(self, value: Any, field: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {json.dumps(value)}")
        return value

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(field, f"expected non-empty text, got {json.dumps(value)}")
        try:
            value.encode("utf-8")  # JSON lets "\ud800" through: a lone surrogate no file or table can hold
        except UnicodeEncodeError:
            raise self.fail(field, f"not valid Unicode text (a lone surrogate): {json.dumps(value)}") from None
        return value


def parse_header(obj: Any, line: Line) -> TraceHeader:
    if not isinstance(obj, dict):
        raise line.fail("", "the first line must be the trace header (a JSON object)")
    if obj.get("format") != FORMAT:
        raise line.fail("format", f"expected {FORMAT!r}: is this a cosim trace? got {json.dumps(obj.get('format'))}")
    if obj.get("version") not in VERSIONS or isinstance(obj.get("version"), bool):
        raise line.fail("version", f"unknown trace version {json.dumps(obj.get('version'))} "
                                   f"(this cosim reads versions {' and '.join(map(str, VERSIONS))})")
    line.keys(obj, _HEADER_FIELDS, _HEADER_FIELDS - {"metadata"}, "")
    accept = line.number_(obj["accept_threshold"], "accept_threshold")
    backtrack = line.number_(obj["backtrack_threshold"], "backtrack_threshold")
    for name, value in (("accept_threshold", accept), ("backtrack_threshold", backtrack)):
        if not 0.0 <= value <= 1.0:
            raise line.fail(name, f"must be in [0, 1], got {value}")
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise line.fail("metadata", "expected a JSON object")
    if SHARED_PREFIX in metadata:  # a count of tokens as any other
        line.integer(metadata[SHARED_PREFIX], f"metadata.{SHARED_PREFIX}", 0)
    return TraceHeader(
        accept_threshold=accept,
        backtrack_threshold=backtrack,
        max_backtracks=line.integer(obj["max_backtracks"], "max_backtracks", 0, 1000),
        backtracking=line.boolean(obj["backtracking"], "backtracking"),
        metadata=metadata,
    )


class _Given(Line):
    """Field checks for a value given in code, raising TraceError(name.field: ...)."""

    def __init__(self, name: str):
        super().__init__(name, 0)

    def fail(self, field: str, message: str) -> TraceError:
        return TraceError(f"{self.file}.{field}: {message}" if field else f"{self.file}: {message}")


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number or bool it holds; anything else as it is."""
    item = getattr(value, "item", None)
    return item() if type(value).__module__ == "numpy" and callable(item) and getattr(value, "ndim", 1) == 0 \
        else value


def check_header(header: Any, name: str = "header") -> TraceHeader:
    """A header built in code, checked as a trace file's header line is (numpy numbers taken
    as the numbers they hold); TraceError naming ``name`` and the field otherwise."""
    if not isinstance(header, TraceHeader):
        raise TraceError(f"{name}: expected a trace.TraceHeader, got {type(header).__name__}")
    obj = {"format": FORMAT, "version": VERSION,
           **{k: _plain(getattr(header, k)) for k in ("accept_threshold", "backtrack_threshold", "max_backtracks",
                                                      "backtracking")}, "metadata": header.metadata}
    checked = parse_header(obj, _Given(name))
    try:
        json.dumps(header.metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TraceError(f"{name}.metadata: a trace file could not hold it ({exc})") from None
    return checked


def _parse_event(obj: Any, line: Line, i: int) -> Event:
    prefix = f"events[{i}]."
    if not isinstance(obj, dict):
        raise line.fail(f"events[{i}]", "expected an event object")
    kind = obj.get("type")
    if kind not in _EVENT_FIELDS:
        raise line.fail(prefix + "type", f"unknown event {json.dumps(kind)} (draft, refine or backtrack)")
    line.keys(obj, _EVENT_FIELDS[kind], _EVENT_FIELDS[kind], prefix)
    if kind == "backtrack":
        return Backtrack(line.integer(obj["to_step"], prefix + "to_step", 1))
    step = line.integer(obj["step"], prefix + "step", 1)
    tokens = line.integer(obj["tokens"], prefix + "tokens", 1)
    score = None if obj["score"] is None and kind == "refine" else line.number_(obj["score"], prefix + "score")
    if score is not None and not 0.0 <= score <= 1.0:
        raise line.fail(prefix + "score", f"must be in [0, 1], got {score}")
    accepted = line.boolean(obj["accepted"], prefix + "accepted")
    return (Draft if kind == "draft" else Refine)(step, tokens, score, accepted)


def _arrival(obj: dict, line: Line, version: int) -> float | None:
    if version != VERSION_ARRIVALS:
        if "arrival_s" in obj:
            raise line.fail("arrival_s", f"a version {version} trace carries no arrival times (version 2 does)")
        return None
    value = obj["arrival_s"]
    wrong = arrival_problem(value)
    if wrong:
        raise line.fail("arrival_s", wrong)
    return float(value)


def parse_problem(obj: Any, line: Line, header: TraceHeader, version: int = VERSION) -> Problem:
    if not isinstance(obj, dict):
        raise line.fail("", "expected a problem (a JSON object)")
    arrival = _arrival(obj, line, version) if version != VERSION_ARRIVALS or "arrival_s" in obj else None
    fields = _PROBLEM_FIELDS | {"arrival_s"} if version == VERSION_ARRIVALS else _PROBLEM_FIELDS
    line.keys(obj, fields, fields - {"answer_correct", "draft_schedule"}, "")
    events_raw = obj["events"]
    if not isinstance(events_raw, list) or not events_raw:
        raise line.fail("events", "expected a non-empty list of events")
    problem = Problem(
        id=line.text(obj["id"], "id"),
        dataset=line.text(obj["dataset"], "dataset"),
        prompt_tokens=line.integer(obj["prompt_tokens"], "prompt_tokens", 1),
        events=tuple(_parse_event(e, line, i) for i, e in enumerate(events_raw)),
        answer_correct=None if obj.get("answer_correct") is None else line.boolean(obj["answer_correct"],
                                                                                  "answer_correct"),
        arrival_s=arrival,
        draft_schedule=_schedule(obj.get("draft_schedule", []), line),
    )
    prefix = header.metadata.get(SHARED_PREFIX, 0)  # a file's header checked it; one built in code, the run does
    if type(prefix) is int and problem.prompt_tokens < prefix:
        raise line.fail("prompt_tokens", f"{problem.prompt_tokens} tokens, fewer than the {prefix} every prompt begins "
                                         f"with (the header's metadata.{SHARED_PREFIX})")
    try:
        summary = summarize(problem, header)
    except ReplayError as exc:
        raise line.fail(_field(exc), str(exc)) from None
    if len(problem.draft_schedule) >= max(summary.final_tokens, 1):
        # Each pass that drafts writes at least one token, and the last token no pass drafts for.
        raise line.fail("draft_schedule", f"{len(problem.draft_schedule)} passes for an output of "
                                          f"{summary.final_tokens} tokens; at most {summary.final_tokens - 1} can draft")
    return problem


def _schedule(raw: Any, line: Line) -> tuple[int, ...]:
    if not isinstance(raw, list):
        raise line.fail("draft_schedule", f"expected a list of draft counts, got {json.dumps(raw)}")
    return tuple(line.integer(k, f"draft_schedule[{i}]", 0, MAX_DRAFTS) for i, k in enumerate(raw))


def json_line(text: str, line: Line) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise line.fail("", f"not valid JSON ({exc.msg} at column {exc.colno}); a truncated line?") from None
    except (ValueError, RecursionError) as exc:  # absurd integers, absurd nesting
        raise line.fail("", f"not a usable JSON line ({type(exc).__name__}: {str(exc)[:80]})") from None
