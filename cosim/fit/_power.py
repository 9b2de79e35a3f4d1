"""`cosim fit power`: a GPU's load model (docs/hardware.md) fitted to a measured power
series. Each row of the series is an interval of steady serving: the model, its tensor and
expert parallel group, the engine step it repeated (decodes at a context, a prefill chunk
beside them), the measured time of that step and the group's average power over the
interval. The fit evaluates each step's work with the same native code the simulations use
and its utilisation over the *measured* step time, so an error of the latency model is not
absorbed into the power model's coefficients; idle_w and limit_w stay the device's
(datasheets), busy_load, compute_load and memory_load are fitted."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._extension import native
from .._inputs import csv_records
from ..config.hardware import ParallelConfig, load_device, load_link, load_model
from ..errors import ConfigError
from ..schema import _params
from ..schema._declarations import TOKENS
from ._models import chosen_params
from ._solver import Param, least_squares

HEADER = ("model", "tensor_parallel", "expert_parallel", "decodes", "context", "prefill", "step_seconds", "watts")
# The load model's coefficients a fit can move; idle and limit are the datasheet's.
POWER_PARAMS = {
    "busy_load": "every point has the same load whatever it does: nothing tells a fixed load from the others",
    "compute_load": "no point keeps the tensor cores busy enough: add prefill-heavy or large-batch intervals",
    "memory_load": "no point keeps memory busy enough: add decode intervals",
}
_START = {"busy_load": 0.5, "compute_load": 5.0, "memory_load": 0.5}


@dataclass(frozen=True)
class PowerPoint:
    """One measured interval: a step of this shape repeated, and the group's power."""

    model: str
    tensor_parallel: int
    expert_parallel: int
    decodes: int
    context: int
    prefill: int
    step_s: float
    watts: float
    line: int = 0

    @property
    def gpus(self) -> int:
        return max(self.tensor_parallel, self.expert_parallel)

    def step(self) -> tuple[int, int, int, int]:
        """(decodes, their context, prefill tokens, the prefill's context) as the native code takes it."""
        return (self.decodes, self.context, self.prefill, 0)


def _field(path: Path, line: int, name: str, text: str, whole: bool, low: float) -> float:
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        raise ConfigError(f"{path}:{line}: {name}: not {'an int' if whole else 'a number'}: {text!r}") from None
    if not math.isfinite(value) or value < low or (whole and value > TOKENS.value):
        raise ConfigError(f"{path}:{line}: {name}: {text} is out of range (at least {low:g})")
    return value


def load_power_points(path: str | Path, model: str | None = None) -> list[PowerPoint]:
    """The rows of a power series CSV (HEADER; an empty model cell: ``model``)."""
    path = Path(path)
    points: list[PowerPoint] = []
    header: list[str] | None = None
    for line, record in csv_records(path):
        if not record or all(not f.strip() for f in record):
            continue
        fields = [f.strip() for f in record]
        if header is None:
            if tuple(fields) != HEADER:
                raise ConfigError(f"{path}:{line}: the header must be {','.join(HEADER)}")
            header = fields
            continue
        if len(fields) != len(HEADER):
            raise ConfigError(f"{path}:{line}: expected {len(HEADER)} fields ({','.join(HEADER)}), got {len(fields)}")
        row = dict(zip(HEADER, fields))
        name = row["model"] or model
        if not name:
            raise ConfigError(f"{path}:{line}: model: empty, and no --model given")
        ints = {k: int(_field(path, line, k, row[k], True, low))
                for k, low in (("tensor_parallel", 1), ("expert_parallel", 1), ("decodes", 0), ("context", 0),
                               ("prefill", 0))}
        if ints["decodes"] + ints["prefill"] < 1:
            raise ConfigError(f"{path}:{line}: decodes, prefill: a step decodes or prefills at least one token")
        seconds = _field(path, line, "step_seconds", row["step_seconds"], False, 0.0)
        watts = _field(path, line, "watts", row["watts"], False, 0.0)
        if seconds <= 0 or watts <= 0:
            raise ConfigError(f"{path}:{line}: step_seconds, watts: must be > 0")
        points.append(PowerPoint(name, ints["tensor_parallel"], ints["expert_parallel"], ints["decodes"],
                                 ints["context"], ints["prefill"], seconds, watts, line))
    if header is None:
        raise ConfigError(f"{path}: empty; expected the header {','.join(HEADER)}")
    return points


def group_watts(device: Any, points: Sequence[PowerPoint], power: Any, measured_time: bool = True,
                model: Any = None) -> np.ndarray:
    """Each point's predicted power of its whole group on ``device`` with power parameters
    ``power`` (a PowerConfig): its step's work over the measured step time (or, with
    ``measured_time`` false, over the time the roofline gives it). ``model``: a loaded model
    for every point, in place of each point's named one."""
    return group_steps(device, points, power, measured_time, model)[0]


