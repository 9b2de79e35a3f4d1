"""One point of a sweep: the scenario with the point's values, simulated (or, with
``serve.*`` values, served as requests arriving over time)."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError, CosimError
from ..result import METRICS
from ..config.scenario import Scenario
from ..trace import Trace
from .._args import real, whole
from ..engine._workflow import simulate
from ..serve import run

# Summary values every row carries besides the metrics.
EXTRA_COLUMNS = ("problems", "energy_j", "final_tokens", "generated_tokens")

# Values of a serving run, not of the scenario: cosim.serve.run's arguments.
SERVE_PATHS = {"serve.rate": "rate", "serve.cv": "cv", "serve.seed": "seed", "serve.slo_s": "slo_s"}


def check_serve_value(path: str, value: Any) -> None:
    """A ``serve.*`` value as the serving run takes it (ConfigError naming the path)."""
    if path not in SERVE_PATHS:
        raise ConfigError(f"{path}: unknown serving value; one of {', '.join(SERVE_PATHS)}")
    if path == "serve.seed":
        whole(value, path)
    else:
        real(value, path, positive=True)


def run_point(scn: Scenario, trace: Trace, values: dict[str, Any]) -> dict[str, Any]:
    """Simulates one point; never raises for a bad point, it reports it."""
    row: dict[str, Any] = dict(values)
    try:
        served = {SERVE_PATHS[p]: v for p, v in values.items() if p in SERVE_PATHS}
        changed = {p: v for p, v in values.items() if p not in SERVE_PATHS}
        point = scn.with_values(changed) if changed else scn  # together: their order never matters
        if served:
            outcome = run(point, trace, **served)
            row.update(outcome.row())
            row.update(status="ok", error=None, wall_s=outcome.wall_s)
        else:
            result = simulate(point, trace)
            row.update({k: result.summary.get(k) for k in (*METRICS, *EXTRA_COLUMNS)})
            row.update(status="ok", error=None, wall_s=result.wall_s)
    except (CosimError, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    return row
