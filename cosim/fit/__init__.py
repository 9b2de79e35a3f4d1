"""Fitting device parameters to measured latencies: the FPGA decoder's MAC array, port
efficiency and pipeline cycles, or the GPU proxy's overheads and efficiencies, by least
squares on relative residuals, with each value's uncertainty; a fit the points cannot
determine is refused with the reason."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .. import devices
from ..schema import _params
from ..devices._latency_csv import LatencyProfile, load_latency_profile
from ..errors import ConfigError
from ..config.hardware import load_device, load_model
from ._device_yaml import write_fitted_device
from ._layer_times import LayerTimes, is_layer_times, load_layer_times
from ._models import FPGA_PARAMS, GPU_PARAMS, bounds_at, fpga_problem, gpu_problem
from ._solver import least_squares
from ._operator_points import operator_points

__all__ = ["DeviceKindError", "FITTERS", "FitResult", "Fitter", "fit_fpga", "fit_gpu", "write_device"]

KINDS = {"fpga": "an FPGA", "gpu": "a GPU"}


class DeviceKindError(ConfigError):
    """A fit given a device of the other kind; ``device`` names it, ``kind`` is its kind."""

    device: str = ""
    kind: str = ""


def _check_kind(cfg: Any, wanted: str) -> None:
    if cfg.kind != wanted:
        exc = DeviceKindError(f"device {cfg.name!r} is {KINDS[cfg.kind]}, not {KINDS[wanted]} "
                              f"(fit it with fit_{cfg.kind})")
        exc.device, exc.kind = cfg.name, cfg.kind
        raise exc


@dataclass(frozen=True)
class FitResult:
    kind: str                       # "fpga" or "gpu"
    device: Any                     # the device with the fitted values in place
    values: dict[str, float]
    sigmas: dict[str, float]        # one standard deviation each
    points: tuple[tuple[str, int, int, float], ...]  # phase, tokens, context, measured seconds
    predicted: np.ndarray
    residuals: np.ndarray           # predicted / measured - 1
    bounds: list[str]               # what binds at each point
    rms: float
    source: str
    settings: dict[str, float] = dataclasses.field(default_factory=dict)  # set for the fit, e.g. the clock
    kernels_only: bool = False      # the points were kernel times: host overheads left aside

    def table(self) -> str:
        lines = [f"{'phase':8} {'tokens':>6} {'context':>7} {'measured s':>12} {'fitted s':>12} {'residual':>9}  bound"]
        for (phase, tokens, context, seconds), fitted, res, bound in zip(self.points, self.predicted,
                                                                        self.residuals, self.bounds):
            lines.append(f"{phase:8} {tokens:6d} {context:7d} {seconds:12.6g} {fitted:12.6g} {res:+9.3%}  {bound}")
        lines.append("")
        for name, value in self.values.items():
            lines.append(f"{name:26} {value:.6g} +- {self.sigmas[name]:.2g} (1 sigma)")
        lines.append(f"rms residual {self.rms:.3%} over {len(self.points)} points")
        if self.kernels_only:
            lines.append("(kernel times: the fitted times leave the forward and per-layer overheads aside)")
        return "\n".join(lines)

    def citations(self) -> dict[str, dict[str, Any]]:
        where = Path(self.source).name
        cited = {name: {"value": value, "source": f"the setting {where} was measured at (cosim fit)"}
                 for name, value in self.settings.items()}
        cited.update({name: {"value": float(f"{value:.6g}"),
                             "source": f"cosim fit {self.kind} {where} ({len(self.points)} points"
                                       f"{' of kernel times' if self.kernels_only else ''}, rms residual "
                                       f"{self.rms:.2%}): {value:.6g} +- {self.sigmas[name]:.2g} (1 sigma)"}
                      for name, value in self.values.items()})
        return cited


def _leaf(config: Any, path: str) -> Any:
    for part in path.split("."):
        config = getattr(config, part)
    return config


def _profile(measured: Any) -> LatencyProfile:
    return measured if isinstance(measured, LatencyProfile) else load_latency_profile(measured)


def _names(params: Any) -> list[str] | None:
    if params is None:
        return None
    if isinstance(params, str):
        return [p.strip() for p in params.split(",") if p.strip()]
    return list(params)


def fit_fpga(measured: Any, device: Any = "u280", model: Any = "qwen2.5-0.5b", params: Any = None,
             overrides: dict[str, Any] | None = None) -> FitResult:
    """Fits the FPGA decoder design to measured seconds (a CSV path or LatencyProfile of
    decode seconds per token by context and local-prefill seconds by tokens), at the
    device's clock (set it in ``overrides``: ``{"accelerator.clock_mhz": 200}``)."""
    cfg = load_device(device)
    _check_kind(cfg, "fpga")
    for path, value in (overrides or {}).items():
        cfg = _params.replace(cfg, path, value)
    profile, spec = _profile(measured), load_model(model)
    fit = least_squares(*fpga_problem(cfg, spec, profile, _names(params)))
    fitted = dataclasses.replace(cfg, accelerator=dataclasses.replace(cfg.accelerator, **fit.values), profile=None)
    settings = {_params.canonical(cfg, path).rpartition(".")[2]: _leaf(fitted, _params.canonical(cfg, path))
                for path in overrides or {}}
    return FitResult("fpga", fitted, fit.values, fit.sigmas, profile.rows, fit.predicted, fit.residuals,
                     bounds_at(cfg, spec, profile, fit.values), fit.rms, profile.source, settings)


