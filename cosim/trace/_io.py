"""Reading and writing traces: versioned JSON Lines (a header line, then one
problem per line), checked field by field and against the algorithm, with
errors that name the file, line and field. Version 1 problems carry no arrival
times; in version 2 every problem carries ``arrival_s`` (seconds, nondecreasing
through the file). Both are read; a trace is written as version 1 unless its
problems carry arrivals. The JSON Schemas of both kinds of line are
``cosim/data/schema/trace-v1.schema.json`` and ``trace-v2.schema.json``."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..outputs._atomic import write_atomically
from .._lazy import LazySequence
from .. import _inputs
from ..errors import ConfigError, TraceError
from ._arrivals import ArrivalProblems, arrival_problem, arrival_times, check_times
from ._events import VERSION, VERSION_ARRIVALS, Problem, TraceHeader, problem_to_json
# MAX_TOKENS and check_problem are imported from here by the rest of the package.
from ._parse import MAX_TOKENS, json_line, Line, check_problem, parse_header, parse_problem  # noqa: F401
from ._replay import ChainSummary


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

    def with_arrivals(self, times_s: Any) -> Trace:
        """This trace with problem ``i`` arriving at ``times_s[i]`` seconds (one time per
        problem, finite, >= 0, nondecreasing; cosim.serve.poisson and gamma draw them). The
        problems are not drawn or read now: each gets its time when it is read. Arrivals the
        problems already carry are replaced."""
        base = self.problems.base if isinstance(self.problems, ArrivalProblems) else self.problems
        return Trace(self.header, ArrivalProblems(base, check_times(times_s, "times_s", len(base))))

    def arrivals(self) -> Any:
        """The problems' arrival times in seconds (a float64 array in trace order), or None
        for a closed-loop trace (no problem carries one)."""
        return arrival_times(self.problems)

    def version(self) -> int:
        """The format version this trace is written as: 2 when its problems carry
        arrival times (the first problem says), else 1."""
        if isinstance(self.problems, ArrivalProblems):
            return VERSION_ARRIVALS
        return VERSION_ARRIVALS if len(self.problems) and self.problems[0].arrival_s is not None else VERSION

    def fingerprint(self) -> str:
        """What identifies the trace's content, cheaply: a loaded file's digest, a generated
        trace's recipe (its header names profile, seed and count), else every line."""
        digest = hashlib.sha256(json_text(self.header.to_json()).encode())
        if isinstance(self.problems, ArrivalProblems):
            digest.update(Trace(self.header, self.problems.base).fingerprint().encode())
            digest.update(self.problems.times.tobytes())
        elif isinstance(self.problems, FileProblems):
            digest.update(self.problems.digest)
        elif isinstance(self.problems, list) or "generator" not in self.header.metadata:
            for problem in self.problems:
                digest.update(json_text(problem_to_json(problem)).encode())
        digest.update(str(len(self.problems)).encode())
        return digest.hexdigest()[:16]

    def lines(self) -> Iterator[str]:
        yield json_text(self.header.to_json(self.version()))
        for problem in self.problems:
            yield json_text(problem_to_json(problem))

    def save(self, path: str | Path) -> Path:
        """Writes the trace atomically (a reader never sees half a file), drawing or
        reading each problem once; what the loader would refuse is never written."""
        path = Path(path)
        source = self.problems.base if isinstance(self.problems, ArrivalProblems) else self.problems
        if isinstance(source, FileProblems) and source.reads(path):
            self.problems = list(self.problems)  # it is about to replace the file it reads from
        version = self.version()

        def write(handle: Any) -> None:
            handle.write(json_text(self.header.to_json(version)) + "\n")
            ids: set[str] = set()
            last: list[float] = []  # the previous problem's arrival
            for problem in self.problems:
                _check_writable(problem, self.header, path, ids)
                _check_arrival_order(problem, version, path, last)
                handle.write(json_text(problem_to_json(problem)) + "\n")

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
    wrong = None if problem.arrival_s is None else arrival_problem(problem.arrival_s)
    if wrong:
        raise TraceError(f"problem {problem.id!r}: arrival_s: {wrong}")
    return summary


