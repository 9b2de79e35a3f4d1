"""Parameter sweeps: the grid of points, run on local worker processes or on a Ray
cluster, with a journal so that a rerun skips finished points and a failed point is
recorded with its error while the others go on."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Sequence

from ..outputs._atomic import writable_folder
from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import Trace
from ._executors import EXECUTORS, check_ray_address, local_results, ray_results
from ._journal import JOURNAL, Journal, point_key, sweep_fingerprint
from ._point import SERVE_PATHS, check_serve_value, run_point
from ._table import SweepTable

__all__ = ["EXECUTORS", "JOURNAL", "SweepTable", "grid_points", "run_point", "sweep", "sweep_fingerprint"]

# A sweep replays its trace at every point. Up to this many problems (tens of MB)
# the trace is held in memory once; a longer one is drawn or read again per point,
# which costs time (about 0.2 ms a generated problem) instead of memory.
HOLD_FOR_REUSE = 20_000


def grid_points(grid: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    if not grid:
        raise ConfigError("a sweep needs at least one parameter with values")
    for path, values in grid.items():
        if not isinstance(values, list | tuple) or not values:
            raise ConfigError(f"sweep {path}: give a non-empty list of values")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def sweep(scn: Scenario, trace: Trace, grid: dict[str, Sequence[Any]], *, workers: int = 1,
          executor: str = "local", ray_address: str | None = None, out: str | Path | None = None,
          progress: bool = False) -> SweepTable:
    """Simulates every point of ``grid`` (parameter path -> values) on ``trace``.

    With ``out``, finished points go to ``out/points.jsonl`` as they finish (a
    rerun skips them) and the table to ``out/sweep.csv`` and ``out/sweep.parquet``.
    ``serve.rate``, ``serve.cv``, ``serve.seed`` and ``serve.slo_s`` in the grid make every
    point a serving run (cosim.serve.run) and its row the serving summary.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers: must be a whole number >= 1, got {workers!r}")
    check_ray_address(ray_address, executor)
    points = grid_points(grid)
    seen: dict[str, str] = {}
    serving = any(path in SERVE_PATHS for path in grid)
    for path in grid:  # a path typo fails now; a bad value fails its points only
        if path.startswith("serve."):
            check_serve_value(path, grid[path][0])
            continue
        full = scn.canonical_path(path)
        if full in seen:
            raise ConfigError(f"sweep: {path!r} and {seen[full]!r} are the same parameter ({full})")
        seen[full] = path
    folder = writable_folder(out, "--out") if out is not None else None
    if len(trace.problems) <= HOLD_FOR_REUSE:
        trace = trace.in_memory()  # every point replays it: draw or parse each problem once
    journal = Journal(folder, sweep_fingerprint(scn, trace))
    todo = [p for p in points if journal.finished(point_key(p)) is None]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(points), initial=len(points) - len(todo), unit="point", desc="sweep")
    try:
        results = (local_results(scn, trace, todo, workers) if executor == "local"
                   else ray_results(scn, trace, todo, workers, ray_address))
        for row in results:
            journal.add(point_key({k: row[k] for k in grid}), row)
            if bar:
                bar.update(1)
                bar.set_postfix_str(row["status"])
    finally:
        if bar:
            bar.close()
        if journal.path is not None:
            journal.reload()  # what the table holds is exactly what the journal holds
        table = SweepTable(list(grid), serving=serving)
        for p in points:
            row = journal.done.get(point_key(p))
            if row:
                table.rows.append({k: v for k, v in row.items() if k != "_key"})
        if folder is not None:
            table.write(folder)
    return table
