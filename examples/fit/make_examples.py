"""Writes the example measurements of `cosim fit` (README.md, docs/hardware.md): synthetic
times that cosim's own models give at known parameter values, so a fit of them has a known
answer. They stand where a user's measurements go; none of them was measured on hardware.

    python examples/fit/make_examples.py [FOLDER]   (default: this file's folder)
"""

from __future__ import annotations

import sys
from pathlib import Path

from cosim import standalone

# The U280 draft design of the built-in `u280` device at 200 MHz, with another MAC array and
# another per-layer pipeline cost than it ships with (305 and 400): what the fit recovers.
FPGA_DEVICE, FPGA_CLOCK_MHZ = "u280", 200
FPGA_TRUTH = {"macs_per_cycle": 280.0, "pipeline_cycles_per_layer": 520.0}
FPGA_CONTEXTS = [0, 256, 1024, 2048, 3000]
FPGA_PREFILLS = [16, 128, 512]
# The target model on the built-in `rtx3090`, with another overhead and other efficiencies
# than it ships with (from measured layer times): what the fit recovers.
GPU_DEVICE, GPU_MODEL = "rtx3090", "qwen2.5-math-7b"
GPU_TRUTH = {"forward_overhead_ns": 2.5e6, "memory_efficiency": 0.75, "compute_efficiency": 0.55}
GPU_POINTS = [("prefill", n, 0) for n in (16, 128, 512, 1024, 2048)] + [("decode", 1, c) for c in (128, 1024, 4000)]
FILES = {"fpga": "u280_200mhz.csv", "gpu": "rtx3090_qwen2.5-math-7b.csv"}


def fpga_rows() -> list[tuple[str, int, int, float]]:
    overrides = {f"accelerator.{k}": v for k, v in FPGA_TRUTH.items()} | {"accelerator.clock_mhz": FPGA_CLOCK_MHZ}
    ns = standalone.fpga_timing(FPGA_DEVICE, contexts=FPGA_CONTEXTS, prefill_tokens=FPGA_PREFILLS,
                                overrides=overrides)["ns"]
    rows = [("decode", 1, c, t * 1e-9) for c, t in zip(FPGA_CONTEXTS, ns)]
    return rows + [("prefill", n, 0, t * 1e-9) for n, t in zip(FPGA_PREFILLS, ns[len(FPGA_CONTEXTS):])]


def gpu_rows() -> list[tuple[str, int, int, float]]:
    ns = standalone.gpu_timing(GPU_DEVICE, GPU_MODEL, GPU_POINTS,
                               overrides={f"gpu.{k}": v for k, v in GPU_TRUTH.items()})["ns"]
    return [(p, n, c, t * 1e-9) for (p, n, c), t in zip(GPU_POINTS, ns)]


def csv_text(rows: list[tuple[str, int, int, float]]) -> str:
    return "phase,tokens,context,seconds\n" + "".join(f"{p},{n},{c},{s:.9g}\n" for p, n, c, s in rows)


def main(folder: Path) -> None:
    for kind, rows in (("fpga", fpga_rows()), ("gpu", gpu_rows())):
        (folder / FILES[kind]).write_text(csv_text(rows))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
