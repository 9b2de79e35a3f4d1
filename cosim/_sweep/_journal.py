"""The journal of a sweep: finished points, one JSON line each, so a rerun skips them.

Its first line names what the points belong to (a digest of the scenario and the trace).
A journal whose first line is not that line, or whose rows are not rows of a sweep, is
refused with the line named: read as it is, it could lend one scenario's rows to another.
Only a last line without its newline is taken as cut short by a kill, and dropped. A row
is checked against what its point needs when the run reads it back (``check``): the
point's values as its ``_key`` names them, and a finished point's figures as numbers;
a row that lacks one, or holds text or a negative number where a figure goes, is refused
with its line, never used. While a sweep runs it holds a lock on its journal, so a
second sweep into the same folder is refused instead of writing the same file at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import Trace

JOURNAL = "points.jsonl"
STATUSES = ("ok", "error")


# What is wrong with a row read back ("" when nothing): see row_problem.
RowCheck = Callable[[dict[str, Any]], str]


def point_key(values: dict[str, Any]) -> str:
    return json.dumps(values, sort_keys=True, default=str)


def row_problem(row: dict[str, Any], parameters: Sequence[str], figures: Sequence[str]) -> str:
    """What is wrong with a journal's row of a point of ``parameters`` ("" when nothing): a
    value of the point missing or not the one its ``_key`` names; an error row without its
    text; a finished row without one of ``figures``, or with one that is neither null (not
    defined) nor a finite number >= 0 (every figure a row carries is a time, a rate, an
    energy, a count or a share)."""
    missing = [name for name in parameters if name not in row]
    if missing:
        return f"lacks the point's value {missing[0]}"
    if point_key({name: row[name] for name in parameters}) != row["_key"]:
        return "its values are not those of the point its _key names"
    if row["status"] == "error":
        return "" if isinstance(row.get("error"), str) else "an error row without its error text"
    for name in figures:
        if name not in row:
            return f"lacks {name}"
        value = row[name]
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            return f"{name}: expected a number >= 0 (or null), got {json.dumps(value)[:40]}"
    return ""


def sweep_fingerprint(scn: Scenario, trace: Trace) -> str:
    """What the points belong to: every resolved parameter and every trace line."""
    digest = hashlib.sha256(scn.fingerprint().encode())
    for line in trace.lines():
        digest.update(line.encode())
    return digest.hexdigest()[:16]


class Journal:
    """Finished points, one JSON line each, appended and flushed as they finish. The
    first line names what the points belong to (scenario and trace), so a rerun never
    mixes in results of another sweep. A row is read through ``row`` or ``finished``, which
    check it with ``check`` first. ``close()`` releases the lock."""

    def __init__(self, folder: Path | None, fingerprint: str, check: RowCheck | None = None):
        self.path = folder / JOURNAL if folder else None
        self.fingerprint = fingerprint
        self.done: dict[str, dict[str, Any]] = {}
        self._check = check
        self._lines: dict[str, int] = {}  # the line of each point's row in the file
        self._checked: set[str] = set()  # the points whose rows passed the check (or were added here)
        self._fd: int | None = None
        self._size = 0  # bytes of whole lines: a failed write's partial line is cut back to this
        if self.path is None:
            return
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise ConfigError(f"--out {self.path.parent}: cannot open {JOURNAL}: {exc.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.close()
            raise ConfigError(f"--out {self.path.parent}: another sweep is writing into it now ({self.path} is "
                              f"locked by it); wait for it to end, or give another --out") from None
        try:
            self.reload()
            if self._size == 0:
                self._append({"_fingerprint": fingerprint})
        except BaseException:
            self.close()
            raise

    def _read(self) -> bytes:
        assert self._fd is not None
        chunks = []
        os.lseek(self._fd, 0, os.SEEK_SET)
        while chunk := os.read(self._fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)

    def reload(self) -> None:
        """Reads back what the file holds (after an interrupt, it is the truth)."""
        assert self.path is not None
        data = self._read()
        whole = data.rfind(b"\n") + 1  # a last line without its newline was cut short: it runs again
        self._size = whole
        self.done, self._lines, self._checked = {}, {}, set()
        for number, raw in enumerate(data[:whole].split(b"\n")[:-1], start=1):
            row = self._parse(raw, number)
            if number == 1:
                if set(row) != {"_fingerprint"} or not isinstance(row["_fingerprint"], str):
                    raise ConfigError(f"{self.path}:1: not the line that names a sweep's scenario and trace (it is "
                                      f"damaged); delete the file to start the sweep over")
                if row["_fingerprint"] != self.fingerprint:
                    raise ConfigError(f"{self.path}: holds the points of another scenario or trace; use another "
                                      f"--out, or delete the file to start over")
                continue
            key, status = row.get("_key"), row.get("status")
            if not isinstance(key, str) or status not in STATUSES or "_fingerprint" in row:
                raise ConfigError(f"{self.path}:{number}: not a row of a sweep (a _key and a status of ok or error); "
                                  f"delete that line to run its point again")
            self.done[key] = row
            self._lines[key] = number

    def _parse(self, raw: bytes, number: int) -> dict[str, Any]:
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            row = None
        if not isinstance(row, dict):
            what = "the line that names a sweep's scenario and trace" if number == 1 else "a row of a sweep"
            raise ConfigError(f"{self.path}:{number}: not {what} (not a JSON object); "
                              + ("delete the file to start the sweep over" if number == 1
                                 else "delete that line to run its point again"))
        return row

    def row(self, key: str) -> dict[str, Any] | None:
        """The row of the point ``key`` (None when there is none), checked first: ConfigError
        naming the file and line of a row the check refuses."""
        row = self.done.get(key)
        if row is None or self._check is None or key in self._checked:
            return row
        problem = self._check(row)
        if problem:
            raise ConfigError(f"{self.path}:{self._lines[key]}: {problem}; delete that line to run its point again")
        self._checked.add(key)
        return row

    def finished(self, key: str) -> dict[str, Any] | None:
        row = self.row(key)
        return row if row and row.get("status") == "ok" else None

    def _append(self, row: dict[str, Any]) -> None:
        assert self._fd is not None
        if os.fstat(self._fd).st_size != self._size:
            os.ftruncate(self._fd, self._size)  # a cut line (a kill, a full disk) never stays between rows
        data = (json.dumps(row, default=str) + "\n").encode("utf-8")
        os.lseek(self._fd, self._size, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)
        self._size += len(data)

    def add(self, key: str, row: dict[str, Any]) -> None:
        entry = {**row, "_key": key}
        if self.path:
            self._append(entry)  # on disk first: an interrupt never leaves a row only in memory
        self.done[key] = entry
        self._checked.add(key)  # made here, not read back

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with it
            self._fd = None

    def __del__(self) -> None:
        self.close()  # a journal dropped unclosed (an exception on the way) frees its folder
