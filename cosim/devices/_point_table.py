"""Measured points of a table as they stream in from a file: flat arrays of 8-byte numbers
(the point's coordinates, then its value) with the line each came from, so a table of
millions of rows costs its arrays, not a Python object per row."""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

from ..errors import ConfigError


class PointTable:
    """Rows of one table (its axes, then the time in ns) with the line each came from, in
    flat arrays of 8-byte numbers."""

    def __init__(self, path: Path, width: int):
        self.path, self.width = path, width
        self.values = array("d")
        self.lines = array("q")

    def add(self, line: int, values: list[float]) -> None:
        self.values.extend(values)
        self.lines.append(line)

    def __len__(self) -> int:
        return len(self.lines)

    def table(self) -> np.ndarray:
        return np.frombuffer(self.values, dtype=np.float64).reshape(-1, self.width)

    def unique(self) -> np.ndarray:
        """The table; a point measured twice is an error naming both lines."""
        rows, lines = self.table(), np.frombuffer(self.lines, dtype=np.int64)
        keys = rows[:, :-1]
        order = np.lexsort((lines, *keys.T[::-1]))
        ordered = keys[order]
        same = np.all(ordered[1:] == ordered[:-1], axis=1)
        del ordered
        if same.any():
            # The first line in the file that repeats a point, and where that point was first.
            pairs = np.flatnonzero(same)
            at = pairs[np.argmin(lines[order[pairs + 1]])]
            start = at
            while start > 0 and same[start - 1]:
                start -= 1
            raise ConfigError(f"{self.path}:{lines[order[at + 1]]}: the same point is measured on line "
                              f"{lines[order[start]]}")
        return rows
