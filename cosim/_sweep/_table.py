"""A sweep's results: one row per point, held as rows and handed out as an Arrow table."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..outputs._arrow import column, csv_text, to_pandas, write_csv, write_parquet
from ..result import METRICS
from ._point import EXTRA_COLUMNS

_COUNTS = ("problems", "final_tokens", "generated_tokens", "requests", "devices_draft", "devices_prm",
           "devices_target")
# The serving summary's columns (ServeSummary.to_dict), in its order.
SERVE_COLUMNS = (
    "requests", "span_s", "latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_max_s", "latency_mean_s",
    "queueing_mean_s", "queueing_p99_s", "service_mean_s", "throughput_req_s", "throughput_tok_s", "slo_s",
    "slo_attainment", "energy_j", "energy_j_per_token", "energy_j_per_request", "mean_in_system", "mean_in_queue",
    *(f"{k}_{r}" for r in ("draft", "prm", "target") for k in ("devices", "utilisation", "mean_batch", "energy_j")),
)


@dataclass
class SweepTable:
    """One row per point: the swept values, ``status`` (ok or error), ``error`` and every metric."""

    parameters: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    serving: bool = False  # its rows are serving summaries (cosim.serve)

    @property
    def metrics(self) -> tuple[str, ...]:
        return SERVE_COLUMNS if self.serving else (*METRICS, *EXTRA_COLUMNS)

    @property
    def columns(self) -> list[str]:
        return [*self.parameters, "status", "error", *self.metrics, "wall_s"]

    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["status"] != "ok"]

    def to_arrow(self) -> Any:
        """The table with a type per column: swept values as given (numbers, booleans, or
        text where they are quantities), status and error as text, metrics as doubles,
        counts as integers; a failed point's metrics are null."""
        import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

        def values(name: str) -> list[Any]:
            return [r.get(name) for r in self.rows]

        arrays = {p: column(values(p)) for p in self.parameters}
        arrays.update(status=column(values("status"), pa.string()), error=column(values("error"), pa.string()))
        for name in (*self.metrics, "wall_s"):
            arrays[name] = column(values(name), pa.int64() if name in _COUNTS else pa.float64())
        return pa.table(arrays)

    def to_pandas(self) -> Any:
        return to_pandas(self.to_arrow())

    def to_csv(self) -> str:
        return csv_text(self.to_arrow())

    def write(self, folder: Path) -> dict[str, Path]:
        """sweep.csv and sweep.parquet, each written whole or not at all."""
        table = self.to_arrow()
        return {"csv": write_csv(table, folder / "sweep.csv"), "parquet": write_parquet(table, folder / "sweep.parquet")}
