"""Where a run's per-problem rows go as the engine finishes them: kept in memory
(the default), or appended to disk batch by batch, so that a run of any length
holds only the batch at hand (``simulate(rows_to=folder)``, which ``cosim run``
uses).

On disk they are ``per_problem.csv`` and ``per_problem.arrow`` (Arrow IPC, the
same table, memory-mapped when read back), each written under a hidden partial
name, synced, and renamed into place only when the run is through.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import OutputError
from ..outputs._atomic import UMASK
from .._rows import ROW_FIELDS
from ..result import arrow_rows

ROWS_CSV = "per_problem.csv"
ROWS_ARROW = "per_problem.arrow"


class MemoryRows:
    """Every batch kept, joined into columns at the end."""

    def __init__(self) -> None:
        self._batches: list[dict[str, Any]] = []

    def add(self, rows: dict[str, Any]) -> None:
        self._batches.append(rows)

    def finish(self) -> dict[str, Any] | None:
        if not self._batches:
            return None
        first = self._batches[0]
        out: dict[str, Any] = {}
        for name, values in first.items():
            if isinstance(values, list):
                out[name] = [v for b in self._batches for v in b[name]]
            else:
                out[name] = np.concatenate([b[name] for b in self._batches])
        self._batches.clear()
        return out

    def discard(self) -> None:
        self._batches.clear()


class FileRows:
    """Each batch appended to the CSV and the Arrow file in ``folder``."""

    def __init__(self, folder: Path, fields: tuple[str, ...] | None = None):
        import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

        self.folder = Path(folder)
        self._fields = fields or ROW_FIELDS
        self._partial = {name: self.folder / f".{name}.partial-{os.getpid()}" for name in (ROWS_CSV, ROWS_ARROW)}
        self._csv: Any = None
        self._arrow_file: Any = None
        self._arrow: Any = None
        self._pa = pa

    def _open(self, first: Any) -> None:
        with self._writing(ROWS_CSV):
            self._csv = open(self._partial[ROWS_CSV], "wb")
            os.fchmod(self._csv.fileno(), 0o666 & ~UMASK)
            header = io.StringIO()
            csv.writer(header, lineterminator="\n").writerow(first.schema.names)
            self._csv.write(header.getvalue().encode())
        with self._writing(ROWS_ARROW):
            self._arrow_file = open(self._partial[ROWS_ARROW], "wb")
            os.fchmod(self._arrow_file.fileno(), 0o666 & ~UMASK)
            self._arrow = self._pa.ipc.new_file(self._arrow_file, first.schema)

    def add(self, rows: dict[str, Any]) -> None:
        import pyarrow.csv as pacsv  # lazy: pyarrow, loaded only when a table is written or read

        batch = arrow_rows(rows, self._fields).to_batches()
        if not batch:
            return
        if self._csv is None:
            self._open(batch[0])
        for b in batch:
            with self._writing(ROWS_CSV):
                pacsv.write_csv(b, self._csv, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
            with self._writing(ROWS_ARROW):
                self._arrow.write_batch(b)
        # On disk now, not in buffers: what a run has finished is visible as it goes.
        for name, handle in ((ROWS_CSV, self._csv), (ROWS_ARROW, self._arrow_file)):
            with self._writing(name):
                handle.flush()

    @contextlib.contextmanager
    def _writing(self, name: str) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise OutputError(f"{self.folder / name}: writing failed: {exc.strerror or exc}") from None

    def finish(self) -> None:
        """Closes, syncs and renames both files into place."""
        try:
            with self._writing(ROWS_ARROW):
                self._arrow.close()
            for name, handle in ((ROWS_CSV, self._csv), (ROWS_ARROW, self._arrow_file)):
                with self._writing(name):
                    handle.flush()
                    os.fsync(handle.fileno())
                    handle.close()
            for name, partial in self._partial.items():  # both whole: into place together
                with self._writing(name):
                    os.replace(partial, self.folder / name)
        except OutputError:
            self.discard()
            raise

    def discard(self) -> None:
        for handle in (self._csv, self._arrow_file):
            if handle is not None and not handle.closed:
                try:
                    handle.close()
                except OSError:  # its buffered rows could not be written either: they are discarded
                    pass
        for partial in self._partial.values():
            partial.unlink(missing_ok=True)


def read_rows(folder: Path) -> Any:
    """A reader of a run's rows on disk, memory-mapped: only the file's footer is read
    now, and the file can be renamed while it stays open."""
    import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

    return pa.ipc.open_file(pa.memory_map(str(Path(folder) / ROWS_ARROW)))
