"""Case gpu-carry-over: how far the GPU model is off on a GPU nobody profiled, measured by
leaving each profiled GPU out in turn (docs/validation.md, "A GPU nobody profiled").

The project has measurements of one GPU of each of four architectures. Each determines
the kernel efficiencies of its architecture (cosim/data/architectures):

- RTX 3090 (Ampere): LLMServingSim's per-layer kernel times of Llama-3.1-8B, forward
  passes of 1 to 2,048 tokens (memory and compute efficiency, roofline exponent);
- RTX 4090 (Ada Lovelace): LLMServingSim's operator profile of Llama-3.1-8B, summed into
  lone decodes and prefills (the same three);
- RTX PRO 6000 Blackwell Server Edition (Blackwell): LLMServingSim's single-GPU operator
  profile of the MoE Qwen3-30B-A3B (the same three);
- H100 SXM (Hopper): ML.ENERGY's median inter-token latencies of the two dense models on
  one GPU (Llama-3.1-8B, Qwen3-8B) at up to 32 sequences, where a step is bound by memory:
  the memory efficiency alone, fitted to the even-numbered configurations of each file
  (the odd ones held out). Its compute efficiency and roofline exponent are carried.

An architecture's value its GPU does not determine is carried: the mean of the
architectures that fit it. Leaving a GPU out, its efficiencies become the mean of the
other GPUs' fits, exactly as a GPU of an unprofiled architecture would get them, and its
own measurements are predicted with them: the rows of this case. The kernel times are
predicted without host overheads (they hold none); the H100's latencies by the engine's
steady state (cosim/validation/_mlenergy.py)."""

from __future__ import annotations

import dataclasses
import functools
import statistics
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..config.hardware import load_device, load_link, load_model
from ..devices._architecture import KERNEL_EFFICIENCIES
from ..fit._layer_times import load_layer_times
from ..fit._models import gpu_problem
from ..fit._operator_points import operator_points
from ..fit._solver import Fit, Param, least_squares
from . import _mlenergy

CASE = "gpu-carry-over"
# The dense models ML.ENERGY ran on one H100, and the most sequences at which a step is
# still bound by memory (its weights read once per step outweigh its attention and GEMMs).
H100_MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B")
H100_MAX_SEQS = 32
# Where every fit starts: the shipped values play no part in the fits that set them.
START = {"memory_efficiency": 0.7, "compute_efficiency": 0.7, "roofline_exponent": 2.0}


def _data(*parts: str) -> Path:
    return Path(str(resources.files("cosim") / "data" / "validation")).joinpath(*parts)


@dataclass(frozen=True)
class Problem:
    """One GPU's measured points and the GPU model's prediction of them from its efficiencies."""

    labels: tuple[str, ...]
    measured: np.ndarray                            # seconds
    predict: Callable[[dict[str, float]], np.ndarray]
    in_fit: tuple[bool, ...]                        # the points its own fit reads


def _kernel_problem(device: str, model: str, measured: Path) -> Problem:
    cfg, spec = load_device(device), load_model(model)
    profile = (operator_points(measured, cfg, spec) if measured.is_dir()
               else load_layer_times(measured).profile(spec.layers))
    _, predict, seconds = gpu_problem(cfg, spec, profile, list(KERNEL_EFFICIENCIES), kernels_only=True)
    labels = tuple(f"{phase} {tokens} token{'s' if tokens > 1 else ''} at context {context}"
                   for phase, tokens, context, _ in profile.rows)
    return Problem(labels, seconds, predict, (True,) * len(labels))


def _h100_problem() -> Problem:
    device = _mlenergy.benchmark_device(load_device("h100-sxm"))  # its sampler as the benchmark ran it
    link = load_link(device.peer_link)
    points = []
    for path in sorted(_mlenergy.folder().glob("*.json")):
        data, configs = _mlenergy.read(path)
        if data["model_id"] not in H100_MODELS:
            continue
        model, prompt = load_model(_mlenergy.MODELS[data["model_id"]]), _mlenergy.PROMPT_TOKENS[data["task"]]
        for i, config in enumerate(configs):
            if config.tensor_parallel == 1 and config.max_num_seqs <= H100_MAX_SEQS:
                name = f"median ITL {data['model_id'].split('/')[-1]} {data['task']}, {config.max_num_seqs} seqs"
                points.append((name, _mlenergy.fitted(i), model, prompt, config))

    def predict(values: dict[str, float]) -> np.ndarray:
        gpu = dataclasses.replace(device, gpu=dataclasses.replace(device.gpu, **values))
        return np.array([_mlenergy.predicted_step_ns(gpu, model, link, config, prompt) * 1e-9
                         for _, _, model, prompt, config in points])

    return Problem(tuple(p[0] for p in points), np.array([p[4].median_itl_ms * 1e-3 for p in points]), predict,
                   tuple(p[1] for p in points))


