"""The figures the README and the docs quote about models that span GPUs: the ML.ENERGY
validation case's errors (all rows, and per model, task and group) and the report's
"HeteroReason at scale" verdicts at its defaults. Each figure is text exactly as the docs
print it."""

from __future__ import annotations

import functools
import statistics
from typing import Callable

from cosim import load_device, validation
from cosim.report import _at_scale
from cosim.validation import _mlenergy as mlenergy
from cosim.validation import _moe_serving as moe

from figures_report import traces
from figures_serving import case_errors, rows, vllm_within


def by_group() -> str:
    """A markdown table: per model, task and parallel group, the configurations' median
    inter-token latency error and its range from the smallest to the largest batch."""
    groups: dict[str, list] = {}
    for r in rows():
        if r.case == f"{mlenergy.CASE} (ITL)":
            name = r.quantity.removeprefix("median ITL ").rsplit(", ", 1)[0]
            groups.setdefault(name, []).append(r)
    lines = ["| model, task, group | configurations | median error | smallest batch | largest batch |",
             "|---|---|---|---|---|"]
    for name, found in groups.items():
        median = statistics.median(r.error for r in found)
        lines.append(f"| {name} | {len(found)} | {median:+.1%} | {found[0].error:+.1%} | {found[-1].error:+.1%} |")
    return "\n".join(lines)


def power_split() -> str:
    """A markdown table: the power and energy rows' median and largest |error|, over the
    configurations the load model was fitted to and over those held out."""
    lines = ["| quantity | configurations | median \\|error\\| | largest \\|error\\| | past 20% |", "|---|---|---|---|---|"]
    for what in ("power", "energy"):
        for tag in ("fitted", "held out"):
            found = [abs(r.error) for r in rows() if r.case == f"{mlenergy.CASE} ({what})"
                     and r.quantity.endswith(f"({tag})")]
            lines.append(f"| {'GPU power' if what == 'power' else 'J/token'}, {tag} | {len(found)} | "
                         f"{statistics.median(found):.1%} | {max(found):.1%} | {sum(e > 0.2 for e in found)} |")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def moe_table() -> str:
    """What `cosim validate --case moe_serving` prints for its rows, as a code block."""
    chosen = [r for r in rows() if r.case.startswith(moe.CASE + " (")]
    return "```\n" + validation.format_table(chosen) + "\n```"


def at_scale() -> tuple[str, ...]:
    """The report's verdict lines of its "HeteroReason at scale" section, at its defaults."""
    records = [_at_scale.record(t.records[0]["dataset"], t.workloads["brsd"].trace, t.results, lambda label: None)
               for t in traces() if t.records[0]["config"] == _at_scale.CONFIG]
    return tuple(_at_scale._what_the_fpga_buys(records))


def sort_rate() -> str:
    """The H100's sampler sort, as the ML.ENERGY case charges it, per logit."""
    h100 = mlenergy.benchmark_device(load_device(mlenergy.DEVICE))
    return f"{h100.gpu.sampler_logit_ns * 1e3:.0f} ps"


FIGURES: dict[str, Callable[[], str]] = {
    "mlenergy_sort_rate": sort_rate,
    "validation_mlenergy_itl": lambda: case_errors(f"{mlenergy.CASE} (ITL)"),
    "validation_mlenergy_power": lambda: case_errors(f"{mlenergy.CASE} (power)"),
    "validation_mlenergy_energy": lambda: case_errors(f"{mlenergy.CASE} (energy)"),
    "mlenergy_by_group": by_group,
    "mlenergy_power_split": power_split,
    "validation_moe_profile_tpot": lambda: vllm_within("profile", "TPOT", moe.CASE),
    "validation_moe_profile_ttft": lambda: vllm_within("profile", "TTFT", moe.CASE),
    "validation_moe_cluster_tpot": lambda: vllm_within("profile, cluster link", "TPOT", moe.CASE),
    "validation_moe_cluster_ttft": lambda: vllm_within("profile, cluster link", "TTFT", moe.CASE),
    "validation_moe_table": moe_table,
    "at_scale": lambda: "\n".join(at_scale()),
}
