"""The figures of the example policies (scenarios/policy_*.py) that the README and
docs/live.md quote: each policy against the algorithm's thresholds on the same draws, at
the scripts' own defaults, run as the scripts run them (scenarios/_live_compare.py).
Each figure is text exactly as the docs print it."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any, Callable

import cosim

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scenarios"))
import _live_compare as live  # noqa: E402  (the scenarios folder, put on the path above)
import policy_adaptive_stepahead as adaptive  # noqa: E402
import policy_draft_length as draft_length  # noqa: E402
import policy_refine_budget as refine_budget  # noqa: E402
import policy_time_budget as time_budget  # noqa: E402

from figures_report import counted  # noqa: E402

FORMATS = {key: fmt for key, _, fmt in live.ROWS}
COLUMNS = ("latency_s", "accuracy", "energy_j_per_token")  # the tables' figures, in order
STEP_AHEAD = "gpu-stepahead"  # the GPU system docs/live.md also quotes the adaptive policy on
RUNS = ("thresholds", "time_budget", "depth", "adaptive", "refine_budget")  # the tables' rows, in order


def _settings(scenario: str) -> argparse.Namespace:
    args = live.defaults()
    return args if not scenario else argparse.Namespace(**{**vars(args), "scenario": scenario})


def summaries(scenario: str = "") -> dict[str, dict[str, Any]]:
    """Each row's run summary on the scripts' draws: the thresholds, the thresholds at the
    adaptive policy's depth, and each policy as its script runs it (on ``scenario``, default
    the scripts' own; on another, the adaptive policy and the thresholds alone)."""
    return _summaries(scenario)


@functools.lru_cache(maxsize=2)
def _summaries(scenario: str) -> dict[str, dict[str, Any]]:
    args = _settings(scenario)
    scn, problems = live.draws(args)
    deep = live.with_depth(scn, adaptive.DEPTH)
    runs = {"thresholds": lambda: live.rule(args, scn, problems),
            "depth": lambda: live.rule(args, deep, problems),
            "adaptive": lambda: cosim.cosimulate(deep, adaptive.AdaptiveStepAhead(args.profile, args.seed), problems)}
    if not scenario:
        runs["time_budget"] = lambda: cosim.cosimulate(
            scn, time_budget.TimeBudgetAcceptance(args.profile, args.seed), problems)
        runs["refine_budget"] = lambda: cosim.cosimulate(
            scn, refine_budget.RefineBudget(args.profile, args.seed), problems)
    return {name: make().result.summary for name, make in runs.items()}


def _labels() -> dict[str, tuple[str, str, str]]:
    """Per row: the README's label, and docs/live.md's script and rule."""
    late = time_budget.TimeBudgetAcceptance("math500")
    budget = refine_budget.RefineBudget("math500").budget_s
    depth = adaptive.DEPTH
    return {
        "thresholds": ("the algorithm's thresholds", "(thresholds)", "the algorithm"),
        "time_budget": ("`scenarios/policy_time_budget.py`: keep a borderline draft when the PRM is late",
                        "`scenarios/policy_time_budget.py`",
                        f"keep a draft scored within {late.margin:g} of the threshold when the PRM took over "
                        f"{late.late_s * 1e3:g} ms"),
        "depth": (f"the thresholds with the draft device {counted(depth)} steps ahead (`step_ahead_depth: {depth}`)",
                  f"(thresholds at `step_ahead_depth` {depth})",
                  f"the algorithm, the draft device {counted(depth)} steps ahead"),
        "adaptive": (f"`scenarios/policy_adaptive_stepahead.py`: at depth {depth}, draft as far ahead as drafts were "
                     "kept in a row",
                     "`scenarios/policy_adaptive_stepahead.py`",
                     f"at depth {depth}, draft as far ahead as drafted steps have been kept in a row ({depth} after "
                     f"{counted(depth)} kept, 1 after one, 0 after a rejection)"),
        "refine_budget": (f"`scenarios/policy_refine_budget.py`: stop refining after {budget:g} s",
                          "`scenarios/policy_refine_budget.py`", f"after {budget:g} s of a problem, keep every draft"),
    }


def _cells(run: str) -> str:
    s = summaries()[run]
    return " | ".join(FORMATS[key].format(s[key]) for key in COLUMNS)