def _check_arrival_order(problem: Problem, version: int, path: Path, last: list[float]) -> None:
    """A version 2 file needs every problem's arrival, in nondecreasing order; version 1 none."""
    if (problem.arrival_s is None) == (version == VERSION_ARRIVALS):
        raise TraceError(f"{path}: problem {problem.id!r}: arrival_s: " + (
            "missing; the first problem carries an arrival time, so every problem must" if version ==
            VERSION_ARRIVALS else "the first problem carries no arrival time, so no problem may"))
    if problem.arrival_s is not None:
        if last and problem.arrival_s < last[0]:
            raise TraceError(f"{path}: problem {problem.id!r}: arrival_s: {problem.arrival_s!r} s is before the "
                             f"previous problem's {last[0]!r} s; arrivals must not decrease")
        last[:] = [problem.arrival_s]


def _check_writable(problem: Problem, header: TraceHeader, path: Path, ids: set[str]) -> None:
    try:
        check_storable(problem, header)
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from None
    if problem.id in ids:
        raise TraceError(f"{path}: problem id {problem.id!r} appears twice")
    ids.add(problem.id)


def _numpy(value: Any) -> Any:
    """A numpy scalar (a count, score or flag built with numpy) as the number it holds."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def json_text(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_numpy)



class FileProblems(LazySequence):
    """The problems of a trace file, read from the file when they are read: the
    file is checked in full once (every line, every field, the algorithm, unique
    ids), and then only where each problem's line starts is kept, so a trace of
    any length costs a few bytes a problem. The file must not change meanwhile
    (checked: size and modification time)."""

    def __init__(self, path: Path, header: TraceHeader, offsets: array, numbers: array, stamp: tuple[int, ...],
                 digest: bytes = b"", version: int = VERSION):
        self._path, self._header, self._version = path.resolve(), header, version
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
        line = Line(str(self._path), number)
        try:
            return parse_problem(json_line(_decode(raw, self._path, 0), line), line, self._header, self._version)
        except TraceError as exc:
            raise TraceError(f"{exc} (the file changed since it was loaded)") from None


def _line_digest() -> Any:
    return hashlib.blake2b(digest_size=16)


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    # ctime cannot be set back by a writer (utime sets only atime and mtime).
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _decode(raw: bytes, path: Path, offset: int, line: int | None = None) -> str:
    try:
        return _inputs.decode(raw, path, line, offset)
    except ConfigError as exc:
        raise TraceError(str(exc)) from None


def load(path: str | Path) -> Trace:
    """Reads and checks a trace file; raises TraceError naming file, line and field.

    The problems of a regular file are read from it again when used (see
    FileProblems), so memory does not grow with the file; those of a pipe or other
    stream, which cannot be read twice, are held."""
    path = Path(path)
    header: TraceHeader | None = None
    version = VERSION
    last_arrival: tuple[float, int] | None = None  # the previous problem's arrival and line
    offsets, numbers = array("q"), array("l")
    held: list[Problem] = []
    seen: set[str] = set()
    digest = _line_digest()
    try:
        # A regular file or a pipe (held); a device is refused and every line is bounded,
        # so an endless stream without a newline stops at its first line.
        with _inputs.open_input(path, streams=True) as handle:
            info = os.fstat(handle.fileno())
            regular = stat.S_ISREG(info.st_mode)
            for number, start, raw in _inputs.read_lines(handle, path):
                text = _decode(raw, path, start, number)
                if not text.strip():
                    continue
                line = Line(str(path), number)
                obj = json_line(text, line)
                if header is None:
                    header, version = parse_header(obj, line), obj["version"]
                    continue
                problem = parse_problem(obj, line, header, version)
                if problem.arrival_s is not None:
                    if last_arrival is not None and problem.arrival_s < last_arrival[0]:
                        raise line.fail("arrival_s", f"{problem.arrival_s!r} s is before the previous problem's "
                                                     f"{last_arrival[0]!r} s (line {last_arrival[1]}); arrivals must "
                                                     f"not decrease")
                    last_arrival = (problem.arrival_s, number)
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
    except TraceError:
        raise
    except ConfigError as exc:  # not a file it can read
        raise TraceError(str(exc)) from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    if header is None:
        raise TraceError(f"{path}: empty trace (no header line)")
    if not regular:
        return Trace(header, held)
    return Trace(header, FileProblems(path, header, offsets, numbers, _stamp(info), digest.digest(), version))



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
