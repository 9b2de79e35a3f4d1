"""Synthesises rtl/kvmu.v with Yosys and reports what it costs.

    python rtl/synth.py                 generic gates (Yosys `synth`): the cell count
    python rtl/synth.py --xilinx        also mapped onto UltraScale+ primitives (`synth_xilinx
                                        -family xcup`, out of context): the LUTs and flip-flops
                                        behind the U280 estimate in docs/hardware.md
    --ptr-w N --max-depth D             the block's parameters (default 32 and 2, as co-simulated)

Yosys's own mapping, not Vivado's: an estimate of what the block needs, not a placed design.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RTL = Path(__file__).resolve().parent / "kvmu.v"


def register_bits(ptr_w: int, max_depth: int) -> int:
    """The flip-flops the RTL declares: three pointers and the marks (PTR_W each), mode (2),
    fresh, following, drafting (1 each), depth and n_marks (2 each), err (1), err_code (4)."""
    return (3 + max_depth) * ptr_w + 2 + 3 + 2 + 2 + 1 + 4


def synthesise(ptr_w: int = 32, max_depth: int = 2, xilinx: bool = False, timeout_s: float = 600) -> dict[str, int]:
    """Runs Yosys; returns the cell counts by type and their total under "cells"."""
    if shutil.which("yosys") is None:
        raise RuntimeError("yosys is not installed (Debian: apt-get install yosys)")
    flow = "synth_xilinx -family xcup -noiopad -noclkbuf -top kvmu" if xilinx else "synth -top kvmu"
    with tempfile.TemporaryDirectory() as tmp:
        stat = Path(tmp) / "stat.txt"
        script = (f"read_verilog {RTL}; chparam -set PTR_W {ptr_w} -set MAX_DEPTH {max_depth} kvmu; "
                  f"{flow}; tee -q -o {stat} stat")
        run = subprocess.run(["yosys", "-q", "-p", script], capture_output=True, text=True, timeout=timeout_s)
        if run.returncode != 0 or not stat.exists():
            raise RuntimeError(f"yosys failed ({run.returncode}): {(run.stderr or run.stdout)[-1500:]}")
        text = stat.read_text()
    counts = {"cells": int(re.search(r"Number of cells:\s+(\d+)", text).group(1))}
    for name, n in re.findall(r"^\s+(\$?\w+)\s+(\d+)\s*$", text, re.M):
        counts[name] = int(n)
    return counts


def flip_flops(counts: dict[str, int]) -> int:
    """Flip-flop cells: Yosys's generic $_*DFF*_ cells or Xilinx FD* primitives."""
    return sum(n for name, n in counts.items() if "DFF" in name or name.startswith("FD"))


def luts(counts: dict[str, int]) -> int:
    return sum(n for name, n in counts.items() if re.fullmatch(r"LUT\d", name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ptr-w", type=int, default=32)
    parser.add_argument("--max-depth", type=int, default=2)
    parser.add_argument("--xilinx", action="store_true")
    args = parser.parse_args(argv)
    try:
        generic = synthesise(args.ptr_w, args.max_depth)
        print(f"kvmu (PTR_W={args.ptr_w}, MAX_DEPTH={args.max_depth}), Yosys generic synthesis: "
              f"{generic['cells']} cells, {flip_flops(generic)} flip-flops "
              f"(the RTL declares {register_bits(args.ptr_w, args.max_depth)} register bits)")
        if args.xilinx:
            x = synthesise(args.ptr_w, args.max_depth, xilinx=True)
            carry = x.get("CARRY4", 0) + x.get("CARRY8", 0)
            muxes = sum(x.get(m, 0) for m in ("MUXF7", "MUXF8", "MUXF9"))
            print(f"UltraScale+ mapping (synth_xilinx -family xcup, out of context): {luts(x)} LUTs, "
                  f"{x.get('INV', 0)} inverters (usually absorbed into LUTs), {flip_flops(x)} flip-flops, "
                  f"{carry} carry blocks, {muxes} wide muxes")
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