def readme_table() -> str:
    labels = _labels()
    return "\n".join(["| policy | mean latency s | accuracy | J per token |", "|---|---|---|---|",
                      *(f"| {labels[run][0]} | {_cells(run)} |" for run in RUNS)])


def live_table() -> str:
    labels = _labels()
    return "\n".join(["| script | rule | mean latency s | accuracy | J per token |", "|---|---|---|---|---|",
                      *(f"| {labels[run][1]} | {labels[run][2]} | {_cells(run)} |" for run in RUNS)])


def change(run: str, key: str, against: str = "thresholds") -> float:
    """``run``'s figure relative to ``against``'s, minus 1."""
    s = summaries()
    return s[run][key] / s[against][key] - 1


def _pair(key: str, joint: str) -> str:
    s = summaries()
    return f"{FORMATS[key].format(s['thresholds'][key])}{joint}{FORMATS[key].format(s['depth'][key])}"


def _step_ahead_wasted() -> str:
    s = summaries(STEP_AHEAD)
    fmt = FORMATS["wasted_energy_share"]
    return (f"{fmt.format(s['thresholds']['wasted_energy_share'])} at depth 1, "
            f"{fmt.format(s['depth']['wasted_energy_share'])} at depth {adaptive.DEPTH}, "
            f"{fmt.format(s['adaptive']['wasted_energy_share'])} adaptive")


@functools.lru_cache(maxsize=4)
def drafts(scenario: str) -> dict[str, Any]:
    """scenarios/policy_draft_length.py's comparison on ``scenario``, at its defaults."""
    return draft_length.compare(scenario)


def draft_table() -> str:
    rows = ["| system | drafts a pass | mean latency s | J per token |", "|---|---|---|---|"]
    for scenario in draft_length.SCENARIOS:
        runs = drafts(scenario)
        k = runs["draft_tokens"]
        for run, words in (("constant", f"{k}, the scenario's"), ("heuristic", f"`heuristic_transient` from {k}"),
                           ("policy", "`scenarios/policy_draft_length.py`")):
            s = runs[run]
            rows.append(f"| {scenario} | {words} | {s['latency_s']:.3f} | {s['energy_j_per_token']:.3f} |")
    return "\n".join(rows)


def draft_change(scenario: str, key: str) -> float:
    """The draft-length policy's figure on ``scenario`` against the scenario's own count, minus 1."""
    runs = drafts(scenario)
    return runs["policy"][key] / runs["constant"][key] - 1


FIGURES: dict[str, Callable[[], str]] = {
    "policy_problems": lambda: f"{live.defaults().problems:,}",
    "policy_scenario": lambda: live.defaults().scenario,
    "policy_seed": lambda: f"{live.defaults().seed}",
    "policy_table": readme_table,
    "live_policy_table": live_table,
    "depth_latency_gain": lambda: f"{-change('depth', 'latency_s'):.1%}",
    "depth_energy_gain": lambda: f"{-change('depth', 'energy_j_per_token'):.1%}",
    "depth_stall": lambda: _pair("stall_ratio", " to "),
    "depth_wasted": lambda: _pair("wasted_energy_share", " -> "),
    "adaptive_wasted": lambda: FORMATS["wasted_energy_share"].format(summaries()["adaptive"]["wasted_energy_share"]),
    "step_ahead_wasted": _step_ahead_wasted,
    "adaptive_latency_cost": lambda: f"{change('adaptive', 'latency_s'):.1%}",
    "adaptive_energy_cost": lambda: f"{change('adaptive', 'energy_j_per_token'):.1%}",
    "draft_policy_problems": lambda: f"{draft_length.PROBLEMS}",
    "draft_policy_table": draft_table,
    "draft_policy_split_latency": lambda: f"{-draft_change(draft_length.SCENARIOS[1], 'latency_s'):.1%}",
    "draft_policy_split_cost": lambda: "{:.2f}".format(
        drafts(draft_length.SCENARIOS[1])["learned"]["cost"][1] / drafts(draft_length.SCENARIOS[1])["learned"]["cost"][0]),
    "draft_policy_gpu_latency": lambda: f"{-draft_change(draft_length.SCENARIOS[0], 'latency_s'):.1%}",
    "draft_policy_gpu_energy": lambda: f"{-draft_change(draft_length.SCENARIOS[0], 'energy_j_per_token'):.1%}",
    "draft_policy_split_energy": lambda: f"{draft_change(draft_length.SCENARIOS[1], 'energy_j_per_token'):.1%}",
}
