"""Case rtxpro6000-moe: a real vLLM 0.19 serving run of a mixture-of-experts model replayed
by the autoregressive system's vLLM engine (docs/validation.md). 300 ShareGPT requests at
about 10 a second to Qwen3-30B-A3B-Instruct-2507 (128 experts, 8 a token, BF16) on two RTX
PRO 6000 Blackwell GPUs, vLLM's data parallel 2 with expert parallel (LLMServingSim's
published run with its operator profile of the same GPU and model, shipped in
cosim/data/validation/rtxpro6000-qwen3-30b-a3b with LLMServingSim's MIT license). It goes
through the same reader as `cosim validate --data` (cosim/validation/_user_data.py): the
engine's settings from meta.json, the model from config.json, timed by the roofline of
the shipped rtx-pro-6000 device and by the bundle's operators (its moe.csv timing the MoE
layers at the experts each step's tokens touch)."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any

from ._user_data import bench_folder

CASE = "rtxpro6000-moe"
DEVICE = "rtx-pro-6000"


def folder() -> Path:
    return Path(str(resources.files("cosim") / "data" / "validation" / "rtxpro6000-qwen3-30b-a3b"))


@functools.lru_cache(maxsize=1)
def found() -> tuple[tuple[dict[str, Any], ...], tuple[str, ...]]:
    rows, notes = bench_folder(folder(), DEVICE, None, CASE)
    return tuple(rows), tuple(notes)


def rows() -> list[dict[str, Any]]:
    return list(found()[0])
