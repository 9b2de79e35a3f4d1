"""Case rtx3090-layers: Llama-3.1-8B forward passes on an RTX 3090, measured op by op with
the PyTorch profiler (LLMServingSim's layer times), against the GPU proxy's roofline with
the shipped rtx3090 values, host overheads aside (the measurement times kernels only).

Decode is one token at batch 1; prefills run 16 to 2,048 tokens at an empty KV cache
(the profile measured attention without one). A forward pass is every layer's ops at n
tokens, the embedding and final norm at n, and the output head at one token.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from .. import standalone
from ..config.hardware import load_model
from ..fit._layer_times import POINTS, load_layer_times

CASE = "rtx3090-layers"
DEVICE, MODEL = "rtx3090", "llama-3.1-8b"


def layer_file() -> Path:
    return Path(str(resources.files("cosim") / "data" / "validation" / "rtx3090-llama-3.1-8b" / "layers.csv"))


def rows() -> list[dict[str, Any]]:
    layers = load_layer_times(layer_file())
    model = load_model(MODEL)
    points = [("decode" if n == 1 else "prefill", n, 0) for n in POINTS]
    timing = standalone.gpu_timing(DEVICE, MODEL, points)
    out = []
    for (phase, n, _), ns in zip(points, timing["ns"]):
        quantity = "decode, 1 token" if phase == "decode" else f"prefill, {n} tokens"
        out.append({"case": CASE, "quantity": f"forward pass, {quantity}", "unit": "ms",
                    "measured": layers.forward_ns(model.layers, n) * 1e-6,
                    "predicted": (ns - timing["overhead_ns"]) * 1e-6})
    return out
