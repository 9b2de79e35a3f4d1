"""A folder of measured operator times (LLMServingSim's or Vidur's, docs/hardware.md) as the
forward passes the GPU proxy predicts: lone decodes at the contexts its attention was
measured at, and lone prefills at context 0 of the token counts it measured, each the sum
of its operators. Like per-layer kernel times they hold no host overhead: a fit to them
sets the efficiencies and the roofline exponent, the overheads aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._extension import native
from ..schema import _params
from ..devices._latency_csv import LatencyProfile
from ..devices._operator_profile import load_operator_profile

# Decode contexts and prefill lengths, powers of two within what profilers measure (both
# LLMServingSim's and Vidur's grids hold them or bracket them closely).
DECODE_CONTEXTS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
PREFILL_TOKENS = (16, 32, 64, 128, 256, 512, 1024, 2048)


def operator_points(folder: str | Path, device: Any, model: Any) -> LatencyProfile:
    """The folder's operator times summed into lone forward passes of ``model`` (seconds)."""
    profile = load_operator_profile(folder, model)
    points = [("decode", 1, c) for c in DECODE_CONTEXTS if c < model.context_window]
    points += [("prefill", n, 0) for n in PREFILL_TOKENS if n <= model.context_window]
    ns = native().gpu_timing(_params.native(device.gpu), _params.native(model), profile.native(), points)["ns"]
    return LatencyProfile(str(Path(folder)), tuple((p, n, c, t * 1e-9) for (p, n, c), t in zip(points, ns)))
