"""Parameter sweeps: the grid of points, run on local worker processes or on a
Ray cluster, with a journal so that a rerun skips finished points and a failed
point is recorded with its error while the others go on."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ._atomic import writable_folder, write_atomically
from ._isolation import native
from .errors import ConfigError, CosimError
from .result import METRICS
from .scenario import Scenario
from .trace import FileProblems, Trace

JOURNAL = "points.jsonl"
EXECUTORS = ("local", "ray")
# A sweep replays its trace at every point. Up to this many problems (tens of MB)
# the trace is held in memory once; a longer one is drawn or read again per point,
# which costs time (about 0.2 ms a generated problem) instead of memory.
HOLD_FOR_REUSE = 20_000
_EXTRA_COLUMNS = ("problems", "energy_j", "final_tokens", "generated_tokens")


@dataclass
class SweepTable:
    """One row per point: the swept values, ``status`` (ok or error), ``error`` and every metric."""

    parameters: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        return [*self.parameters, "status", "error", *METRICS, *_EXTRA_COLUMNS, "wall_s"]

    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["status"] != "ok"]

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in self.columns})
        return out.getvalue()

    def write(self, folder: Path) -> dict[str, Path]:
        """sweep.csv and sweep.parquet, each written whole or not at all."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        csv_path = write_atomically(folder / "sweep.csv", self.to_csv())
        columns = {}
        for c in self.columns:
            values = [_plain(r.get(c)) for r in self.rows]
            kind = _arrow_type(values)
            if kind == pa.string():
                values = [None if v is None else str(v) for v in values]
            columns[c] = pa.array(values, type=kind)
        parquet = folder / "sweep.parquet"
        fd, tmp = tempfile.mkstemp(prefix=".sweep.parquet.", dir=folder)
        os.close(fd)
        try:
            pq.write_table(pa.table(columns), tmp)
            os.replace(tmp, parquet)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return {"csv": csv_path, "parquet": parquet}


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


def _arrow_type(values: list[Any]) -> Any:
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) < 2.0**53
                       for v in present):
        return pa.float64()
    return pa.string()  # text, or a column mixing numbers and quantities


def parse_value(text: str) -> Any:
    """A command-line value: a number, true/false, or text (a quantity such as '300 MHz')."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_set(option: str) -> tuple[str, list[Any]]:
    """``path=v1,v2,...`` from ``--set``."""
    path, sep, values = option.partition("=")
    if not sep or not path.strip() or not values.strip():
        raise ConfigError(f"--set {option!r}: write PATH=VALUE[,VALUE...], e.g. pcie.bandwidth_gbps=4,8,16")
    parsed = [parse_value(v) for v in values.split(",") if v.strip()]
    return path.strip(), parsed


def grid_points(grid: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    if not grid:
        raise ConfigError("a sweep needs at least one parameter with values")
    for path, values in grid.items():
        if not isinstance(values, list | tuple) or not values:
            raise ConfigError(f"sweep {path}: give a non-empty list of values")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def point_key(values: dict[str, Any]) -> str:
    return json.dumps(values, sort_keys=True, default=str)


def run_point(scn: Scenario, trace: Trace, values: dict[str, Any]) -> dict[str, Any]:
    """Simulates one point; never raises for a bad point, it reports it."""
    from ._workflow import simulate

    row: dict[str, Any] = dict(values)
    try:
        point = scn
        for path, value in values.items():
            point = point.with_value(path, value)
        result = simulate(point, trace)
        row.update({k: result.summary.get(k) for k in (*METRICS, *_EXTRA_COLUMNS)})
        row.update(status="ok", error=None, wall_s=result.wall_s)
    except (CosimError, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    return row


class _Journal:
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


def sweep_fingerprint(scn: Scenario, trace: Trace) -> str:
    digest = hashlib.sha256(scn.fingerprint().encode())
    for line in trace.lines():
        digest.update(line.encode())
    return digest.hexdigest()[:16]


def _local_results(scn: Scenario, trace: Trace, points: list[dict[str, Any]], workers: int) -> Iterable[dict]:
    if workers == 1:
        for values in points:
            yield run_point(scn, trace, values)
        return
    # Each point already simulates in a forked process of its own; threads here only wait on
    # those processes, so a killed one fails its point alone. The extension is loaded before
    # any thread starts, so no child ever has to import it.
    native()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cosim-sweep") as pool:
        pending: dict[Future, dict[str, Any]] = {pool.submit(run_point, scn, trace, v): v for v in points}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    values = pending.pop(future)
                    try:
                        yield future.result()
                    except Exception as exc:  # noqa: BLE001 - report the point, go on
                        yield {**values, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def _ray_results(scn: Scenario, trace: Trace, points: list[dict[str, Any]], workers: int,
                 address: str | None) -> Iterable[dict]:
    try:
        import ray
    except ImportError:
        raise ConfigError("the ray executor needs Ray: pip install 'heteroreason-cosim[ray]'") from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(run_point)
        # Nodes of a cluster may not see this machine's files: a trace read from a file
        # travels whole (a generated one travels as its recipe and is drawn there).
        if isinstance(trace.problems, FileProblems):
            trace = Trace(trace.header, list(trace.problems))
        scn_ref, trace_ref = ray.put(scn), ray.put(trace)
        pending = {remote.remote(scn_ref, trace_ref, v): v for v in points}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                values = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a lost task: report the point, go on
                    yield {**values, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        if started:
            ray.shutdown()


def sweep(scn: Scenario, trace: Trace, grid: dict[str, Sequence[Any]], *, workers: int = 1,
          executor: str = "local", ray_address: str | None = None, out: str | Path | None = None,
          progress: bool = False) -> SweepTable:
    """Simulates every point of ``grid`` (parameter path -> values) on ``trace``.

    With ``out``, finished points go to ``out/points.jsonl`` as they finish (a
    rerun skips them) and the table to ``out/sweep.csv`` and ``out/sweep.parquet``.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers: must be a whole number >= 1, got {workers!r}")
    points = grid_points(grid)
    seen: dict[str, str] = {}
    for path in grid:  # a path typo fails now; a bad value fails its points only
        full = scn.canonical_path(path)
        if full in seen:
            raise ConfigError(f"sweep: {path!r} and {seen[full]!r} are the same parameter ({full})")
        seen[full] = path
    folder = writable_folder(out, "--out") if out is not None else None
    if len(trace.problems) <= HOLD_FOR_REUSE:
        trace = trace.in_memory()  # every point replays it: draw or parse each problem once
    journal = _Journal(folder, sweep_fingerprint(scn, trace))
    todo = [p for p in points if journal.finished(point_key(p)) is None]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(points), initial=len(points) - len(todo), unit="point", desc="sweep")
    try:
        results = (_local_results(scn, trace, todo, workers) if executor == "local"
                   else _ray_results(scn, trace, todo, workers, ray_address))
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
        table = SweepTable(list(grid))
        for p in points:
            row = journal.done.get(point_key(p))
            if row:
                table.rows.append({k: v for k, v in row.items() if k != "_key"})
        if folder is not None:
            table.write(folder)
    return table