def group_steps(device: Any, points: Sequence[PowerPoint], power: Any, measured_time: bool = True,
                model: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """As group_watts, with each step's time in ns beside its group's power (the measured
    time, or the roofline's)."""
    link = load_link(device.peer_link or device.host_link)
    out, step_ns = np.zeros(len(points)), np.zeros(len(points))
    groups: dict[tuple[str, int, int], list[int]] = {}
    for i, p in enumerate(points):
        groups.setdefault((p.model, p.tensor_parallel, p.expert_parallel), []).append(i)
    for (name, tp, ep), index in groups.items():
        parallel = _params.replaced(ParallelConfig(), tensor_parallel=max(tp, ep), expert_parallel=ep)
        steps = [points[i].step() for i in index]
        times = [points[i].step_s * 1e9 for i in index] if measured_time else None
        spec = load_model(name) if model is None else model
        result = native().gpu_batch_power(_params.native(device.gpu), _params.native(spec),
                                          _params.native(parallel), _params.native(link), _params.native(power),
                                          steps, True, times)
        for i, watts, ns in zip(index, result["watts"], result["ns"]):
            out[i] = watts * points[i].gpus
            step_ns[i] = ns
    return out, step_ns


@dataclass(frozen=True)
class PowerFit:
    device: Any                 # the device with the fitted values in place
    values: dict[str, float]
    sigmas: dict[str, float]
    points: tuple[PowerPoint, ...]
    predicted: np.ndarray       # the group's watts at each point
    residuals: np.ndarray       # predicted / measured - 1
    rms: float
    source: str
    kind: str = "power"

    def table(self) -> str:
        lines = [f"{'model':24} {'tp':>3} {'ep':>3} {'decodes':>7} {'context':>7} {'prefill':>7} {'step s':>9} "
                 f"{'measured W':>10} {'fitted W':>9} {'residual':>9}"]
        for p, fitted, res in zip(self.points, self.predicted, self.residuals):
            lines.append(f"{p.model[:24]:24} {p.tensor_parallel:3d} {p.expert_parallel:3d} {p.decodes:7d} "
                         f"{p.context:7d} {p.prefill:7d} {p.step_s:9.5f} {p.watts:10.1f} {fitted:9.1f} {res:+9.2%}")
        lines.append("")
        for name, value in self.values.items():
            lines.append(f"{name:26} {value:.6g} +- {self.sigmas[name]:.2g} (1 sigma)")
        power = self.device.power
        lines.append(f"(idle {power.idle_w:g} W and limit {power.limit_w:g} W per GPU kept from the device)")
        lines.append(f"rms residual {self.rms:.3%} over {len(self.points)} points")
        return "\n".join(lines)

    def citations(self) -> dict[str, dict[str, Any]]:
        where = Path(self.source).name
        return {name: {"value": float(f"{value:.6g}"),
                       "source": f"cosim fit power {where} ({len(self.points)} points, rms residual {self.rms:.2%}): "
                                 f"{value:.6g} +- {self.sigmas[name]:.2g} (1 sigma)"}
                for name, value in self.values.items()}


def fit_power(measured: Any, device: Any = "h100-sxm", model: str | None = None,
              params: Sequence[str] | str | None = None) -> PowerFit:
    """Fits the load model's coefficients of ``device`` (a GPU whose power gives limit_w) to a
    power series (a CSV path, or PowerPoints)."""
    cfg = load_device(device)
    if getattr(cfg, "gpu", None) is None:  # the load model reads a GPU's peaks
        raise ConfigError(f"device {cfg.name!r} is not a GPU: the load model is a GPU's")
    if cfg.power.limit_w <= 0:
        raise ConfigError(f"device {cfg.name!r}: power.limit: give the GPU's power limit (its TDP) to fit the "
                          f"load model")
    points = list(measured) if not isinstance(measured, str | Path) else load_power_points(measured, model)
    given = [p.strip() for p in params.split(",") if p.strip()] if isinstance(params, str) else params
    names = chosen_params(list(given) if given else None, POWER_PARAMS, list(POWER_PARAMS), "load model")
    measured_w = np.array([p.watts for p in points])

    def predict(values: dict[str, float]) -> np.ndarray:
        return group_watts(cfg, points, dataclasses.replace(cfg.power, **values))

    starts = {n: getattr(cfg.power, n) or _START[n] for n in names}
    fit = least_squares([Param(n, starts[n], "positive", POWER_PARAMS[n]) for n in names], predict, measured_w)
    fitted = dataclasses.replace(cfg, power=dataclasses.replace(cfg.power, **fit.values))
    source = str(measured) if isinstance(measured, str | Path) else "points"
    return PowerFit(fitted, fit.values, fit.sigmas, tuple(points), fit.predicted, fit.residuals, fit.rms, source)