def fit_gpu(measured: Any, device: Any = "rtx3090", model: Any = "qwen2.5-math-7b", params: Any = None,
            overrides: dict[str, Any] | None = None) -> FitResult:
    """Fits the GPU proxy's overheads and efficiencies to measured seconds (for instance the
    profile_<role>.csv that `cosim record` writes), or its efficiencies and roofline exponent to
    per-layer kernel times (LLMServingSim's layers.csv, or a LayerTimes): their forward passes
    of 1 to 2,048 tokens, the host overheads left aside."""
    cfg = load_device(device)
    _check_kind(cfg, "gpu")
    for path, value in (overrides or {}).items():
        cfg = _params.replace(cfg, path, value)
    spec = load_model(model)
    if isinstance(measured, str | Path) and is_layer_times(measured):
        measured = load_layer_times(measured)
    # A folder of operator times (docs/hardware.md): kernel times too, summed per forward pass.
    operators = isinstance(measured, str | Path) and Path(measured).is_dir()
    kernels_only = operators or isinstance(measured, LayerTimes)
    if operators:
        profile = operator_points(measured, cfg, spec)
    else:
        profile = measured.profile(spec.layers) if kernels_only else _profile(measured)
    fit = least_squares(*gpu_problem(cfg, spec, profile, _names(params), kernels_only))
    fitted = dataclasses.replace(cfg, gpu=dataclasses.replace(cfg.gpu, **fit.values))
    settings = {_params.canonical(cfg, path).rpartition(".")[2]: _leaf(fitted, _params.canonical(cfg, path))
                for path in overrides or {}}
    bounded = dataclasses.replace(cfg, gpu=dataclasses.replace(cfg.gpu, forward_overhead_ns=0.0,
                                                               layer_overhead_ns=0.0)) if kernels_only else cfg
    return FitResult("gpu", fitted, fit.values, fit.sigmas, profile.rows, fit.predicted, fit.residuals,
                     bounds_at(bounded, spec, profile, fit.values), fit.rms, profile.source, settings, kernels_only)


def write_device(result: FitResult, base: Any, out: str | Path) -> Path:
    """Writes the fitted device as YAML: ``base``'s file with the fitted values citing the fit."""
    group = devices.by_name(result.kind).design
    note = f"parameters fitted by cosim fit to {Path(result.source).name}"
    return write_fitted_device(base, group, result.citations(), note, Path(out))


@dataclass(frozen=True)
class Fitter:
    """A device kind's fit as ``cosim fit <kind>`` offers it."""

    kind: str                  # the device kind it fits
    what: str                  # what it fits, in words
    device: str                # the device it starts from by default
    model: str | None          # the model of the measurements by default (None: to be given)
    params: Mapping[str, Any]  # the parameters it can fit, by name
    default_params: str        # which it fits by default, in words
    measured: str              # what else it reads as measurements, in words ("" for the CSV alone)
    clock: bool                # the measurement's kernel clock may be given
    fit: Callable[..., FitResult]


FITTERS = {
    "fpga": Fitter("fpga", "FPGA decoder design", "u280", "qwen2.5-0.5b", FPGA_PARAMS, ", ".join(FPGA_PARAMS), "",
                   True, fit_fpga),
    "gpu": Fitter("gpu", "GPU proxy", "rtx3090", None, GPU_PARAMS,
                  "forward_overhead_ns, memory_efficiency, and compute_efficiency when there are prefill rows",
                  "; or per-layer kernel times (LLMServingSim's layer_name,input,kv_cache,tp_size,latency(ns)): "
                  "their forward passes of 1 to 2,048 tokens fit the efficiencies and the roofline exponent, "
                  "overheads aside; or a folder of operator times (LLMServingSim's or Vidur's profiles, "
                  "docs/hardware.md), summed into lone decodes and prefills the same way", False, fit_gpu),
}
