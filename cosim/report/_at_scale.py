"""The report's "HeteroReason at scale": the paper's question, what an FPGA draft buys,
asked again for targets that span GPUs. For each target, its GPU baseline (draft and PRM
on GPUs of the target's kind, strictly sequential) and HeteroReason (the draft on a U280 at
200 MHz) replay the same problems: the paper's 7B on an RTX 3090 (the report's own runs),
Qwen3-32B on two H100 SXM GPUs (tensor parallel) and the MoE Qwen3-30B-A3B on two (expert
parallel). Config 1's traces: the verdicts and refinements are its 7B target's, the
timing the named target's."""

from __future__ import annotations

from typing import Any, Callable

from ..config.scenario import load_scenario
from ..engine._workflow import simulate
from ..uncertainty import compare
from ._intervals import cell

CONFIG = 1
# (what the target is, its GPU baseline, HeteroReason with it): built-in scenarios.
TARGETS = (
    ("7B on one RTX 3090 (the paper's)", "gpu-baseline", "heteroreason-u280-200"),
    ("Qwen3-32B on two H100s, tensor parallel", "gpu-baseline-qwen3-32b-tp2", "heteroreason-qwen3-32b-tp2"),
    ("Qwen3-30B-A3B (MoE) on two H100s, expert parallel", "gpu-baseline-qwen3-30b-a3b", "heteroreason-qwen3-30b-a3b"),
)
METRICS = ("latency_s", "energy_j_per_token")


def steps(datasets: tuple[str, ...]) -> int:
    """Runs it adds to the report (the 7B's are the report's own)."""
    return len(datasets) * 2 * (len(TARGETS) - 1)


def record(dataset: str, trace: Any, own: dict[str, Any], tick: Callable[[str], None]) -> dict[str, Any]:
    """One dataset: per target, both systems' latency and J/token and HeteroReason's speedup
    over its baseline, with intervals paired over the problems. ``own``: the report's results
    of its systems on the same trace (config 1's BRSD run)."""
    rows = []
    for label, base, hetero in TARGETS:
        results = {}
        for name in (base, hetero):
            if name in own:
                results[name] = own[name]
            else:
                results[name] = simulate(load_scenario(name, CONFIG), trace)
                tick(f"{dataset} at scale {name}")
        found = compare(results, base, metrics=METRICS)
        rows.append({"target": label, "baseline": base, "system": hetero,
                     **{f"{m}_{side}": results[name].summary[m] for side, name in (("baseline", base),
                                                                                 ("system", hetero))
                        for m in METRICS},
                     "speedup": found.metrics[hetero]["speedup"].estimate,
                     "intervals": {"speedup": found.metrics[hetero]["speedup"].to_list(),
                                   **{f"{m}_{side}": found.metrics[name][m].to_list()
                                      for side, name in (("baseline", base), ("system", hetero)) for m in METRICS}}})
    return {"dataset": dataset, "config": CONFIG, "targets": rows}


def markdown(report: dict[str, Any]) -> list[str]:
    records = report["at_scale"]
    lines = ["## HeteroReason at scale: targets that span GPUs", "",
             "Each target with its GPU baseline (draft and PRM on GPUs of the target's kind, strictly sequential) "
             "and HeteroReason (the draft on a U280 at 200 MHz), on config 1's problems: the verdicts and "
             "refinements are its 7B target's, the timing the named target's (docs/hardware.md \"Parallel "
             "groups\", \"MoE models\"). Speedup: the baseline's mean latency over HeteroReason's.", "",
             "| dataset | target | baseline latency s | HeteroReason latency s | speedup | baseline J/token | "
             "HeteroReason J/token |", "|---|---|---|---|---|---|---|"]
    for r in records:
        for t in r["targets"]:
            lines.append(f"| {r['dataset']} | {t['target']} | {cell(t, 'latency_s_baseline', '{:.2f}')} | "
                         f"{cell(t, 'latency_s_system', '{:.2f}')} | {cell(t, 'speedup', '{:.2f}')} | "
                         f"{cell(t, 'energy_j_per_token_baseline', '{:.2f}')} | "
                         f"{cell(t, 'energy_j_per_token_system', '{:.2f}')} |")
    lines += ["", *_what_the_fpga_buys(records)]
    return lines


def _what_the_fpga_buys(records: list[dict[str, Any]]) -> list[str]:
    """One sentence per target from the numbers above: the speedup's range over the datasets."""
    out = []
    for i, (label, base, hetero) in enumerate(TARGETS):
        speedups = [r["targets"][i]["speedup"] for r in records]
        energy = [r["targets"][i]["energy_j_per_token_system"] / r["targets"][i]["energy_j_per_token_baseline"]
                  for r in records]
        verdict = ("the FPGA draft buys time" if min(speedups) > 1 else
                   "the baseline's GPU draft is faster than the FPGA's" if max(speedups) < 1 else
                   "neither is faster on every dataset")
        out.append(f"- {label}: HeteroReason's speedup over `{base}` is {min(speedups):.2f} to {max(speedups):.2f}, "
                   f"at {min(energy):.2f} to {max(energy):.2f} times its energy per token: {verdict}.")
    return out
