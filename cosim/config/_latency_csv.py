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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._inputs import csv_records
from ..errors import ConfigError
from ._declarations import PROCESSES, TOKENS

HEADER = ("phase", "tokens", "context", "seconds")
BATCH_HEADER = (*HEADER, "batch")


@dataclass(frozen=True)
class LatencyProfile:
    source: str
    rows: tuple[tuple[str, int, int, float], ...]  # lone calls (batch 1)
    batched: tuple[tuple[str, int, int, float, int], ...] = ()  # iterations of batch > 1

    def native(self) -> tuple[str, list[tuple[Any, ...]]]:
        return self.source, [*self.rows, *self.batched]


def load_latency_profile(path: str | Path) -> LatencyProfile:
    path = Path(path)
    rows: list[tuple[str, int, int, float]] = []
    batched: list[tuple[str, int, int, float, int]] = []
    seen: dict[tuple[str, int, int, int], int] = {}
    records = csv_records(path)
    names: tuple[str, ...] = ()
    for line, record in records:
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
        cells = dict(zip(names, (cell.strip() for cell in record)))
        phase = cells["phase"]
        if phase not in ("prefill", "decode"):
            raise ConfigError(f"{path}:{line}: phase: must be prefill or decode, got {phase!r}")
        values: dict[str, Any] = {}
        for field in names[1:]:
            kind = float if field == "seconds" else int
            try:
                values[field] = kind(cells[field])
            except ValueError:
                raise ConfigError(f"{path}:{line}: {field}: not a {kind.__name__}: {cells[field]!r}") from None
        batch = values.get("batch", 1)
        # Counts the models take as 32-bit tokens and simulated threads: past those, named here.
        for field, limit in (("tokens", TOKENS), ("context", TOKENS), ("batch", PROCESSES)):
            if values.get(field, 1) > limit.value:
                raise ConfigError(f"{path}:{line}: {field}: {values[field]} is past {limit}")
        if values["tokens"] + values["context"] > TOKENS.value:
            raise ConfigError(f"{path}:{line}: context + tokens: {values['context'] + values['tokens']} is past "
                              f"{TOKENS}")
        if values["tokens"] <= 0:
            raise ConfigError(f"{path}:{line}: tokens: must be > 0, got {values['tokens']}")
        if phase == "decode" and values["tokens"] != 1:
            raise ConfigError(f"{path}:{line}: tokens: decode rows give seconds per token, so tokens must be 1")
        if values["context"] < 0:
            raise ConfigError(f"{path}:{line}: context: must be >= 0, got {values['context']}")
        if batch <= 0:
            raise ConfigError(f"{path}:{line}: batch: must be > 0, got {batch}")
        if not (math.isfinite(values["seconds"]) and values["seconds"] > 0):
            raise ConfigError(f"{path}:{line}: seconds: must be a finite number > 0, got {cells['seconds']!r}")
        key = (phase, values["tokens"], values["context"], batch)
        if key in seen:
            raise ConfigError(f"{path}:{line}: the same point is measured on line {seen[key]}")
        seen[key] = line
        point = (phase, values["tokens"], values["context"], values["seconds"])
        if batch == 1:
            rows.append(point)
        else:
            batched.append((*point, batch))
    if not rows and not batched:
        raise ConfigError(f"{path}: the latency profile has no rows")
    for phase in sorted({b[0] for b in batched} - {r[0] for r in rows}):
        line = min(seen[k] for k in seen if k[0] == phase)
        raise ConfigError(f"{path}:{line}: {phase} rows at batch > 1 need {phase} rows at batch 1 too "
                          f"(the time of a lone call)")
    return LatencyProfile(str(path), tuple(rows), tuple(batched))
