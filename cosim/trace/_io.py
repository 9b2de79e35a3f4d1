"""Reading and writing traces: versioned JSON Lines (a header line, then one
problem per line), checked field by field and against the algorithm, with
errors that name the file, line and field. The JSON Schema of both kinds of
line is ``cosim/data/schema/trace-v1.schema.json``."""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..outputs._atomic import write_atomically
from .._lazy import LazySequence
from ..errors import TraceError
from ._events import FORMAT, VERSION, Backtrack, Draft, Event, Problem, Refine, TraceHeader, problem_to_json
from ._replay import ChainSummary, ReplayError, summarize

# No model here has a context anywhere near this; a larger count is a broken file.
MAX_TOKENS = 1_000_000

_HEADER_FIELDS = {"format", "version", "accept_threshold", "backtrack_threshold", "max_backtracks", "backtracking",
                  "metadata"}
_PROBLEM_FIELDS = {"id", "dataset", "prompt_tokens", "answer_correct", "events"}
_EVENT_FIELDS = {
    "draft": {"type", "step", "tokens", "score", "accepted"},
    "refine": {"type", "step", "tokens", "score", "accepted"},
    "backtrack": {"type", "to_step"},
}


@dataclass
class Trace:
    header: TraceHeader = field(default_factory=TraceHeader)
    # A list, or a sequence that reads each problem when asked (generated, or from a file).
    problems: Sequence[Problem] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.problems)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def in_memory(self) -> Trace:
        """This trace with its problems held as a list: for a trace replayed many
        times (a sweep, a report), drawing or parsing each problem once."""
        return self if isinstance(self.problems, list) else Trace(self.header, list(self.problems))

    def summaries(self) -> list[ChainSummary]:
        return [check_problem(p, self.header) for p in self.problems]

    def fingerprint(self) -> str:
        """What identifies the trace's content, cheaply: a loaded file's digest, a generated
        trace's recipe (its header names profile, seed and count), else every line."""
        digest = hashlib.sha256(_dump(self.header.to_json()).encode())
        if isinstance(self.problems, FileProblems):
            digest.update(self.problems.digest)
        elif isinstance(self.problems, list) or "generator" not in self.header.metadata:
            for problem in self.problems:
                digest.update(_dump(problem_to_json(problem)).encode())
        digest.update(str(len(self.problems)).encode())
        return digest.hexdigest()[:16]

    def lines(self) -> Iterator[str]:
        yield _dump(self.header.to_json())
        for problem in self.problems:
            yield _dump(problem_to_json(problem))

    def save(self, path: str | Path) -> Path:
        """Writes the trace atomically (a reader never sees half a file), drawing or
        reading each problem once; what the loader would refuse is never written."""
        path = Path(path)
        if isinstance(self.problems, FileProblems) and self.problems.reads(path):
            self.problems = list(self.problems)  # it is about to replace the file it reads from

        def write(handle: Any) -> None:
            handle.write(_dump(self.header.to_json()) + "\n")
            ids = set()
            for problem in self.problems:
                _check_writable(problem, self.header, path, ids)
                handle.write(_dump(problem_to_json(problem)) + "\n")

        return write_atomically(path, write)


def check_storable(problem: Problem, header: TraceHeader) -> ChainSummary:
    """What the loader would check of a problem built in code: the algorithm, the token
    counts' limit, text a file can hold. TraceError otherwise."""
    summary = check_problem(problem, header)
    sizes = [problem.prompt_tokens] + [getattr(e, "tokens", 0) for e in problem.events]
    if max(sizes) > MAX_TOKENS:
        raise TraceError(f"problem {problem.id!r}: a count of {max(sizes)} tokens is beyond {MAX_TOKENS}")
    try:
        f"{problem.id}{problem.dataset}".encode("utf-8")
    except UnicodeEncodeError:
        raise TraceError(f"problem {problem.id!r}: the id or dataset is not valid Unicode text") from None
    return summary


def _check_writable(problem: Problem, header: TraceHeader, path: Path, ids: set[str]) -> None:
    try:
        check_storable(problem, header)
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from None
    if problem.id in ids:
        raise TraceError(f"{path}: problem id {problem.id!r} appears twice")
    ids.add(problem.id)


def _dump(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _field(exc: ReplayError) -> str:
    return "events" if exc.field == "events" else f"events[{exc.index}].{exc.field}"


def check_problem(problem: Problem, header: TraceHeader) -> ChainSummary:
    try:
        return summarize(problem, header)
    except ReplayError as exc:
        raise TraceError(f"problem {problem.id!r}: {_field(exc)}: {exc}") from None


class _Line:
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


def parse_header(obj: Any, line: _Line) -> TraceHeader:
    if not isinstance(obj, dict):
        raise line.fail("", "the first line must be the trace header (a JSON object)")
    if obj.get("format") != FORMAT:
        raise line.fail("format", f"expected {FORMAT!r}: is this a cosim trace? got {json.dumps(obj.get('format'))}")
    if obj.get("version") != VERSION:
        raise line.fail("version", f"unknown trace version {json.dumps(obj.get('version'))} "
                                   f"(this cosim reads version {VERSION})")
    line.keys(obj, _HEADER_FIELDS, _HEADER_FIELDS - {"metadata"}, "")
    accept = line.number_(obj["accept_threshold"], "accept_threshold")
    backtrack = line.number_(obj["backtrack_threshold"], "backtrack_threshold")
    for name, value in (("accept_threshold", accept), ("backtrack_threshold", backtrack)):
        if not 0.0 <= value <= 1.0:
            raise line.fail(name, f"must be in [0, 1], got {value}")
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise line.fail("metadata", "expected a JSON object")
    return TraceHeader(
        accept_threshold=accept,
        backtrack_threshold=backtrack,
        max_backtracks=line.integer(obj["max_backtracks"], "max_backtracks", 0, 1000),
        backtracking=line.boolean(obj["backtracking"], "backtracking"),
        metadata=metadata,
    )


def _parse_event(obj: Any, line: _Line, i: int) -> Event:
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


def parse_problem(obj: Any, line: _Line, header: TraceHeader) -> Problem:
    if not isinstance(obj, dict):
        raise line.fail("", "expected a problem (a JSON object)")
    line.keys(obj, _PROBLEM_FIELDS, _PROBLEM_FIELDS - {"answer_correct"}, "")
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
    )
    try:
        summarize(problem, header)
    except ReplayError as exc:
        raise line.fail(_field(exc), str(exc)) from None
    return problem


