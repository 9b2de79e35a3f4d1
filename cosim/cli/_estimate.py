"""What a very long run will cost, said before it starts: time and disk measured on a
sample of its own problems, and a refusal when the disk cannot hold its outputs."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .. import trace as traces
from ..engine._workflow import simulate
from ..outputs._arrow import csv_text
from ..trace._events import problem_to_json

# Runs with more problems than this get an estimate first.
ESTIMATE_ABOVE = 1_000_000
SAMPLE_PROBLEMS = 2_000


def _size(n_bytes: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n_bytes < 1000 or unit == "TB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    raise AssertionError


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate(scn: Any, workload: Any, folder: Path, save_trace: bool, sample_run: Any = None,
             option: str | None = None) -> str:
    """One line: the run's time and disk, extrapolated from the first problems of the
    workload simulated alone (``sample_run(trace)``, default simulate; a serving run's
    sample is served). ConfigError naming ``option`` (default ``--problems N``) when the disk
    has less room than that."""
    import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

    total = len(workload)
    sample = traces.Trace(workload.header, workload.problems[:SAMPLE_PROBLEMS])
    n = len(sample)
    start = time.perf_counter()
    result = simulate(scn, sample) if sample_run is None else sample_run(sample)
    seconds = (time.perf_counter() - start) * total / n
    rows = getattr(result, "per_problem", None) or result.per_request
    table = rows.to_arrow()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    per_problem = len(csv_text(table).encode()) + sink.getvalue().size
    if save_trace:
        per_problem += sum(len(json.dumps(problem_to_json(p), separators=(",", ":"), ensure_ascii=False).encode()) + 1
                           for p in sample.problems)
    need = per_problem / n * total
    probe = folder if folder.exists() else next(p for p in folder.parents if p.exists())
    free = shutil.disk_usage(probe).free
    if need > free:
        raise ConfigError(f"{option or f'--problems {total}'}: the outputs need about {_size(need)} and {probe} has "
                          f"{_size(free)} free; give fewer problems or another --out")
    noun = "requests" if sample_run is not None else "problems"
    return (f"{total} {noun}: about {_duration(seconds)} and {_size(need)} of disk ({_size(free)} free), "
            f"measured on the first {n}")
