"""What `cosim fit` can fit: the FPGA decoder design and the GPU proxy, each as a function
from parameter values to the seconds of the measured points, evaluated by the same native
timing code the simulations use (no simulation, no worker process)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np

from ..schema import _params
from .._extension import native
from ..devices._latency_csv import LatencyProfile
from ..errors import ConfigError
from .. import devices
from ..config.hardware import ModelConfig
from ..devices.fpga import FpgaDevice
from ..devices.gpu import GpuDevice
from ._solver import Param

# Per kind: the parameters that can be fitted, their rule, and what makes each one show.
FPGA_PARAMS = {
    "macs_per_cycle": ("positive", "no point is compute-bound: add local-prefill rows, or decode at a clock "
                                   "where the MAC array binds"),
    "port_efficiency": ("fraction", "no point is bound by the ports' width x clock: every point is compute-, "
                                    "pipeline- or channel-bound"),
    "pipeline_cycles_per_layer": ("positive", "the pipeline adds too little to any point"),
}
GPU_PARAMS = {
    "forward_overhead_ns": ("positive", "the points do not show a fixed cost per forward call"),
    "layer_overhead_ns": ("positive", "the points do not show a launch cost per layer"),
    "memory_efficiency": ("positive_fraction", "no point is bound by memory bandwidth"),
    "compute_efficiency": ("positive_fraction", "no prefill point is compute-bound: add longer prefills"),
    "roofline_exponent": ("positive", "no point is near the ridge where compute and memory times meet"),
}
# Kernel times (per-layer profiles) hold no host overheads: these are what they determine.
KERNEL_PARAMS = ["memory_efficiency", "compute_efficiency", "roofline_exponent"]
_OVERHEADS = ("forward_overhead_ns", "layer_overhead_ns")


def _points(profile: LatencyProfile) -> tuple[list[tuple[str, int, int]], np.ndarray]:
    points = [(phase, tokens, context) for phase, tokens, context, _ in profile.rows]
    return points, np.array([seconds for *_, seconds in profile.rows])


def chosen_params(names: list[str] | None, table: Mapping[str, Any], default: list[str], kind: str) -> list[str]:
    """The parameters a fit moves (``names``, else ``default``), each one of ``table``'s, once."""
    chosen = default if not names else names
    for name in chosen:
        if name not in table:
            raise ConfigError(f"--params: {name!r} is not a {kind} parameter cosim fit can fit "
                              f"(one of {', '.join(table)})")
    if len(set(chosen)) != len(chosen):
        raise ConfigError("--params: a parameter is named twice")
    return chosen


def _param(name: str, start: float, table: dict[str, tuple[str, str]]) -> Param:
    rule, silent = table[name]
    return Param(name, start, "fraction" if rule.endswith("fraction") else "positive", silent)


def fpga_problem(device: FpgaDevice, model: ModelConfig, profile: LatencyProfile, names: list[str] | None
                 ) -> tuple[list[Param], Callable[[dict[str, float]], np.ndarray], np.ndarray]:
    """The parameters, the prediction and the measured seconds of an FPGA fit."""
    chosen = chosen_params(names, FPGA_PARAMS, list(FPGA_PARAMS), "FPGA accelerator")
    points, measured = _points(profile)
    hbm, model_dict = _params.native(device.hbm), _params.native(model)
    base = device.accelerator
    params = [_param(n, max(getattr(base, n), 1.0), FPGA_PARAMS) for n in chosen]

    def predict(values: dict[str, float]) -> np.ndarray:
        accelerator = _params.native(dataclasses.replace(base, **values))
        return np.array(native().fpga_timing(accelerator, hbm, model_dict, None, points)["ns"]) * 1e-9

    return params, predict, measured


def gpu_problem(device: GpuDevice, model: ModelConfig, profile: LatencyProfile, names: list[str] | None,
                kernels_only: bool = False
                ) -> tuple[list[Param], Callable[[dict[str, float]], np.ndarray], np.ndarray]:
    """The parameters, the prediction and the measured seconds of a GPU fit. ``kernels_only``:
    the points are GPU kernel times, so the host overheads are left out of the prediction."""
    phases = {row[0] for row in profile.rows}
    default = KERNEL_PARAMS if kernels_only else \
        ["forward_overhead_ns", "memory_efficiency"] + (["compute_efficiency"] if "prefill" in phases else [])
    chosen = chosen_params(names, GPU_PARAMS, default, "GPU")
    if kernels_only:
        for name in chosen:
            if name in _OVERHEADS:
                raise ConfigError(f"--params: {name}: kernel times hold no host overhead to fit it from")
    points, measured = _points(profile)
    model_dict = _params.native(model)
    base = dataclasses.replace(device.gpu, forward_overhead_ns=0.0, layer_overhead_ns=0.0) if kernels_only \
        else device.gpu
    params = [_param(n, _start(n, getattr(base, n)), GPU_PARAMS) for n in chosen]

    def predict(values: dict[str, float]) -> np.ndarray:
        gpu = _params.native(dataclasses.replace(base, **values))
        return np.array(native().gpu_timing(gpu, model_dict, None, points)["ns"]) * 1e-9

    return params, predict, measured


def _start(name: str, value: float) -> float:
    if name == "roofline_exponent":
        return value if value >= 1.0 else 2.0  # the hard max (0) is no place to start from
    return max(value, 1.0 if name.endswith("_ns") else 0.5)


def bounds_at(device: Any, model: ModelConfig, profile: LatencyProfile, values: dict[str, float]) -> list[str]:
    """What binds at each point with the fitted values (for the report of residuals)."""
    points, _ = _points(profile)
    kind = devices.kind_of(device)
    # The design with the fitted values, timed by its formula (a measured profile set aside).
    fitted = dataclasses.replace(device, **{kind.design: dataclasses.replace(kind.design_of(device), **values)})
    if getattr(fitted, "profile", None) is not None:
        fitted = dataclasses.replace(fitted, profile=None)
    return list(kind.timing(fitted, model, points)["bound"])
