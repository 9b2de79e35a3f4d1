"""Cost of a simulated draft token on the FPGA model alone, against the bare
SystemC kernel floor (one b_transport + wait per transaction, no model).

    .venv/bin/python bench/fpga_decode.py [--tokens 1000000] [--json out.json]

Prints simulated tokens per wall-second, kernel delta cycles per token, and
floor_ratio = tokens_per_s / floor_events_per_s (1.0: a token costs one bare
kernel event). Wall time is the SystemC run alone, measured inside the worker.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics

from cosim import standalone
from cosim.engine._isolation import run_isolated
from cosim._extension import native

STEP_TOKENS = 1000  # steps of 1000 tokens; the context restarts at 0 for each (KV window of 32k)


def measure(tokens: int, repeats: int) -> dict:
    floors, decodes = [], []
    for _ in range(repeats):
        floors.append(standalone.kernel_floor(tokens, 10.0))
        steps = tokens // STEP_TOKENS
        decodes.append(standalone.fpga_run("u280", "qwen2.5-0.5b", [("load", 0), ("decode", STEP_TOKENS)] * steps))
    floor = max(floors, key=lambda r: r["events_per_s"])
    best = min(decodes, key=lambda r: r["wall_s"])
    drafted = best["tokens_drafted"]
    tokens_per_s = drafted / best["wall_s"]
    return {
        "machine": platform.processor() or platform.machine(),
        "systemc": run_isolated(lambda: native().systemc_version),
        "tokens": drafted,
        "repeats": repeats,
        "floor_events_per_s": floor["events_per_s"],
        "floor_events_per_s_median": statistics.median(r["events_per_s"] for r in floors),
        "tokens_per_s": tokens_per_s,
        "kernel_deltas_per_token": best["kernel_deltas"] / drafted,
        "floor_ratio": tokens_per_s / floor["events_per_s"],
        "simulated_s": best["sim_ns"] * 1e-9,
        "wall_s": best["wall_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args()
    out = measure(args.tokens, args.repeats)
    for key, value in out.items():
        print(f"{key:28} {value:.4g}" if isinstance(value, float) else f"{key:28} {value}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=2)


if __name__ == "__main__":
    main()
