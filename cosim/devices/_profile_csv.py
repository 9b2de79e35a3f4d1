"""One CSV of a measured profile, read row by row as it streams in: its header checked,
each row's fields numbers or text, every error naming the file, line and field."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

from .._inputs import csv_records
from ..errors import ConfigError
from ..schema._declarations import MEASURED_S, TOKENS


class ProfileCsv:
    """A CSV read row by row as it streams in: its header checked, each row a list of its
    fields with its line number. No row is kept: a large table costs the arrays its reader
    fills, not Python objects per row."""

    def __init__(self, path: Path, required: tuple[str, ...]):
        self.path = path
        if not path.exists():
            raise ConfigError(f"{path}: no such file (an operator profile needs it)")
        self._records = csv_records(path)
        first = next(self._records, None)
        header = [h.strip() for h in first[1]] if first else []
        for name in required:
            if name not in header:
                # The header is not quoted: a message does not show what a file holds.
                raise ConfigError(f"{path}:1: {name}: missing column (the header needs {', '.join(required)})")
        self.header = header
        self.column = {name: i for i, name in enumerate(header)}

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        count = 0
        for line, record in self._records:
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(self.header):
                raise ConfigError(f"{self.path}:{line}: expected {len(self.header)} fields, got {len(record)}")
            count += 1
            yield line, record
        if not count:
            raise ConfigError(f"{self.path}: no rows")

    def text(self, row: list[str], field: str) -> str:
        return row[self.column[field]].strip()

    def real(self, line: int, row: list[str], field: str) -> float:
        """A field's finite number, of either sign."""
        text = self.text(row, field)
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"{self.path}:{line}: {field}: not a number: {text!r}") from None
        if not math.isfinite(value):
            raise ConfigError(f"{self.path}:{line}: {field}: must be finite, got {text!r}")
        return value

    def number(self, line: int, row: list[str], field: str, whole: bool = False, time_ns: float = 0.0) -> float:
        """A field's number; with ``time_ns`` (ns per unit of the file) a measured time, > 0
        and at most MEASURED_S, returned in ns."""
        text = self.text(row, field)
        value = self.real(line, row, field)
        if time_ns:
            if value <= 0:
                raise ConfigError(f"{self.path}:{line}: {field}: a measured time must be > 0, got {text!r}")
            if value * time_ns > MEASURED_S.value * 1e9:
                raise ConfigError(f"{self.path}:{line}: {field}: {text} is past {MEASURED_S} (a unit error?)")
            return value * time_ns
        if value < 0:
            raise ConfigError(f"{self.path}:{line}: {field}: must be >= 0, got {text!r}")
        if whole and value != int(value):
            raise ConfigError(f"{self.path}:{line}: {field}: must be a whole number, got {text!r}")
        if whole and value > TOKENS.value:
            raise ConfigError(f"{self.path}:{line}: {field}: {text} is past {TOKENS}")
        return value
