"""Validation against measured hardware: each case module puts the simulator's predictions
beside measurements others made (docs/validation.md), and `cosim validate` runs them all.

A case is a private module of this package with a function ``rows()`` returning a list
of dicts with the keys ``case``, ``quantity``, ``unit``, ``measured`` and ``predicted``;
the error (predicted / measured - 1) is computed here. Registering a case is one line in
CASES.
"""

from __future__ import annotations

import importlib
from importlib import resources
from pathlib import Path
from typing import Iterable

from ..errors import ConfigError
from ._figure import figure_png, write_figure
from ._table import Row, check_row, csv_text, format_table, summary

# The shipped cases, in the table's order: module (in this package) and what it checks.
CASES: dict[str, str] = {
    "_rtx3090_layers": "RTX 3090 Llama-3.1-8B forward passes (LLMServingSim layer times) against the roofline",
    "_qwen_a100": "Qwen2.5 batch-1 vLLM decode speeds on an A100 against its roofline and overheads",
    "_fpga_designs": "FlexLLM's U280 decoder and a V80 design against FlexLLM's published ratios and power log",
    "_vllm_serving": "a vLLM serving run on an RTX 4090 (Llama-3.1-8B, 300 requests) replayed by the vLLM engine",
    "_moe_serving": "a vLLM serving run of the MoE Qwen3-30B-A3B on two RTX PRO 6000s (data and expert parallel, "
                    "300 requests) replayed by the vLLM engine",
    "_mlenergy": "ML.ENERGY's vLLM runs on H100 (dense and MoE, tensor and expert parallel, MXFP4): median "
                 "inter-token latency, power and energy per token against the engine's steady state",
    "_carry_over": "each profiled GPU (RTX 3090, RTX 4090, RTX PRO 6000, H100) predicted with the kernel "
                   "efficiencies of the others, as an unprofiled GPU would be",
    "_spec_decode": "EAGLE-3 in vLLM on Llama-3.1-8B: throughput speedups by batch size on an RTX 3090 and the batch-1 "
                    "decode rate on an H100, against the speculative-decoding system",
}

__all__ = ["CASES", "FILES", "Row", "case_names", "check_row", "csv_text", "figure_png", "format_table", "inputs",
           "run", "summary", "user_rows", "write_figure"]

# What `cosim validate` writes in its --out folder.
FILES = ("validation.csv", "validation.json", "validation.png")


def inputs() -> dict[str, Path]:
    """What the cases read, for the output check: the package's data folder (the
    measurements, and the devices and models they are predicted with)."""
    data = Path(str(resources.files("cosim") / "data"))
    return {f"the package's data folder {data} (the measurements and the devices and models the cases use)": data}


def case_names() -> list[str]:
    """The short names `cosim validate --case` takes (the module names without the underscore)."""
    return [module.lstrip("_") for module in CASES]


def user_rows(path: str | Path, device: str | None = None, model: str | None = None
              ) -> tuple[list[dict], list[str]]:
    """A user's own measurements (``cosim validate --data``): their rows and what the
    prediction leaves out (cosim/validation/_user_data.py)."""
    from ._user_data import rows_for  # lazy: the serving run and the importer, only for a user's data
    return rows_for(path, device, model)


def run(cases: Iterable[str] | None = None) -> list[Row]:
    """The rows of the chosen cases (default: all), in registry order."""
    chosen = list(cases) if cases else case_names()
    unknown = [c for c in chosen if c not in case_names()]
    if unknown:
        raise ConfigError(f"--case: unknown case {unknown[0]!r} (cases: {', '.join(case_names())})")
    rows: list[Row] = []
    for module_name in CASES:
        if module_name.lstrip("_") not in chosen:
            continue
        module = importlib.import_module(f"{__name__}.{module_name}")
        for i, raw in enumerate(module.rows()):
            rows.append(check_row(raw, f"validation case {module_name.lstrip('_')}, row {i}"))
    return rows
