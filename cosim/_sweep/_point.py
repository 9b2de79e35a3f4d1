"""One point of a sweep: the scenario with the point's values, simulated."""

from __future__ import annotations

from typing import Any

from ..errors import CosimError
from ..result import METRICS
from ..config.scenario import Scenario
from ..trace import Trace

# Summary values every row carries besides the metrics.
EXTRA_COLUMNS = ("problems", "energy_j", "final_tokens", "generated_tokens")


def run_point(scn: Scenario, trace: Trace, values: dict[str, Any]) -> dict[str, Any]:
    """Simulates one point; never raises for a bad point, it reports it."""
    from .._workflow import simulate

    row: dict[str, Any] = dict(values)
    try:
        point = scn
        for path, value in values.items():
            point = point.with_value(path, value)
        result = simulate(point, trace)
        row.update({k: result.summary.get(k) for k in (*METRICS, *EXTRA_COLUMNS)})
        row.update(status="ok", error=None, wall_s=result.wall_s)
    except (CosimError, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    return row
