"""The report's accuracy side: each config's own traces (its target refines the
rejected steps), the accuracy of RSD and BRSD per dataset and config, and the
accuracy-latency trade-off as the acceptance threshold moves.

Accuracy here is the expected share of right answers of the drawn problems:
the mean of each problem's probability of a right answer given the steps its
final chain keeps. The labels drawn from those probabilities (which the
simulator's ``accuracy`` metric counts) add sampling noise of a few points at a
few hundred problems, more than the differences shown.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _intervals
from .. import trace as traces
from ..engine._workflow import simulate
from ..config.scenario import Scenario, load_scenario

MODES = ("rsd", "brsd")
SWEEP_DATASET = "math500"
SWEEP_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
# The systems of the trade-off figure: built-in scenarios; the first is the one the others'
# latencies are compared with, paired.
SWEEP_SYSTEMS = ("gpu-baseline", "gpu-stepahead", "heteroreason-u280-300")


@dataclass(frozen=True)
class Workload:
    """A drawn trace, held, with its expected accuracy and what it did."""

    trace: traces.Trace
    accuracy: float          # mean probability of a right answer
    label_accuracy: float    # share of drawn labels that are right
    reject_rate: float
    backtracks: float        # per problem
    # Per problem, for the intervals: probability of a right answer, drafts, rejected drafts, backtracks.
    per_problem: np.ndarray | None = None

    def intervals(self) -> dict[str, list[float]]:
        p = self.per_problem
        assert p is not None
        return {"accuracy": _intervals.mean_interval(p[:, 0]),
                "reject_rate": _intervals.ratio_interval(p[:, 2], p[:, 1]),
                "backtracks_per_problem": _intervals.mean_interval(p[:, 3])}


def draw(dataset: str, problems: int, seed: int, config: int, backtracking: bool = True,
         accept_threshold: float | None = None) -> Workload:
    header = traces.TraceHeader() if accept_threshold is None else traces.TraceHeader(accept_threshold=accept_threshold)
    generated = traces.generate(dataset, problems, seed, backtracking=backtracking, header=header, config=config)
    drawn = [generated.problems.drawn(i) for i in range(problems)]
    events = [e for d in drawn for e in d.problem.events]
    drafts = [e for e in events if isinstance(e, traces.Draft)]
    per_problem = np.array([[d.correct_probability, sum(isinstance(e, traces.Draft) for e in d.problem.events),
                             sum(isinstance(e, traces.Draft) and not e.accepted for e in d.problem.events),
                             sum(isinstance(e, traces.Backtrack) for e in d.problem.events)] for d in drawn],
                           dtype=float)
    return Workload(traces.Trace(generated.header, [d.problem for d in drawn]),
                    statistics.fmean(d.correct_probability for d in drawn),
                    statistics.fmean(d.problem.answer_correct for d in drawn),
                    sum(not e.accepted for e in drafts) / len(drafts),
                    sum(isinstance(e, traces.Backtrack) for e in events) / problems, per_problem)


def workload_record(dataset: str, config: int, mode: str, w: Workload) -> dict[str, Any]:
    return {"dataset": dataset, "config": config, "mode": mode, "accuracy": w.accuracy,
            "label_accuracy": w.label_accuracy, "reject_rate": w.reject_rate, "backtracks_per_problem": w.backtracks,
            "intervals": w.intervals()}


def gain_record(dataset: str, config: int, workloads: dict[str, Workload]) -> dict[str, Any]:
    """BRSD's accuracy gain over RSD on the same drawn problems, with its paired interval."""
    brsd, rsd = workloads["brsd"], workloads["rsd"]
    assert brsd.per_problem is not None and rsd.per_problem is not None
    return {"dataset": dataset, "config": config, "gain": brsd.accuracy - rsd.accuracy,
            "interval": _intervals.difference_interval(brsd.per_problem[:, 0], rsd.per_problem[:, 0])}


def threshold_sweep(problems: int, seed: int, tick: Callable[[str], None]) -> dict[str, Any]:
    """Latency and accuracy of RSD and BRSD on the sweep's systems, per config and
    acceptance threshold (the backtracking threshold stays at its default)."""
    points = []
    for config in (1, 2):
        scenarios: dict[str, Scenario] = {name: load_scenario(name, config) for name in SWEEP_SYSTEMS}
        for threshold in SWEEP_THRESHOLDS:
            for mode in MODES:
                w = draw(SWEEP_DATASET, problems, seed, config, mode == "brsd", threshold)
                drawn = w.intervals()
                results = {}
                for name, scn in scenarios.items():
                    results[name] = simulate(scn, w.trace)
                    tick(f"threshold {threshold} config {config} {mode} {name}")
                # Paired: each system's speedup over the first on the same draws, from one resampling.
                found = _intervals.compare(results, SWEEP_SYSTEMS[0], metrics=("latency_s",)).metrics
                for name, result in results.items():
                    points.append({"config": config, "threshold": threshold, "mode": mode, "system": name,
                                   "latency_s": result.summary["latency_s"], "accuracy": w.accuracy,
                                   "speedup": found[name]["speedup"].estimate,
                                   "reject_rate": w.reject_rate, "backtracks_per_problem": w.backtracks,
                                   "intervals": {"latency_s": found[name]["latency_s"].to_list(),
                                                 "speedup": found[name]["speedup"].to_list(),
                                                 "accuracy": drawn["accuracy"], "reject_rate": drawn["reject_rate"]}})
    return {"dataset": SWEEP_DATASET, "thresholds": list(SWEEP_THRESHOLDS), "points": points}


