"""Every figure of the report, in its order: file stem -> how it is drawn from the report's
content (what report.json holds). Each is drawn, written and closed before the next."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import _design_space, _serving, _sweeps
from ._plots import FIGURES as PER_DATASET, plt, save
from ._plots_accuracy import accuracy_latency

FIGURES: dict[str, Callable[[dict[str, Any]], Any]] = {
    **PER_DATASET,
    "sweep_pcie_bandwidth": lambda r: _sweeps.figure(r["sweeps"]["pcie_bandwidth_gbps"]),
    "sweep_fpga_clock": lambda r: _sweeps.figure(r["sweeps"]["fpga_clock_mhz"]),
    "accuracy_latency": accuracy_latency,
    "design_space": lambda r: _design_space.figure(r["design_space"]),
    "serving": lambda r: _serving.figure(r["serving"]),
}


def draw(report: dict[str, Any], stem: str) -> Any:
    """The figure ``stem`` (a key of FIGURES) as a matplotlib Figure; close it with ``close``."""
    return FIGURES[stem](report)


def close(fig: Any) -> None:
    plt.close(fig)


def write_figures(report: dict[str, Any], folder: Path) -> list[Path]:
    """Every figure as ``<stem>.png`` in ``folder``, one at a time."""
    return [save(draw(report, stem), folder / f"{stem}.png") for stem in FIGURES]
