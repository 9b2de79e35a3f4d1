"""Case qwen-a100: Qwen's published batch-1 vLLM speeds of Qwen2.5-0.5B, 1.5B and 7B
(Instruct, BF16) on an A100 80 GB, against the a100-80gb device: its datasheet roofline
with the RTX 3090's fitted kernel efficiencies and its per-step overhead.

Qwen's script times one generate call: the prefill of the input and 2,047 decode steps
(the prefill gives the first of the 2,048 tokens), so the prediction is 2,048 / (the
prefill of L tokens + the decodes at contexts L + 1 .. L + 2,047), each forward pass with
its overheads. The A100's per-step overhead was inferred from the 0.5B speed at input 1
(a100-80gb.yaml), so that row is where the overhead was set; the other eleven predict.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from .. import standalone
from ..config.hardware import load_device, load_model

CASE = "qwen-a100"


def data() -> dict[str, Any]:
    path = resources.files("cosim") / "data" / "validation" / "qwen2.5-vllm-a100.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def generate_seconds(device: str, model: str, prompt: int, output: int) -> float:
    """One request alone: its prefill, then output - 1 decode steps, and the request's overhead."""
    points = [("prefill", prompt, 0)] + [("decode", 1, prompt + i) for i in range(1, output)]
    ns = standalone.gpu_timing(device, model, points)["ns"]
    return (sum(ns) + load_device(device).gpu.request_overhead_ns) * 1e-9


def rows() -> list[dict[str, Any]]:
    table = data()
    device, output = table["gpu"], int(table["output_tokens"])
    out = []
    for model, speeds in table["speeds"].items():
        name = load_model(model).name
        for prompt, measured in speeds.items():
            note = " (sets the overhead)" if (model, prompt) == ("qwen2.5-0.5b", 1) else ""
            out.append({"case": CASE, "quantity": f"{name}, input {prompt}{note}", "unit": "tok/s",
                        "measured": float(measured),
                        "predicted": output / generate_seconds(device, model, int(prompt), output)})
    return out
