"""Measured latency profiles: CSV with the header ``phase,tokens,context,seconds``.

``phase`` is prefill or decode; a decode row gives the seconds of one decoded
token (tokens = 1) at that context; a prefill row the seconds of one prefill
call of ``tokens`` new tokens after ``context`` cached ones.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

HEADER = ("phase", "tokens", "context", "seconds")


@dataclass(frozen=True)
class LatencyProfile:
    source: str
    rows: tuple[tuple[str, int, int, float], ...]

    def native(self) -> tuple[str, list[tuple[str, int, int, float]]]:
        return self.source, list(self.rows)


def load_latency_profile(path: str | Path) -> LatencyProfile:
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the latency profile: {exc.strerror}") from None
    rows: list[tuple[str, int, int, float]] = []
    seen: dict[tuple[str, int, int], int] = {}
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != HEADER:
            raise ConfigError(f"{path}:1: header must be {','.join(HEADER)}, got {','.join(header or [])!r}")
        for line, record in enumerate(reader, start=2):
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(HEADER):
                raise ConfigError(f"{path}:{line}: expected {len(HEADER)} fields, got {len(record)}")
            phase, tokens, context, seconds = (cell.strip() for cell in record)
            if phase not in ("prefill", "decode"):
                raise ConfigError(f"{path}:{line}: phase: must be prefill or decode, got {phase!r}")
            values = {}
            for field, text, kind in (("tokens", tokens, int), ("context", context, int), ("seconds", seconds, float)):
                try:
                    values[field] = kind(text)
                except ValueError:
                    raise ConfigError(f"{path}:{line}: {field}: not a {kind.__name__}: {text!r}") from None
            if values["tokens"] <= 0:
                raise ConfigError(f"{path}:{line}: tokens: must be > 0, got {values['tokens']}")
            if phase == "decode" and values["tokens"] != 1:
                raise ConfigError(f"{path}:{line}: tokens: decode rows give seconds per token, so tokens must be 1")
            if values["context"] < 0:
                raise ConfigError(f"{path}:{line}: context: must be >= 0, got {values['context']}")
            if not (math.isfinite(values["seconds"]) and values["seconds"] > 0):
                raise ConfigError(f"{path}:{line}: seconds: must be a finite number > 0, got {seconds!r}")
            key = (phase, values["tokens"], values["context"])
            if key in seen:
                raise ConfigError(f"{path}:{line}: the same point is measured on line {seen[key]}")
            seen[key] = line
            rows.append((phase, values["tokens"], values["context"], values["seconds"]))
    if not rows:
        raise ConfigError(f"{path}: the latency profile has no rows")
    return LatencyProfile(str(path), tuple(rows))