def sweep_runs() -> int:
    return 2 * len(SWEEP_THRESHOLDS) * len(MODES) * len(SWEEP_SYSTEMS)


def accuracy_markdown(records: list[dict[str, Any]], datasets: tuple[str, ...]) -> list[str]:
    """The accuracy table in the shape of the paper's Table III: a row per dataset
    and an average row; per config, RSD, BRSD and BRSD's gain in points."""
    def record(dataset: str, config: int, mode: str) -> dict[str, Any]:
        return next(r for r in records if (r["dataset"], r["config"], r["mode"]) == (dataset, config, mode))

    def percent(r: dict[str, Any]) -> str:
        return _intervals.cell(r, "accuracy", "{:.1f}", scale=100, unit="%")

    lines = ["| dataset | C1 RSD | C1 BRSD | C1 gain | C2 RSD | C2 BRSD | C2 gain |", "|---|---|---|---|---|---|---|"]
    rows = {d: [record(d, c, m) for c in (1, 2) for m in MODES] for d in datasets}
    for name, (r1, b1, r2, b2) in rows.items():
        lines.append(f"| {name} | {percent(r1)} | {percent(b1)} | {100 * (b1['accuracy'] - r1['accuracy']):+.1f} | "
                     f"{percent(r2)} | {percent(b2)} | {100 * (b2['accuracy'] - r2['accuracy']):+.1f} |")
    mean = [statistics.fmean(r[i]["accuracy"] for r in rows.values()) for i in range(4)]
    lines.append(f"| average | {mean[0]:.1%} | {mean[1]:.1%} | {100 * (mean[1] - mean[0]):+.1f} | {mean[2]:.1%} | "
                 f"{mean[3]:.1%} | {100 * (mean[3] - mean[2]):+.1f} |")
    return lines


def accuracy_section(report: dict[str, Any], datasets: tuple[str, ...]) -> list[str]:
    records = report["accuracy"]
    lines = ["## Accuracy: RSD and BRSD per config", "",
             "Expected share of right answers (mean over the problems of each one's probability of a right answer, "
             "given the quality of the steps its final chain keeps); every system replays the same traces, so "
             "accuracy depends on the config and the algorithm, not on the hardware. Gain: BRSD minus RSD, points.",
             "", *accuracy_markdown(records, datasets), "",
             "| dataset | config | RSD reject rate | BRSD reject rate | BRSD backtracks/problem |",
             "|---|---|---|---|---|"]
    for d in datasets:
        for c in (1, 2):
            rsd, brsd = (next(r for r in records if (r["dataset"], r["config"], r["mode"]) == (d, c, m)) for m in MODES)
            lines.append(f"| {d} | {c} | {_intervals.cell(rsd, 'reject_rate', '{:.3f}')} | "
                         f"{_intervals.cell(brsd, 'reject_rate', '{:.3f}')} | "
                         f"{_intervals.cell(brsd, 'backtracks_per_problem', '{:.3f}')} |")
    sweep = report["threshold_sweep"]
    lines += ["", f"## Accuracy and latency as the acceptance threshold moves ({sweep['dataset']})", "",
              "| config | threshold | mode | reject rate | accuracy | "
              + " | ".join(f"{name} latency s" for name in SWEEP_SYSTEMS) + " |",
              "|---|---|---|---|---|" + "---|" * len(SWEEP_SYSTEMS)]
    for config in (1, 2):
        for threshold in sweep["thresholds"]:
            for mode in MODES:
                group = [p for p in sweep["points"] if (p["config"], p["threshold"], p["mode"]) == (config, threshold,
                                                                                                      mode)]
                latencies = " | ".join(_intervals.cell(next(p for p in group if p["system"] == s), "latency_s",
                                                       "{:.2f}") for s in SWEEP_SYSTEMS)
                lines.append(f"| {config} | {threshold} | {mode.upper()} | "
                             f"{_intervals.cell(group[0], 'reject_rate', '{:.3f}')} | "
                             f"{_intervals.cell(group[0], 'accuracy', '{:.1f}', scale=100, unit='%')} | {latencies} |")
    return lines
