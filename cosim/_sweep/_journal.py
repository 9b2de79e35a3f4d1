"""The journal of a sweep: finished points, one JSON line each, so a rerun skips them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import Trace

JOURNAL = "points.jsonl"


def point_key(values: dict[str, Any]) -> str:
    return json.dumps(values, sort_keys=True, default=str)


def sweep_fingerprint(scn: Scenario, trace: Trace) -> str:
    """What the points belong to: every resolved parameter and every trace line."""
    digest = hashlib.sha256(scn.fingerprint().encode())
    for line in trace.lines():
        digest.update(line.encode())
    return digest.hexdigest()[:16]


class Journal:
    """Finished points, one JSON line each, appended and flushed as they finish. The
    first line names what the points belong to (scenario and trace), so a rerun never
    mixes in results of another sweep."""

    def __init__(self, folder: Path | None, fingerprint: str):
        self.path = folder / JOURNAL if folder else None
        self.fingerprint = fingerprint
        self.done: dict[str, dict[str, Any]] = {}
        if not (self.path and self.path.exists()):
            if self.path:
                self._append({"_fingerprint": fingerprint})
            return
        self.reload()

    def reload(self) -> None:
        """Reads back what the file holds (after an interrupt, it is the truth)."""
        assert self.path is not None
        self.done = {}
        fingerprint = self.fingerprint
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, ValueError, RecursionError):
                continue  # a line cut short by a kill: that point runs again
            if not isinstance(row, dict):
                continue
            if "_fingerprint" in row:
                if row["_fingerprint"] != fingerprint:
                    raise ConfigError(f"{self.path}: holds the points of another scenario or trace; use another "
                                      f"--out, or delete the file to start over")
                continue
            if isinstance(row.get("_key"), str):
                self.done[row["_key"]] = row

    def finished(self, key: str) -> dict[str, Any] | None:
        row = self.done.get(key)
        return row if row and row.get("status") == "ok" else None

    def _append(self, row: dict[str, Any]) -> None:
        assert self.path is not None
        with self.path.open("a+", encoding="utf-8") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() > 0:
                handle.seek(handle.tell() - 1)
                if handle.read(1) != "\n":  # the last line was cut short: keep it apart
                    handle.write("\n")
            handle.write(json.dumps(row, default=str) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def add(self, key: str, row: dict[str, Any]) -> None:
        entry = {**row, "_key": key}
        if self.path:
            self._append(entry)  # on disk first: an interrupt never leaves a row only in memory
        self.done[key] = entry
