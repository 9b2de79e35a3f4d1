"""The paper-style evaluation on built-in defaults: four datasets x Config 1
and 2 x the systems compared and their ablations, two sweeps, tables
and figures, written as report.md, report.json and PNGs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

from . import _design_space, _serving, _target_alone
from . import _accuracy as accuracy
from ... import trace as traces
from ...outputs._atomic import write_atomically
from ..._sweep import sweep
from ..._workflow import simulate
from ...result import METRICS
from ...config.scenario import load_scenario

DATASETS = ("gsm8k", "math500", "gaokao2023en", "olympiadbench")
CONFIGS = (1, 2)
# The systems the report compares, in its order: built-in scenarios (cosim/data/scenarios),
# each run on both configs; a forward-only one (algorithm: rsd) replays the RSD run.
SYSTEMS = ("gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
           "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-nobacktrack", "heteroreason-jetson",
           "heteroreason-vanilla")
SWEEP_BANDWIDTH = [2, 4, 8, 16, 32]          # GB/s raw, per direction
SWEEP_CLOCK = [150, 200, 250, 300, 350, 400]  # MHz


def run_report(problems: int = 300, seed: int = 1, out: str | Path = "out/report",
               progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
    from ._plots import write_figures
    from ._plots_accuracy import write_accuracy_figures

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    total = (len(DATASETS) * len(CONFIGS) * (len(SYSTEMS) + 1) + len(SWEEP_BANDWIDTH) + len(SWEEP_CLOCK)
             + accuracy.sweep_runs() + _design_space.STEPS + _serving.STEPS)
    done = 0

    def tick(label: str) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total, label)

    records: list[dict[str, Any]] = []
    alone: list[dict[str, Any]] = []
    accuracy_records: list[dict[str, Any]] = []
    for dataset in DATASETS:
        for config in CONFIGS:
            # Each config's own traces (its target refines), replayed by every system: drawn once and held.
            workloads = {mode: accuracy.draw(dataset, problems, seed, config, mode == "brsd")
                         for mode in accuracy.MODES}
            accuracy_records += [accuracy.workload_record(dataset, config, m, w) for m, w in workloads.items()]
            brsd, rsd = workloads["brsd"].trace, workloads["rsd"].trace
            baseline = None
            for name in SYSTEMS:
                scn = load_scenario(name, config)
                result = simulate(scn, brsd if scn.backtracking else rsd)
                baseline = baseline or result
                summary = result.with_baseline(baseline).summary
                records.append({"dataset": dataset, "config": config, "system": name,
                                **{m: summary[m] for m in METRICS}, "energy_j": summary["energy_j"],
                                "problems": summary["problems"]})
                tick(f"{dataset} config {config} {name}")
            alone.append(_target_alone.record(dataset, config, brsd))
            tick(f"{dataset} config {config} target alone")
    sweeps = _sweeps(problems, seed, tick)
    space = _design_space.design_space(problems, seed, tick)
    served = _serving.serving(seed, tick)
    report = {"problems": problems, "seed": seed, "records": records, "sweeps": sweeps, "design_space": space,
              "serving": served, "target_alone": alone,
              "systems": {name: load_scenario(name).description for name in SYSTEMS}, "accuracy": accuracy_records,
              "threshold_sweep": accuracy.threshold_sweep(problems, seed, tick)}
    write_atomically(folder / "report.json", json.dumps(report, indent=1))
    figures = (write_figures(report, folder) + write_accuracy_figures(report, folder)
               + [_design_space.figure(space, folder / "design_space.png"),
                  _serving.figure(served, folder / "serving.png")])
    write_atomically(folder / "report.md", _markdown(report, figures, time.monotonic() - started))
    report["figures"] = [str(f) for f in figures]
    return report


def _sweeps(problems: int, seed: int, tick: Callable[[str], None]) -> dict[str, Any]:
    workload = traces.generate("math500", problems, seed).in_memory()
    base = simulate(load_scenario("gpu-baseline"), workload).summary["latency_s"]
    out: dict[str, Any] = {}
    for key, path, values, system in (("pcie_bandwidth_gbps", "pcie.bandwidth_gbps", SWEEP_BANDWIDTH,
                                       "heteroreason-u280-300"),
                                      ("fpga_clock_mhz", "fpga.clock_mhz", SWEEP_CLOCK, "heteroreason-u280-200")):
        table = sweep(load_scenario(system), workload, {path: values})
        rows = []
        for row in table.rows:
            ok = row["status"] == "ok"
            rows.append({"value": row[path], "status": row["status"], "error": row["error"],
                         **({m: row[m] for m in METRICS} if ok else {}),
                         "speedup": base / row["latency_s"] if ok else None})
            tick(f"sweep {path}={row[path]}")
        out[key] = {"system": system, "dataset": "math500", "config": 1, "parameter": path, "rows": rows}
    return out


def _table(records: list[dict[str, Any]], metric: str, fmt: str) -> list[str]:
    columns = [(d, c) for d in DATASETS for c in CONFIGS]
    lines = ["| system | " + " | ".join(f"{d} C{c}" for d, c in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for name in SYSTEMS:
        cells = []
        for d, c in columns:
            rec = next(r for r in records if r["system"] == name and r["dataset"] == d and r["config"] == c)
            cells.append(fmt.format(rec[metric]))
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
        f"gpu-baseline's mean latency over the system's. Generated by `cosim report` in {elapsed_s:.0f} s.",
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
        *_table(records, "energy_j_per_token", "{:.2f}"),
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
            lines.append(f"| {r['dataset']} | {r['config']} | {r['breakdown_draft'] / total:.1%} | "
                         f"{r['breakdown_prm'] / total:.1%} | {r['breakdown_target'] / total:.1%} |")
    for key, sw in report["sweeps"].items():
        lines += ["", f"## Sweep of {sw['parameter']} ({sw['system']}, {sw['dataset']}, Config {sw['config']})", "",
                  "| value | latency s | speedup | comm share | status |", "|---|---|---|---|---|"]
        for row in sw["rows"]:
            if row["status"] == "ok":
                lines.append(f"| {row['value']} | {row['latency_s']:.3f} | {row['speedup']:.2f} | "
                             f"{row['comm_share']:.4f} | ok |")
            else:
                lines.append(f"| {row['value']} | | | | {row['error']} |")
    lines += ["", *accuracy.accuracy_section(report, DATASETS)]
    lines += ["", *_target_alone.markdown(report)]
    lines += ["", *_design_space.markdown(report["design_space"])]
    lines += ["", *_serving.markdown(report["serving"])]
    lines += ["", "## Figures", ""]
    for figure in figures:
        lines += [f"![{figure.stem}]({figure.name})", ""]
    lines += ["All numbers come from the SystemC models with the parameters in `cosim/data` (each cites its "
              "source or says it is an estimate); `report.json` holds every metric of every record."]
    return "\n".join(lines) + "\n"
