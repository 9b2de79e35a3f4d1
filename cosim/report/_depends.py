"""The report's "What the numbers depend on": for the headline system's speedup and energy
per token in each config, the five estimates that move them most over their plausible
ranges, and the band those five give together, beside the sampling interval.

Method: one at a time. Every estimate with a declared range is set to each end of it
with the others at their values (2k + 1 simulations of the system and the baseline), on
the first PROBLEMS problems of the sweeps' dataset, the same draws at every point; the
five largest swings rank them, and the five set together at the ends that push the figure
down, then up, give the band. A global method (Morris, Sobol: `cosim sensitivity`) needs
tens of points per factor; this costs two, keeps `cosim report` fast on two cores, and
ranks correctly wherever the figure is monotone in each estimate, as it is here (times
add up along the critical path). What it leaves out, interactions between estimates, is
in the band: the five are moved together and simulated, not added up."""

from __future__ import annotations

from typing import Any, Callable

from .. import trace as traces
from ..config.scenario import load_scenario
from ..uncertainty._analysis import one_at_a_time
from ..uncertainty._factors import describe_range, factors
from ..uncertainty._sensitivity import RATIO, Model, PointRunner
from . import _intervals
from .._sweep._journal import point_key

SYSTEM = _intervals.HEADLINE
DATASET = "math500"
PROBLEMS = 50  # at most; the report's own count when it is smaller
TOP = 5
WORKERS = 2
METRICS = {"speedup": (f"speedup over {_intervals.BASELINE}", "{:.3f}"), "energy_j_per_token": ("J per final-chain token",
                                                                                       "{:.2f}")}
STEPS = 2  # one per config


def _band(runner: PointRunner, nominal: dict[str, float], top: list[dict[str, Any]], metric: str) -> list[float]:
    """The figure with the top estimates all at the ends that push it down, then all up."""
    down = {**nominal, **{t["name"]: (t["low"] if t["at_low"] <= t["at_high"] else t["high"]) for t in top}}
    up = {**nominal, **{t["name"]: (t["high"] if t["at_low"] <= t["at_high"] else t["low"]) for t in top}}
    runner([down, up])
    return [runner.rows[point_key(down)][metric], runner.rows[point_key(up)][metric]]


def depends(problems: int, seed: int, tick: Callable[[str], None]) -> dict[str, Any]:
    count = min(problems, PROBLEMS)
    out: dict[str, Any] = {"system": SYSTEM, "dataset": DATASET, "problems": count, "top": TOP, "configs": []}
    for config in (1, 2):
        out["configs"].append(depends_in(config, count, seed))
        tick(f"what the numbers depend on, config {config}")
    return out


def depends_in(config: int, count: int, seed: int) -> dict[str, Any]:
    """One config's entry: for each metric, the figure as built, the top estimates and the band."""
    profile = traces.load_profile(DATASET)
    scn, base = load_scenario(SYSTEM, config), load_scenario(RATIO["speedup"].baseline, config)
    chosen = factors(scn, base, profile, estimates_only=True)
    trace = traces.generate(profile, count, seed, backtracking=scn.backtracking, config=config).in_memory()
    model = Model(scn, base, tuple(chosen), profile, count, seed, scn.backtracking, ratio=RATIO["speedup"])
    runner = PointRunner(model, trace, "speedup", WORKERS, "local", None, None, False)
    points = one_at_a_time(chosen)
    runner(points)
    rows = [runner.rows[point_key(p)] for p in points]
    entry: dict[str, Any] = {"config": config, "estimates": len(chosen), "metrics": {}}
    for metric in METRICS:
        nominal = rows[0][metric]
        swings = []
        for i, f in enumerate(chosen):
            at_low, at_high = rows[1 + 2 * i][metric], rows[2 + 2 * i][metric]
            swings.append({"name": f.name, "range": describe_range(f), "low": f.low, "high": f.high,
                           "at_low": at_low, "at_high": at_high, "declared": f.where,
                           "swing": max(abs(at_low - nominal), abs(at_high - nominal))})
        swings.sort(key=lambda s: (-s["swing"], s["name"]))
        top = swings[:TOP]
        entry["metrics"][metric] = {"nominal": nominal, "top": top, "band": _band(runner, points[0], top, metric)}
    return entry


def markdown(found: dict[str, Any], records: list[dict[str, Any]], problems: int) -> list[str]:
    n = found["problems"]
    lines = ["## What the numbers depend on", "",
             f"A figure rests on its sampling (the intervals above, from the {problems} problems) and on the "
             "parameters that are estimates (each declares a plausible range beside its reasoning in `cosim/data`). "
             f"Here, for {found['system']}'s headline figures, every estimate with a range is set to each end of it, "
             f"the others at their values, on {n} {found['dataset']} problems (the same draws at every point: a "
             "dataset-profile estimate draws them again from the same seed); the five that move the figure most, "
             "then the band those five give when they are set together at the ends that push the figure down and "
             "up. One at a time costs two simulations per estimate and keeps `cosim report` fast; it ranks "
             "correctly where the figure is monotone in each estimate, and the band is simulated, so it includes "
             "what the five do together. `cosim sensitivity` gives Morris or Sobol indices over every range.", ""]
    for entry in found["configs"]:
        c = entry["config"]
        headline = next(r for r in records if (r["system"], r["dataset"], r["config"]) == (found["system"],
                                                                                            found["dataset"], c))
        lines += [f"### Config {c} ({entry['estimates']} estimates with a range)", "",
                  f"| figure | value [sampling 95%, {problems} problems] | band from its five estimates "
                  f"({n} problems) |", "|---|---|---|"]
        for metric, (label, fmt) in METRICS.items():
            m = entry["metrics"][metric]
            low, high = sorted(m["band"])
            lines.append(f"| {label} | {_intervals.cell(headline, metric, fmt)} | {fmt.format(low)} to "
                         f"{fmt.format(high)} ({100 * (low / m['nominal'] - 1):+.0f}% to "
                         f"{100 * (high / m['nominal'] - 1):+.0f}% of {fmt.format(m['nominal'])}) |")
        heads = " | ".join(f"{label}: estimate | range | at low | at high" for label, _ in METRICS.values())
        lines += ["", f"| rank | {heads} |", "|---|" + "---|---|---|---|" * len(METRICS)]
        for rank in range(found["top"]):
            cells = []
            for metric, (_, fmt) in METRICS.items():
                t = entry["metrics"][metric]["top"][rank]
                cells.append(f"`{t['name']}` | {t['range']} | {fmt.format(t['at_low'])} | {fmt.format(t['at_high'])}")
            lines.append(f"| {rank + 1} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