@dataclass(frozen=True)
class Profiled:
    """A GPU the project has measurements of, and the architecture they determine."""

    device: str
    label: str
    architecture: str
    measurements: str                   # in words
    fits: tuple[str, ...]               # the efficiencies its measurements determine
    problem: Callable[[], Problem]


PROFILED = (
    Profiled("rtx3090", "RTX 3090", "ampere", "LLMServingSim layer times, Llama-3.1-8B", KERNEL_EFFICIENCIES,
             lambda: _kernel_problem("rtx3090", "llama-3.1-8b", _data("rtx3090-llama-3.1-8b", "layers.csv"))),
    Profiled("rtx4090", "RTX 4090", "ada", "LLMServingSim operator profile, Llama-3.1-8B", KERNEL_EFFICIENCIES,
             lambda: _kernel_problem("rtx4090", "llama-3.1-8b", _data("rtx4090-llama-3.1-8b", "profile"))),
    Profiled("rtx-pro-6000", "RTX PRO 6000", "blackwell", "LLMServingSim operator profile, Qwen3-30B-A3B (MoE)",
             KERNEL_EFFICIENCIES,
             lambda: _kernel_problem("rtx-pro-6000", "qwen3-30b-a3b", _data("rtxpro6000-qwen3-30b-a3b", "profile"))),
    Profiled("h100-sxm", "H100 SXM", "hopper", "ML.ENERGY median ITL, dense models, 8-32 sequences",
             ("memory_efficiency",), _h100_problem),
)


@functools.lru_cache(maxsize=1)
def problems() -> dict[str, Problem]:
    return {p.device: p.problem() for p in PROFILED}


def carried(fits: dict[str, dict[str, float]], without: str | None = None) -> dict[str, float]:
    """Each efficiency as the mean of the GPUs that fit it, ``without`` one of them."""
    out = {}
    for name in KERNEL_EFFICIENCIES:
        values = [f[name] for device, f in fits.items() if device != without and name in f]
        out[name] = statistics.fmean(values)
    return out


def _fit(profiled: Profiled, others: dict[str, float]) -> Fit:
    problem = problems()[profiled.device]
    chosen = [i for i, used in enumerate(problem.in_fit) if used]
    params = [Param(name, START[name], "positive" if name == "roofline_exponent" else "fraction")
              for name in profiled.fits]

    def predict(values: dict[str, float]) -> np.ndarray:
        return problem.predict({**others, **values})[chosen]

    return least_squares(params, predict, problem.measured[chosen])


@functools.lru_cache(maxsize=1)
def fits() -> dict[str, Fit]:
    """Each profiled GPU's own fit. A GPU that fits only some efficiencies is fitted with the
    others at the mean of the GPUs that fit them all (its architecture carries those)."""
    full = {p.device: _fit(p, {}) for p in PROFILED if p.fits == KERNEL_EFFICIENCIES}
    means = carried({device: fit.values for device, fit in full.items()})
    partial = {p.device: _fit(p, means) for p in PROFILED if p.fits != KERNEL_EFFICIENCIES}
    return {p.device: full.get(p.device) or partial[p.device] for p in PROFILED}


def own_values(device: str) -> dict[str, float]:
    """The efficiencies a profiled GPU's architecture gets: its own fit, the rest carried."""
    fitted = {d: f.values for d, f in fits().items()}
    return {**carried(fitted), **fitted[device]}


def left_out_values(device: str) -> dict[str, float]:
    """The efficiencies the GPU would get if it had not been profiled: the others' means."""
    return carried({d: f.values for d, f in fits().items()}, without=device)


def errors(device: str, values: dict[str, float]) -> np.ndarray:
    problem = problems()[device]
    return problem.predict(values) / problem.measured - 1


def rows() -> list[dict[str, Any]]:
    out = []
    for profiled in PROFILED:
        problem = problems()[profiled.device]
        predicted = problem.predict(left_out_values(profiled.device))
        for label, measured, value in zip(problem.labels, problem.measured, predicted):
            out.append({"case": f"{CASE} ({profiled.label} left out)", "quantity": label, "unit": "ms",
                        "measured": measured * 1e3, "predicted": value * 1e3})
    return out


def table() -> list[dict[str, Any]]:
    """Per profiled GPU: its fit and its errors with its own efficiencies and left out."""
    out = []
    for profiled in PROFILED:
        own, out_of = errors(profiled.device, own_values(profiled.device)), \
            errors(profiled.device, left_out_values(profiled.device))
        fit = fits()[profiled.device]
        out.append({"gpu": profiled.label, "architecture": profiled.architecture, "points": len(own),
                    "measurements": profiled.measurements, "values": own_values(profiled.device),
                    "sigmas": fit.sigmas, "left_out_values": left_out_values(profiled.device),
                    "own_median": float(np.median(np.abs(own))), "own_worst": float(own[np.argmax(np.abs(own))]),
                    "left_out_median": float(np.median(np.abs(out_of))),
                    "left_out_worst": float(out_of[np.argmax(np.abs(out_of))])})
    return out
