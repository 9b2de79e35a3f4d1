"""Measured latency profiles: CSV with the header ``phase,tokens,context,seconds``,
or ``phase,tokens,context,seconds,batch``.

``phase`` is prefill or decode; a decode row gives the seconds of one decoded
token (tokens = 1) at that context; a prefill row the seconds of one prefill
call of ``tokens`` new tokens after ``context`` cached ones. With a ``batch``
column, a row at batch b gives the seconds of one iteration in which b sequences
each do that (a batching GPU's iteration); batch 1 is the lone call, and a phase
measured at any batch needs batch 1 rows too.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .._inputs import csv_records
from ..errors import ConfigError
from ..schema._declarations import PROCESSES, TOKENS
from ._point_table import PointTable

HEADER = ("phase", "tokens", "context", "seconds")
BATCH_HEADER = (*HEADER, "batch")
PHASES = ("prefill", "decode")  # a phase's number in the table is its place here
# The table's columns: a point's coordinates, then its time (as the native reader takes them).
COLUMNS = ("phase", "tokens", "context", "batch", "seconds")


class LatencyProfile:
    """A measured latency table: one row per point, in an array of 8-byte numbers (COLUMNS),
    so a large profile costs 40 bytes a point whatever its file's size."""

    def __init__(self, source: str, rows: Iterable[tuple[Any, ...]] = (), batched: Iterable[tuple[Any, ...]] = (),
                 *, table: np.ndarray | None = None):
        """From a table of COLUMNS, or from rows (phase, tokens, context, seconds) at batch 1
        and batched rows (phase, tokens, context, seconds, batch)."""
        if table is None:
            points = [(PHASES.index(r[0]), r[1], r[2], 1, r[3]) for r in rows]
            points += [(PHASES.index(r[0]), r[1], r[2], r[4], r[3]) for r in batched]
            table = np.array(points, dtype=np.float64).reshape(-1, len(COLUMNS))
        table.flags.writeable = False
        self.source, self.table = source, table

    def _tuples(self, lone: bool) -> tuple[tuple[Any, ...], ...]:
        chosen = self.table[(self.table[:, 3] == 1) == lone]
        return tuple((PHASES[int(p)], int(t), int(c), float(s), *(() if lone else (int(b),)))
                     for p, t, c, b, s in chosen)

    @property
    def rows(self) -> tuple[tuple[str, int, int, float], ...]:
        """The lone calls (batch 1), as tuples: for small profiles (fits, checks)."""
        return self._tuples(True)

    @property
    def batched(self) -> tuple[tuple[str, int, int, float, int], ...]:
        """The iterations of batch > 1, as tuples."""
        return self._tuples(False)

    def has_batches(self) -> bool:
        return bool((self.table[:, 3] > 1).any())

    def native(self) -> tuple[str, np.ndarray]:
        return self.source, self.table


def _number(path: Path, line: int, field: str, text: str, whole: bool) -> float:
    try:
        value = float(text)
        if whole and not text.lstrip("+-").isdigit():
            raise ValueError(text)
    except ValueError:
        raise ConfigError(f"{path}:{line}: {field}: not a {'int' if whole else 'float'}: {text!r}") from None
    return value


def _point(path: Path, line: int, names: tuple[str, ...], record: list[str]) -> list[float]:
    """One row's point in COLUMNS, checked."""
    cells = dict(zip(names, (cell.strip() for cell in record)))
    phase = cells["phase"]
    if phase not in PHASES:
        raise ConfigError(f"{path}:{line}: phase: must be prefill or decode, got {phase!r}")
    values = {field: _number(path, line, field, cells[field], field != "seconds") for field in names[1:]}
    values.setdefault("batch", 1)
    # Counts the models take as 32-bit tokens and simulated threads: past those, named here.
    for field, limit in (("tokens", TOKENS), ("context", TOKENS), ("batch", PROCESSES)):
        if values[field] > limit.value:
            raise ConfigError(f"{path}:{line}: {field}: {int(values[field])} is past {limit}")
    if values["tokens"] + values["context"] > TOKENS.value:
        raise ConfigError(f"{path}:{line}: context + tokens: {int(values['context'] + values['tokens'])} is past "
                          f"{TOKENS}")
    if values["tokens"] <= 0:
        raise ConfigError(f"{path}:{line}: tokens: must be > 0, got {int(values['tokens'])}")
    if phase == "decode" and values["tokens"] != 1:
        raise ConfigError(f"{path}:{line}: tokens: decode rows give seconds per token, so tokens must be 1")
    if values["context"] < 0:
        raise ConfigError(f"{path}:{line}: context: must be >= 0, got {int(values['context'])}")
    if values["batch"] <= 0:
        raise ConfigError(f"{path}:{line}: batch: must be > 0, got {int(values['batch'])}")
    if not (math.isfinite(values["seconds"]) and values["seconds"] > 0):
        raise ConfigError(f"{path}:{line}: seconds: must be a finite number > 0, got {cells['seconds']!r}")
    return [float(PHASES.index(phase)), values["tokens"], values["context"], values["batch"], values["seconds"]]


def load_latency_profile(path: str | Path) -> LatencyProfile:
    path = Path(path)
    points = PointTable(path, len(COLUMNS))
    names: tuple[str, ...] = ()
    for line, record in csv_records(path):
        if not names:
            names = tuple(h.strip() for h in record)
            if names not in (HEADER, BATCH_HEADER):
                # Not quoted: a profile: path may name any file, and its first line is not
                # for a message to show.
                raise ConfigError(f"{path}:{line}: header must be {','.join(HEADER)} (or with ,batch); the file is "
                                  f"not a latency profile")
            continue
        if not record or all(not cell.strip() for cell in record):
            continue
        if len(record) != len(names):
            raise ConfigError(f"{path}:{line}: expected {len(names)} fields, got {len(record)}")
        points.add(line, _point(path, line, names, record))
    if not len(points):
        raise ConfigError(f"{path}: the latency profile has no rows")
    table = points.unique()
    lines = np.frombuffer(points.lines, dtype=np.int64)
    for number, phase in enumerate(PHASES):
        of_phase = table[:, 0] == number
        if (of_phase & (table[:, 3] > 1)).any() and not (of_phase & (table[:, 3] == 1)).any():
            raise ConfigError(f"{path}:{int(lines[of_phase].min())}: {phase} rows at batch > 1 need {phase} rows "
                              f"at batch 1 too (the time of a lone call)")
    return LatencyProfile(str(path), table=table)
