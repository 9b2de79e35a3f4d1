"""``cosim sensitivity``: the sensitivity of one of a scenario's figures to the plausible
ranges of the parameters it depends on. Each point of the analysis is a simulation of
the scenario with the factors' values set (and of the gpu-baseline with the same values,
for a speedup), on the same drawn problems (a profile factor draws them again from the
same seed, so only what it changes changes). Points run on local worker processes or on
Ray like a sweep's, and are journalled like them: a rerun skips the points it has."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .. import trace as traces
from .._sweep import HOLD_FOR_REUSE
from .._sweep._executors import EXECUTORS, check_ray_address, local_results, ray_results
from .._sweep._journal import Journal, point_key, row_problem
from ..config.scenario import Scenario, load_scenario
from ..errors import ConfigError, CosimError
from ..result import METRICS
from ..schema._rows import RATIOS, Ratio
from ._analysis import Analysis, analyse, check_design
from ._factors import Factor, apply, apply_profile, factors as find_factors
from ..engine._workflow import simulate
from ..outputs._atomic import writable_folder

# The metrics taken against a baseline (the speedup), by name (cosim/schema/_rows.py).
RATIO = {r.name: r for r in RATIOS}
EXTRA = ("energy_j", "final_tokens", "generated_tokens")


@dataclass(frozen=True)
class Model:
    """What a point needs: the scenario, its baseline and the ratio taken against it (for a
    speedup), the factors, and the recipe of the drawn workload (None: a trace file,
    replayed as it is)."""

    scenario: Scenario
    baseline: Scenario | None
    factors: tuple[Factor, ...]
    profile: Any = None
    problems: int = 0
    seed: int = 0
    backtracking: bool = True
    # The baseline's value of the ratio's mean with every factor at its value: a point that
    # moves only factors the baseline does not use (the FPGA's) needs no baseline run of its own.
    baseline_value: float | None = None
    ratio: Ratio | None = None


def check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ConfigError(f"--metric {metric}: not a metric; one of {', '.join(METRICS)}")


def run_point(model: Model, trace: traces.Trace, values: dict[str, float]) -> dict[str, Any]:
    """One point: the scenario (and baseline) with the factors' values; never raises for a bad
    point, it reports it."""
    row: dict[str, Any] = dict(values)
    try:
        if model.profile is not None and any(f.profile_field and values.get(f.name, f.nominal) != f.nominal
                                             for f in model.factors):
            profile = apply_profile(model.profile, list(model.factors), values)
            trace = _held(traces.generate(profile, model.problems, model.seed, backtracking=model.backtracking,
                                          config=model.scenario.config))
        result = simulate(apply(model.scenario, list(model.factors), values), trace)
        row.update({m: result.summary.get(m) for m in (*METRICS, *EXTRA) if m not in RATIO})
        if model.baseline is not None and model.ratio is not None:
            r = model.ratio
            moved = any(values.get(f.name, f.nominal) != f.nominal and (f.baseline_paths or f.profile_field)
                        for f in model.factors)
            if moved or model.baseline_value is None:
                base = simulate(apply(model.baseline, list(model.factors), values, baseline=True), trace)
                row[f"baseline_{r.of}"] = base.summary[r.of]
            else:
                row[f"baseline_{r.of}"] = model.baseline_value
            row[r.name] = r.value(row[f"baseline_{r.of}"], result.summary[r.of])
        row.update(status="ok", error=None)
    except CosimError as exc:
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    return row


def _held(trace: traces.Trace) -> traces.Trace:
    """The workload held in memory when every point replays it and it is small enough, as a
    sweep holds its trace; a longer one is drawn or read again at each point, so memory
    never grows with --problems."""
    return trace.in_memory() if len(trace.problems) <= HOLD_FOR_REUSE else trace


def fingerprint(model: Model, trace: traces.Trace) -> str:
    """What the journalled points belong to: every resolved parameter of both scenarios and the
    workload (its recipe and every line)."""
    digest = hashlib.sha256(model.scenario.fingerprint().encode())
    digest.update((model.baseline.fingerprint() if model.baseline else "-").encode())
    digest.update(repr((model.profile, model.problems, model.seed, model.backtracking)).encode())
    for line in trace.lines():
        digest.update(line.encode())
    return digest.hexdigest()[:16]


class PointRunner:
    """Evaluates the analysis's points: each distinct point once, journalled, on the executor."""

    def __init__(self, model: Model, trace: traces.Trace, metric: str, workers: int, executor: str,
                 ray_address: str | None, folder: Path | None, progress: bool):
        if model.baseline is not None and model.ratio is not None and model.baseline_value is None:
            nominal = simulate(model.baseline, trace).summary[model.ratio.of]
            model = dataclasses.replace(model, baseline_value=nominal)
        self.model, self.trace, self.metric = model, trace, metric
        self.workers, self.executor, self.ray_address = workers, executor, ray_address
        # A row read back holds its point's factor values and, finished, the figure.
        names = [f.name for f in model.factors]
        self.journal = Journal(folder, fingerprint(model, trace), lambda row: row_problem(row, names, (metric,)))
        self.progress = progress
        self.rows: dict[str, dict[str, Any]] = {}

    def __call__(self, points: list[dict[str, float]]) -> list[float]:
        keys = [point_key(p) for p in points]
        distinct = {k: p for k, p in zip(keys, points)}
        todo = [p for k, p in distinct.items() if self.journal.finished(k) is None]
        bar = None
        if self.progress:
            bar = tqdm(total=len(distinct), initial=len(distinct) - len(todo), unit="point", desc="sensitivity")
        try:
            results = (local_results(self.model, self.trace, todo, self.workers, run_point)
                       if self.executor == "local" else
                       ray_results(self.model, self.trace, todo, self.workers, self.ray_address, run_point))
            for row in results:
                self.journal.add(point_key({k: row[k] for k in todo[0]}), row)
                if bar:
                    bar.update(1)
        finally:
            if bar:
                bar.close()
        failed = [self.journal.row(k) for k in distinct if self.journal.finished(k) is None]
        if failed:
            raise ConfigError(f"{len(failed)} of {len(distinct)} points failed, e.g. {failed[0].get('error')}; "
                              f"narrow the range of a factor (--range) or leave it out (--only)")
        self.rows = {k: self.journal.row(k) for k in distinct}
        return [self.rows[k][self.metric] for k in keys]


