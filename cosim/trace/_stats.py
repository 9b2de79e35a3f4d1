"""Per-dataset statistics of a trace, as a dict and as a printable table."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from ._io import Trace, check_problem

COLUMNS = (
    ("problems", "problems", "{:d}"),
    ("steps_per_problem", "steps/problem", "{:.2f}"),
    ("tokens_per_step", "tokens/step", "{:.1f}"),
    ("prompt_tokens", "prompt tokens", "{:.1f}"),
    ("reject_rate", "reject rate", "{:.3f}"),
    ("backtracks_per_problem", "backtracks/problem", "{:.3f}"),
    ("acceptance_rate", "acceptance", "{:.3f}"),
    ("accuracy", "accuracy", "{}"),
)


def trace_statistics(trace: Trace) -> dict[str, dict[str, Any]]:
    """For each dataset: problems, mean final steps per problem, mean tokens per
    final step, mean prompt tokens, share of drafts rejected, backtracks per
    problem, token-weighted acceptance rate and accuracy (None without labels)."""
    groups: dict[str, list] = defaultdict(list)
    for problem in trace.problems:
        groups[problem.dataset].append((problem, check_problem(problem, trace.header)))
    out: dict[str, dict[str, Any]] = {}
    for dataset, rows in sorted(groups.items()):
        summaries = [s for _, s in rows]
        steps = [t for s in summaries for t in s.final_steps]
        drafts = sum(s.drafts for s in summaries)
        accepted = sum(s.accepted_draft_tokens for s in summaries)
        target = sum(s.target_tokens for s in summaries)
        labels = [p.answer_correct for p, _ in rows if p.answer_correct is not None]
        out[dataset] = {
            "problems": len(rows),
            "steps_per_problem": statistics.fmean(s.steps for s in summaries),
            "tokens_per_step": statistics.fmean(steps),
            "median_tokens_per_step": statistics.median(steps),
            "median_steps_per_problem": statistics.median(s.steps for s in summaries),
            "prompt_tokens": statistics.fmean(p.prompt_tokens for p, _ in rows),
            "reject_rate": sum(s.rejected_drafts for s in summaries) / drafts if drafts else 0.0,
            "backtracks_per_problem": statistics.fmean(s.backtracks for s in summaries),
            "acceptance_rate": accepted / (accepted + target) if accepted + target else 0.0,
            "accuracy": sum(labels) / len(labels) if labels else None,
        }
    return out


def format_table(stats: dict[str, dict[str, Any]]) -> str:
    header = ["dataset"] + [label for _, label, _ in COLUMNS]
    rows = []
    for dataset, values in stats.items():
        row = [dataset]
        for key, _, fmt in COLUMNS:
            value = values[key]
            row.append("-" if value is None else fmt.format(value) if key != "accuracy" else f"{value:.3f}")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
