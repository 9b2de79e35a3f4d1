"""The paper-style evaluation on built-in defaults: four datasets x Config 1
and 2 x the systems compared and their ablations, two sweeps, tables
and figures, written as report.md, report.json and PNGs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import _accuracy as accuracy, _at_scale, _depends, _design_space, _intervals, _serving, _sweeps, _target_alone
from . import _speculation, _speculation_serving
from ._systems import SYSTEMS
from ..outputs._atomic import write_atomically
from ..engine._workflow import simulate
from ..result import METRICS
from ..config.scenario import load_scenario
from ..uncertainty._power_band import band as power_band

DATASETS = ("gsm8k", "math500", "gaokao2023en", "olympiadbench")
CONFIGS = (1, 2)


def run_report(problems: int = 300, seed: int = 1, out: str | Path = "out/report",
               progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
    from ._figures import write_figures  # lazy: matplotlib, loaded only when a figure is drawn

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    total = (len(DATASETS) * len(CONFIGS) * (len(SYSTEMS) + 1) + _at_scale.steps(DATASETS)
             + _speculation.steps(DATASETS) + _sweeps.STEPS + accuracy.sweep_runs() + _design_space.STEPS
             + _serving.STEPS + _speculation_serving.STEPS + _depends.STEPS)
    done = 0

    def tick(label: str) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total, label)

    records: list[dict[str, Any]] = []
    alone: list[dict[str, Any]] = []
    accuracy_records: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []  # per trace: the latency ratio of every pair of systems, paired
    gains: list[dict[str, Any]] = []  # per trace: BRSD's accuracy gain over RSD, paired
    scale: list[dict[str, Any]] = []  # per dataset: the systems with targets that span GPUs
    speculation: list[dict[str, Any]] = []  # per dataset: every kind of speculation against the target alone
    for dataset in DATASETS:
        for config in CONFIGS:
            runs = compare_systems(dataset, config, problems, seed, tick)
            workloads = runs.workloads
            accuracy_records += [accuracy.workload_record(dataset, config, m, w) for m, w in workloads.items()]
            gains.append(accuracy.gain_record(dataset, config, workloads))
            records += runs.records
            pairs.append({"dataset": dataset, "config": config, "pairs": runs.pairs})
            runs.records[0]["intervals"].update(_intervals.busy_shares(runs.results[SYSTEMS[0]]))
            alone.append(_target_alone.record(dataset, config, workloads["brsd"].trace, runs.results))
            tick(f"{dataset} config {config} target alone")
            if config == _at_scale.CONFIG:
                scale.append(_at_scale.record(dataset, workloads["brsd"].trace, runs.results, tick))
            if config == _speculation.CONFIG:
                speculation.append(_speculation.record(dataset, workloads["brsd"].trace, runs.results, tick,
                                                       workloads["rsd"].trace))
    sweeps = _sweeps.sweeps(problems, seed, tick)
    space = _design_space.design_space(problems, seed, tick)
    served = _serving.serving(seed, tick)
    at_load = _speculation_serving.serving(seed, tick)
    depends = _depends.depends(problems, seed, tick)
    report = {"problems": problems, "seed": seed, "records": records, "sweeps": sweeps, "design_space": space,
              "serving": served, "intervals": _intervals.method_record(), "pairs": pairs, "accuracy_gains": gains,
              "depends": depends, "target_alone": alone, "at_scale": scale, "speculation": speculation,
              "speculation_at_load": at_load,
              "systems": {name: load_scenario(name).description for name in SYSTEMS}, "accuracy": accuracy_records,
              "threshold_sweep": accuracy.threshold_sweep(problems, seed, tick)}
    write_atomically(folder / "report.json", json.dumps(report, indent=1))
    figures = write_figures(report, folder)
    write_atomically(folder / "report.md", _markdown(report, figures, time.monotonic() - started))
    report["figures"] = [str(f) for f in figures]
    return report


@dataclass(frozen=True)
class SystemRuns:
    """Every system of the report on one dataset and config."""

    workloads: dict[str, accuracy.Workload]  # by mode: the config's own RSD and BRSD traces
    results: dict[str, Any]                  # by system
    records: list[dict[str, Any]]            # per system: its metrics and their intervals (paired)
    pairs: list[dict[str, Any]]              # the latency ratio of every pair of systems, paired


def compare_systems(dataset: str, config: int, problems: int, seed: int,
                    tick: Callable[[str], None] = lambda label: None) -> SystemRuns:
    """Each config's own traces (its target refines), drawn once and held, replayed by every
    system (BRSD's by those that backtrack, RSD's by the others), with the intervals."""
    workloads = {mode: accuracy.draw(dataset, problems, seed, config, mode == "brsd") for mode in accuracy.MODES}
    brsd, rsd = workloads["brsd"].trace, workloads["rsd"].trace
    baseline = None
    group: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    for name in SYSTEMS:
        scn = load_scenario(name, config)
        trace = brsd if scn.backtracking else rsd
        result = simulate(scn, trace)
        baseline = baseline or result
        group[name] = result
        summary = result.with_baseline(baseline).summary
        power = power_band(scn, lambda s: simulate(s, trace), lambda r: r.summary["energy_j_per_token"])
        records.append({"dataset": dataset, "config": config, "system": name,
                        **{m: summary[m] for m in METRICS}, "energy_j": summary["energy_j"],
                        "problems": summary["problems"],
                        "power_band": {"energy_j_per_token": list(power) if power else None}})
        tick(f"{dataset} config {config} {name}")
    return SystemRuns(workloads, group, records, _intervals.attach(records, group, SYSTEMS[0]))


def _table(records: list[dict[str, Any]], metric: str, fmt: str, power: bool = False) -> list[str]:
    columns = [(d, c) for d in DATASETS for c in CONFIGS]
    lines = ["| system | " + " | ".join(f"{d} C{c}" for d, c in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for name in SYSTEMS:
        cells = []
        for d, c in columns:
            rec = next(r for r in records if r["system"] == name and r["dataset"] == d and r["config"] == c)
            cells.append(_intervals.cell(rec, metric, fmt) + (_intervals.power_cell(rec, metric, fmt) if power else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _markdown(report: dict[str, Any], figures: list[Path], elapsed_s: float) -> str:
    records = report["records"]
    lines = [
        "# HeteroReason co-simulation: evaluation on built-in defaults",
        "",
        f"{report['problems']} synthetic problems per dataset (seed {report['seed']}), drawn from the built-in "
        "dataset profiles for each config's target; every system replays that config's trace (the forward-only "
        "ablation replays the RSD run of the same draws). Config 1: 0.5B draft, 7B PRM, 7B target; Config 2: "
        "1.5B target. Speedup is the "
        f"{_intervals.BASELINE}'s mean latency over the system's. Generated by `cosim report` in {elapsed_s:.0f} s.",
        "",
        _intervals.method_note(),
        "",
        "## Systems",
        "",
        *[f"- `{name}`: {note}" for name, note in report["systems"].items()],
        "",
        "## Speedup over gpu-baseline",
        "",
        *_table(records, "speedup", "{:.2f}"),
        "",
        "## Mean end-to-end latency per problem (s)",
        "",
        *_table(records, "latency_s", "{:.2f}"),
        "",
        "## Energy per final-chain token (J)",
        "",
        _intervals.power_note(),
        "",
        *_table(records, "energy_j_per_token", "{:.2f}", power=True),
        "",
        "## Goodput (final-chain tokens/s)",
        "",
        *_table(records, "goodput_tok_s", "{:.1f}"),
        "",
        "## Stall ratio of the draft device",
        "",
        *_table(records, "stall_ratio", "{:.3f}"),
        "",
        "## Wasted energy share (energy above idle of discarded step-ahead drafts)",
        "",
        *_table(records, "wasted_energy_share", "{:.4f}"),
        "",
        "## Off-chain energy share (energy of every generated token that misses the final chain)",
        "",
        *_table(records, "offchain_energy_share", "{:.3f}"),
        "",
        "## gpu-baseline latency breakdown (share of busy time)",
        "",
        "| dataset | config | draft | PRM | target |",
        "|---|---|---|---|---|",
    ]
    for r in records:
        if r["system"] == "gpu-baseline":
            total = r["breakdown_draft"] + r["breakdown_prm"] + r["breakdown_target"]
            shares = {**r, **{f"busy_share_{p}": r[f"breakdown_{p}"] / total for p in ("draft", "prm", "target")}}
            lines.append(f"| {r['dataset']} | {r['config']} | " + " | ".join(
                _intervals.cell(shares, f"busy_share_{p}", "{:.1f}", 100, "%") for p in ("draft", "prm", "target"))
                + " |")
    lines += _sweeps.markdown(report["sweeps"])
    lines += ["", *accuracy.accuracy_section(report, DATASETS)]
    lines += ["", *_target_alone.markdown(report)]
    lines += ["", *_at_scale.markdown(report)]
    lines += ["", *_speculation.markdown(report)]
    lines += ["", *_speculation_serving.markdown(report["speculation_at_load"])]
    lines += ["", *_design_space.markdown(report["design_space"])]
    lines += ["", *_serving.markdown(report["serving"])]
    lines += ["", *_intervals.significance(report, DATASETS)]
    lines += ["", *_depends.markdown(report["depends"], records, report["problems"])]
    lines += ["", "## Figures", ""]
    for figure in figures:
        lines += [f"![{figure.stem}]({figure.name})", ""]
    lines += ["All numbers come from the SystemC models with the parameters in `cosim/data` (each cites its "
              "source or says it is an estimate); `report.json` holds every metric of every record."]
    return "\n".join(lines) + "\n"
