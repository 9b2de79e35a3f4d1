"""What the run commands print, shared by ``cosim run``, ``cosim record --simulate`` and
``cosim serve``."""

from __future__ import annotations

from typing import Any

from ..result import METRICS, Result


def format_summary(result: Result, title: str, intervals: dict[str, Any] | None = None) -> str:
    """The summary, a metric a line, each mean with its 95% interval when ``intervals`` has one."""
    lines = [title, *(["  [95% interval of the mean: bootstrap over the problems, docs/metrics.md]"]
                      if intervals else []), ""]
    for key in METRICS:
        value = result.summary.get(key)
        if value is None:
            continue
        iv = (intervals or {}).get(key)
        spread = f"  {iv.spread('.4f')}" if iv is not None and (not iv.available or iv.low == iv.low) else ""
        lines.append(f"  {key:<30} {value:>12.4f}{spread}" if isinstance(value, float) else
                     f"  {key:<30} {value:>12}")
    for key in ("problems", "final_tokens", "generated_tokens", "energy_j"):
        value = result.summary[key]
        lines.append(f"  {key:<30} {value:>12.1f}" if isinstance(value, float) else f"  {key:<30} {value:>12}")
    return "\n".join(lines)