def sensitivity(scn: Scenario, metric: str = "latency_s", *, profile: Any = "math500", problems: int = 100,
                seed: int = 0, trace: traces.Trace | None = None, method: str = "auto", samples: int | None = None,
                ranges: list[str] = (), only: list[str] = (), workers: int = 1, executor: str = "local",
                ray_address: str | None = None, out: str | Path | None = None, progress: bool = False) -> Analysis:
    """The factors of ``scn`` ranked by their effect on ``metric`` over their plausible ranges.

    The workload is ``trace`` as given, or ``problems`` drawn from ``profile`` with ``seed`` (then
    the profile's ranged parameters are factors too). ``ranges`` adds or narrows factors
    (``NAME=LOW:HIGH``), ``only`` keeps the factors matching its patterns. With ``out``, points are
    journalled in ``out/points.jsonl`` as they finish and a rerun skips them."""
    check_metric(metric)
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers: must be a whole number >= 1, got {workers!r}")
    check_ray_address(ray_address, executor)
    ratio = RATIO.get(metric)
    baseline = load_scenario(ratio.baseline, scn.config) if ratio is not None else None
    model_profile = traces.load_profile(profile) if trace is None else None
    chosen = find_factors(scn, baseline, model_profile, list(ranges), list(only))
    check_design(chosen, method, samples)  # before the workload is drawn, the folder's journal or any run
    if trace is None:
        backtracking = scn.backtracking
        workload = _held(traces.generate(model_profile, problems, seed, backtracking=backtracking,
                                         config=scn.config))
    else:
        backtracking, workload = trace.header.backtracking, _held(trace)
    model = Model(scn, baseline, tuple(chosen), model_profile, problems, seed, backtracking, ratio=ratio)
    folder = writable_folder(out, "--out") if out is not None else None
    runner = PointRunner(model, workload, metric, workers, executor, ray_address, folder, progress)
    try:
        analysis = analyse(metric, chosen, runner, method, samples, seed)
    finally:
        runner.journal.close()  # the folder's lock, held while the points run
    analysis.notes.update(scenario=scn.name, config=scn.config, baseline=baseline.name if baseline else None,
                          workload=(f"trace ({len(workload)} problems)" if trace is not None else
                                    f"{problems} problems from profile {model_profile.name} (seed {seed})"))
    return analysis
