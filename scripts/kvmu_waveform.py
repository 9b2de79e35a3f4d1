"""Draws docs/kvmu_waveform.png: the KVMU's RTL (rtl/kvmu.v) in its cocotb test on Icarus
Verilog, through accept, rollback and backtrack, as GTKWave shows it.

    python scripts/kvmu_waveform.py [--out docs/kvmu_waveform.png] [--keep DIR]
    python scripts/kvmu_waveform.py --cosim docs/kvmu_rtl_cosim.png


It runs the testbench's hand-worked sequence (rtl/tests/kvmu_tb.py) with a waveform dump,
writes a GTKWave save file for the block's pins, and has GTKWave, under a virtual X
server (xvfb-run), grab its window to the PNG. Needs iverilog, cocotb, gtkwave and
xvfb-run; `--keep` leaves the waveform (FST) and the save file in DIR.

`--cosim PNG` draws instead one Math500-profile problem through heteroreason-u280-300 with
`fpga.kvmu: rtl` (token detail): the VCD's model KVMU signals and, under them, the
Verilated block's pins, as the run's own GTKWave save file shows them.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "rtl" / "tests"))

from cocotb_suite import missing_tools, run_suite  # noqa: E402

COMMANDS = ["nop", "init", "spec", "end_step", "accept", "rollback", "clear", "depth"]
MODES = ROOT / "cosim" / "data" / "gtkwave" / "kvmu_mode.txt"
# (signal below the dump's top scope, width, how to show it); "-" rows are comments.
SIGNALS = [
    ("clk", 1, "bit"), ("rst_n", 1, "bit"), ("cmd", 3, "cmd"), ("cmd_arg", 32, "dec"), ("tok_we", 1, "bit"),
    ("tok_pcie", 1, "bit"), ("-pointers", 0, ""), ("valid_ptr", 32, "dec"), ("curr_ptr", 32, "dec"),
    ("ahead_ptr", 32, "dec"), ("-mode and MUX", 0, ""), ("mode", 2, "mode"), ("mux_pcie", 1, "bit"),
    ("following", 1, "bit"), ("drafting", 1, "bit"), ("err", 1, "bit"),
]


def save_file(vcd: Path, commands: Path) -> str:
    lines = ["[*] GTKWave save file: the KVMU's pins through accept, rollback and backtrack",
             f'[dumpfile] "{vcd}"', "[size] 1400 530", "[signals_width] 200", "[sst_width] 1", "[sst_expanded] 0"]
    filters = {"cmd": (1, commands), "mode": (2, MODES)}
    for name, width, show in SIGNALS:
        if name.startswith("-"):
            lines += ["@200", name]
            continue
        ref = f"kvmu.{name}" + (f"[{width - 1}:0]" if width > 1 else "")
        if show == "bit":
            lines += ["@28", ref]
        elif show == "dec":
            lines += ["@24", ref]
        else:
            index, path = filters[show]
            lines += ["@2024", f"^{index} {path}", ref]
    return "\n".join(lines) + "\n"


def grab(png: Path, waves: Path, save: Path, work: Path, screen: str) -> bool:
    """Has GTKWave (under a virtual X server) open ``waves`` with ``save`` and write its window to ``png``."""
    png.parent.mkdir(parents=True, exist_ok=True)
    script = work / "grab.tcl"
    script.write_text(f"gtkwave::/Time/Zoom/Zoom_Best_Fit\ngtkwave::/File/Grab_To_File {png}\ngtkwave::/File/Quit\n")
    run = subprocess.run(["xvfb-run", "-a", "-s", f"-screen 0 {screen}x24", "gtkwave", "-S", str(script), str(waves),
                          str(save)], capture_output=True, text=True, timeout=300)
    if run.returncode != 0 or not png.exists():
        print(f"kvmu_waveform: gtkwave failed: {run.stderr[-800:]}", file=sys.stderr)
        return False
    return True


def cosim_picture(png: Path, work: Path) -> int:
    import cosim

    scn = cosim.load_scenario("heteroreason-u280-300").with_value("fpga.kvmu", "rtl")
    vcd = work / "run.vcd"
    cosim.simulate(scn, cosim.trace.generate("math500", 1, seed=3), vcd=vcd, vcd_detail="token")
    if not grab(png, vcd, vcd.with_suffix(".gtkw"), work, "1400x900"):
        return 1
    print(f"wrote {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "kvmu_waveform.png")
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--cosim", type=Path, default=None, metavar="PNG")
    args = parser.parse_args(argv)
    lacking = (None if args.cosim else missing_tools()) or next(
        (f"{tool} is not installed" for tool in ("gtkwave", "xvfb-run") if shutil.which(tool) is None), None)
    if lacking:
        print(f"kvmu_waveform: {lacking}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.cosim:
            return cosim_picture(args.cosim.resolve(), work)
        vcd = (work / "kvmu.fst").resolve()  # Icarus under cocotb dumps FST, which GTKWave reads
        dump = work / "kvmu_dump.v"
        dump.write_text(f'`timescale 1ns/1ps\nmodule kvmu_dump;\n  initial begin\n    $dumpfile("{vcd}");\n'
                        f"    $dumpvars(0, kvmu);\n  end\nendmodule\n")
        outcome = run_suite(work / "build", testcase="hand_worked_sequence", extra_files=(dump,),
                            toplevels=("kvmu_dump",), dumps=True)
        if outcome.get("hand_worked_sequence", "did not run") is not None or not vcd.exists():
            print(f"kvmu_waveform: the cocotb run failed: {outcome}", file=sys.stderr)
            return 1
        commands = work / "kvmu_cmd.txt"
        commands.write_text("".join(f"{i} {name}\n" for i, name in enumerate(COMMANDS)))
        gtkw = work / "kvmu.gtkw"
        gtkw.write_text(save_file(vcd, commands))
        png = args.out.resolve()
        if not grab(png, vcd, gtkw, work, "1400x530"):
            return 1
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
