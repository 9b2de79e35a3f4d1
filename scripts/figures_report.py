"""The figures the README quotes from `cosim report` at its defaults (the command line's
--problems and --seed), computed by the report's own functions: the headline speedup and
its interval, the half-widths and the problems a precision needs, the differences left
unresolved, and what the speedup depends on (the report's "What the numbers depend on",
Config 1). Each figure is text exactly as the docs print it."""

from __future__ import annotations

import functools
from typing import Any, Callable

from cosim.cli import build_parser
from cosim.report import CONFIGS, DATASETS, SystemRuns, compare_systems
from cosim.report import _depends as depends, _intervals as intervals

HEADLINE = ("math500", 1)  # the dataset and config the README leads with
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def counted(n: int) -> str:
    return WORDS[n] if n < len(WORDS) else f"{n:,}"


@functools.lru_cache(maxsize=1)
def defaults() -> tuple[int, int]:
    """`cosim report`'s problems per dataset and seed when given no options."""
    args = build_parser().parse_args(["report"])
    return args.problems, args.seed


@functools.lru_cache(maxsize=1)
def traces() -> tuple[SystemRuns, ...]:
    """Every system on every dataset and config, as the report runs them."""
    problems, seed = defaults()
    return tuple(compare_systems(d, c, problems, seed) for d in DATASETS for c in CONFIGS)


def headline_records() -> list[dict[str, Any]]:
    """The headline system's record on each trace, in the report's order."""
    return [next(r for r in t.records if r["system"] == intervals.HEADLINE) for t in traces()]


def headline() -> dict[str, Any]:
    return next(r for r in headline_records() if (r["dataset"], r["config"]) == HEADLINE)


def half_widths() -> list[float]:
    """Each trace's headline speedup: its interval's half-width relative to the speedup."""
    out = []
    for r in headline_records():
        low, high = intervals.ends(r, "speedup")
        out.append((high - low) / 2 / r["speedup"])
    return out


def latency_half_widths() -> str:
    """The relative half-widths of the headline system's and the baseline's own mean latency
    where the README leads (their speedup's interval is paired, theirs are not)."""
    trace = next(t for t in traces() if (t.records[0]["dataset"], t.records[0]["config"]) == HEADLINE)
    widths = []
    for system in (intervals.HEADLINE, intervals.BASELINE):
        r = next(r for r in trace.records if r["system"] == system)
        low, high = intervals.ends(r, "latency_s")
        widths.append((high - low) / 2 / r["latency_s"])
    return f"±{widths[0]:.1%} and ±{widths[1]:.1%}"


def problems_needed(precision: float) -> str:
    """The problems per dataset a relative half-width of ``precision`` takes, over the traces
    (never fewer than the report ran: an interval that meets it says nothing about fewer)."""
    problems = defaults()[0]
    needs = []
    for r in headline_records():
        low, high = intervals.ends(r, "speedup")
        needs.append(intervals.problems_for((high - low) / 2, r["speedup"], problems, precision))
    reached = sum(n == problems for n in needs)
    if reached == len(needs):
        return f"{problems:,} (every trace reaches it)"
    if reached == 0:
        return f"{min(needs):,} to {max(needs):,}"
    return f"up to {max(needs):,} ({problems:,} reach it on {counted(reached)} of the {counted(len(needs))} traces)"


def open_differences() -> str:
    """The pairs of systems whose mean latency ratio's interval holds 1 (on how many traces),
    and those within the report's negligible difference, interval included."""
    unresolved: dict[tuple[str, str], int] = {}
    tiny: dict[tuple[str, str], int] = {}
    for t in traces():
        for p in t.pairs:
            if p["low"] is None or p["high"] is None:
                continue
            key = (p["a"], p["b"])
            if 1 - intervals.NEGLIGIBLE <= p["low"] and p["high"] <= 1 + intervals.NEGLIGIBLE:
                tiny[key] = tiny.get(key, 0) + 1
            elif p["low"] <= 1 <= p["high"]:
                unresolved[key] = unresolved.get(key, 0) + 1
    n = counted(len(traces()))
    parts = [f"{a} against {b} on {counted(k)} of the {n} traces" if i == 0 else f"{a} against {b} on {counted(k)}"
             for i, ((a, b), k) in enumerate(unresolved.items())]
    if not parts:
        parts = ["no pair of systems on any trace"]
    text = ", ".join(parts)
    if tiny:
        text += "; " + ", ".join(f"{a} and {b} differ by under {intervals.NEGLIGIBLE:.0%} on {counted(k)}"
                                 for (a, b), k in tiny.items())
    return text


@functools.lru_cache(maxsize=1)
def depends_speedup() -> dict[str, Any]:
    """The report's "What the numbers depend on" for the headline speedup in Config 1."""
    problems, seed = defaults()
    entry = depends.depends_in(HEADLINE[1], min(problems, depends.PROBLEMS), seed)
    return entry["metrics"]["speedup"]


def band() -> tuple[float, float]:
    low, high = sorted(depends_speedup()["band"])
    return low, high


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def _band_text() -> str:
    fmt = depends.METRICS["speedup"][1]
    low, high = band()
    return f"from {fmt.format(low)} to {fmt.format(high)}"


FIGURES: dict[str, Callable[[], str]] = {
    "report_problems": lambda: f"{defaults()[0]:,}",
    "speedup_cell": lambda: f"`{intervals.cell(headline(), 'speedup', '{:.2f}')}`",
    "energy_power_cell": lambda: f"`{intervals.cell(headline(), 'energy_j_per_token', '{:.2f}')}"
                                 f"{intervals.power_cell(headline(), 'energy_j_per_token', '{:.2f}')}`",
    "speedup_text": lambda: intervals.cell(headline(), "speedup", "{:.2f}"),
    "latency_half_widths": latency_half_widths,
    "speedup_2dp": lambda: f"{headline()['speedup']:.2f}",
    "headline_speedup": lambda: intervals.cell(headline(), "speedup", "{:.3f}"),
    "half_widths": lambda: f"+/-{min(half_widths()):.2%} to +/-{max(half_widths()):.2%}",
    "problems_for_1pct": lambda: problems_needed(0.01),
    "problems_for_half_pct": lambda: problems_needed(0.005),
    "open_differences": open_differences,
    "depends_problems": lambda: f"{min(defaults()[0], depends.PROBLEMS)}",
    "depends_top_speedup": lambda: _names([t["name"] for t in depends_speedup()["top"]]),
    "depends_band_speedup": _band_text,
}