class FileProblems(LazySequence):
    """The problems of a trace file, read from the file when they are read: the
    file is checked in full once (every line, every field, the algorithm, unique
    ids), and then only where each problem's line starts is kept, so a trace of
    any length costs a few bytes a problem. The file must not change meanwhile
    (checked: size and modification time)."""

    def __init__(self, path: Path, header: TraceHeader, offsets: array, numbers: array, stamp: tuple[int, ...],
                 digest: bytes = b""):
        self._path, self._header = path.resolve(), header
        self._offsets, self._numbers, self._stamp = offsets, numbers, stamp
        self._digest = digest  # of the problem lines as loaded

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def digest(self) -> bytes:
        return self._digest

    def reads(self, path: Path) -> bool:
        """Whether this reads the file at `path`."""
        return Path(path).resolve() == self._path

    def _item(self, index: int) -> Problem:
        with self._open() as handle:
            try:
                handle.seek(self._offsets[index])
                raw = handle.readline()
            except OSError as exc:
                raise TraceError(f"{self._path}: cannot read: {exc.strerror}") from None
            return self._parse(raw, self._numbers[index])

    def __iter__(self) -> Iterator[Problem]:
        if not len(self):
            return
        digest = _line_digest()
        with self._open() as handle:
            for offset, number in zip(self._offsets, self._numbers):
                if handle.tell() != offset:
                    handle.seek(offset)
                raw = handle.readline()
                digest.update(raw)
                yield self._parse(raw, number)
            # Read in full: what was read must be what was loaded, byte for byte (a file
            # rewritten in place keeps its inode, and a run must not mix two contents).
            if self._digest and digest.digest() != self._digest:
                raise TraceError(f"{self._path}: the file changed while it was being read; the run's result would "
                                 f"mix its old and new problems")

    def __repr__(self) -> str:
        return f"FileProblems({str(self._path)!r}, {len(self)} problems)"

    def _open(self) -> Any:
        try:
            handle = self._path.open("rb")
            info = os.fstat(handle.fileno())
        except OSError as exc:
            raise TraceError(f"{self._path}: cannot read: {exc.strerror}") from None
        if _stamp(info) != self._stamp:
            handle.close()
            raise TraceError(f"{self._path}: the file changed since it was loaded; load it again")
        return handle

    def _parse(self, raw: bytes, number: int) -> Problem:
        line = _Line(str(self._path), number)
        try:
            return parse_problem(_json_line(_decode(raw, self._path, 0), line), line, self._header)
        except TraceError as exc:
            raise TraceError(f"{exc} (the file changed since it was loaded)") from None


def _line_digest() -> Any:
    return hashlib.blake2b(digest_size=16)


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    # ctime cannot be set back by a writer (utime sets only atime and mtime).
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _decode(raw: bytes, path: Path, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text ({exc.reason} at byte {offset + exc.start})") from None


def load(path: str | Path) -> Trace:
    """Reads and checks a trace file; raises TraceError naming file, line and field.

    The problems of a regular file are read from it again when used (see
    FileProblems), so memory does not grow with the file; those of a pipe or other
    stream, which cannot be read twice, are held."""
    path = Path(path)
    header: TraceHeader | None = None
    offsets, numbers = array("q"), array("l")
    held: list[Problem] = []
    seen: set[str] = set()
    digest = _line_digest()
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            regular = stat.S_ISREG(info.st_mode)
            offset = 0
            for number, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                text = _decode(raw, path, start)
                if not text.strip():
                    continue
                line = _Line(str(path), number)
                obj = _json_line(text, line)
                if header is None:
                    header = parse_header(obj, line)
                    continue
                problem = parse_problem(obj, line, header)
                if problem.id in seen:
                    raise line.fail("id", f"problem {problem.id!r} already appears on line "
                                          f"{_first_line(path, problem.id, number)}")
                seen.add(problem.id)
                if regular:
                    offsets.append(start)
                    numbers.append(number)
                    digest.update(raw)
                else:
                    held.append(problem)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    if header is None:
        raise TraceError(f"{path}: empty trace (no header line)")
    if not regular:
        return Trace(header, held)
    return Trace(header, FileProblems(path, header, offsets, numbers, _stamp(info), digest.digest()))


def _json_line(text: str, line: _Line) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise line.fail("", f"not valid JSON ({exc.msg} at column {exc.colno}); a truncated line?") from None
    except (ValueError, RecursionError) as exc:  # absurd integers, absurd nesting
        raise line.fail("", f"not a usable JSON line ({type(exc).__name__}: {str(exc)[:80]})") from None


def _first_line(path: Path, problem_id: str, before: int) -> int:
    """The line where `problem_id` first appears (only looked up for the error)."""
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if number >= before:
                break
            try:
                obj = json.loads(text)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("id") == problem_id:
                return number
    return before
