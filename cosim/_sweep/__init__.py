"""Parameter sweeps: the grid of points, run on local worker processes or on a Ray
cluster, with a journal so that a rerun skips finished points and a failed point is
recorded with its error while the others go on."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, Sequence

from tqdm import tqdm

from ..outputs._atomic import writable_folder
from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import Trace
from ._executors import EXECUTORS, check_ray_address, local_results, ray_results
from ._journal import JOURNAL, Journal, point_key, row_problem, sweep_fingerprint
from ._point import SERVE_PATHS, check_serve_value, run_point
from ._table import SweepTable

__all__ = ["EXECUTORS", "JOURNAL", "MAX_POINTS", "SweepTable", "check_points", "grid_points", "run_point", "sweep",
           "sweep_fingerprint"]

# The most points one sweep takes. Each point is a simulation of its own (a tenth of a
# second at the least, hours at most); a grid past this is a mistake more often than a
# plan, and its list of points alone would take memory. Split a larger one into sweeps.
MAX_POINTS = 10_000

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
    size = math.prod(len(values) for values in grid.values())
    if size > MAX_POINTS:
        shape = " x ".join(f"{len(v)} {p}" for p, v in grid.items())
        raise ConfigError(f"sweep: the grid has {size} points ({shape}), more than the {MAX_POINTS} one sweep "
                          f"takes; split it into sweeps, each into its own --out")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def check_paths(scn: Scenario, grid: dict[str, Sequence[Any]]) -> None:
    """Each path names a parameter, and no two name the same one."""
    seen: dict[str, str] = {}
    for path in grid:
        if path.startswith("serve."):
            check_serve_value(path, grid[path][0])
            continue
        full = scn.canonical_path(path)
        if full in seen:
            raise ConfigError(f"sweep: {path!r} and {seen[full]!r} are the same parameter ({full})")
        seen[full] = path


def check_points(scn: Scenario, grid: dict[str, Sequence[Any]]) -> None:
    """Every point of ``grid`` as its run will make it, its values applied together (so
    the order of the parameters never matters): ConfigError naming the first point that
    cannot run, before any runs. The command line checks its sweeps so; the API records
    such a point as failed and runs the others."""
    grid_points(grid)  # its size, first
    check_paths(scn, grid)
    scenario_paths = [p for p in grid if p not in SERVE_PATHS]
    for path in grid:
        if path in SERVE_PATHS or path.startswith("serve."):
            for value in grid[path]:
                try:
                    check_serve_value(path, value)
                except ConfigError as exc:
                    raise ConfigError(f"--set {path}={value}: {exc}") from None
    if not scenario_paths:
        return
    for point in grid_points({p: grid[p] for p in scenario_paths}):
        try:
            scn.with_values(point, given_as={p: f"--set {p}={v}" for p, v in point.items()})
        except ConfigError as exc:
            if len(point) == 1:
                raise
            others = ", ".join(f"{p}={v}" for p, v in point.items())
            raise ConfigError(f"sweep point {others}: {exc}") from None


def check_arrivals(grid: dict[str, Sequence[Any]], trace: Trace) -> None:
    """A serving sweep needs arrivals: drawn at ``serve.rate``, or the trace's own times."""
    if not any(path in SERVE_PATHS for path in grid) or "serve.rate" in grid:
        return
    if "serve.cv" in grid:
        raise ConfigError("--set serve.cv: the variation of drawn arrival times needs their rate; add "
                          "--set serve.rate=R (requests per second)")
    if trace.version() < 2:
        given = ", ".join(f"--set {p}" for p in grid if p in SERVE_PATHS)
        raise ConfigError(f"{given}: serving needs arrival times and the trace carries none; add --set "
                          f"serve.rate=R (requests per second), or give a --trace with arrival times")


def sweep(scn: Scenario, trace: Trace, grid: dict[str, Sequence[Any]], *, workers: int = 1,
          executor: str = "local", ray_address: str | None = None, out: str | Path | None = None,
          progress: bool = False) -> SweepTable:
    """Simulates every point of ``grid`` (parameter path -> values) on ``trace``.

    With ``out``, finished points go to ``out/points.jsonl`` as they finish (a
    rerun skips them; the sweep holds a lock on it while it runs) and the table to
    ``out/sweep.csv`` and ``out/sweep.parquet``. A point that cannot run is recorded
    with its error and the others go on (``check_points`` refuses such a grid first).
    ``serve.rate``, ``serve.cv``, ``serve.seed`` and ``serve.slo_s`` in the grid make every
    point a serving run (cosim.serve.run) and its row the serving summary.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers: must be a whole number >= 1, got {workers!r}")
    check_ray_address(ray_address, executor)
    points = grid_points(grid)
    serving = any(path in SERVE_PATHS for path in grid)
    check_paths(scn, grid)  # a path typo fails now; a bad value fails its points only
    check_arrivals(grid, trace)
    folder = writable_folder(out, "--out") if out is not None else None
    if len(trace.problems) <= HOLD_FOR_REUSE:
        trace = trace.in_memory()  # every point replays it: draw or parse each problem once
    # A row read back must hold its point's values and, finished, every figure of the table.
    figures = (*SweepTable(list(grid), serving=serving).metrics, "wall_s")
    journal = Journal(folder, sweep_fingerprint(scn, trace), lambda row: row_problem(row, list(grid), figures))
    todo = [p for p in points if journal.finished(point_key(p)) is None]
    bar = None
    if progress:
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
        try:
            if journal.path is not None:
                journal.reload()  # what the table holds is exactly what the journal holds
            table = SweepTable(list(grid), serving=serving)
            for p in points:
                row = journal.row(point_key(p))
                if row:
                    table.rows.append({k: v for k, v in row.items() if k != "_key"})
            if folder is not None:
                table.write(folder)
        finally:
            journal.close()  # the folder's lock, held until its table is written
    return table
