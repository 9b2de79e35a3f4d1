"""Builds rtl/kvmu.v with Icarus Verilog and runs the cocotb tests (kvmu_tb.py) through
cocotb's Python runner; used by tests/test_rtl_kvmu.py and scripts/kvmu_waveform.py.

    run_suite(build_dir) -> {test name: None if it passed, else the failure message}
"""

from __future__ import annotations

import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
RTL = HERE.parent / "kvmu.v"
TESTS = ("hand_worked_sequence", "every_mode_transition", "refusals_name_their_reason",
         "depth_two_keeps_the_marks_in_order", "reset_returns_to_the_empty_state",
         "random_stream_matches_the_reference_every_cycle")


def missing_tools() -> str | None:
    """Why the suite cannot run here, or None."""
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        return "Icarus Verilog (iverilog, vvp) is not installed (Debian: apt-get install iverilog)"
    try:
        import cocotb  # noqa: F401
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        return "cocotb is not installed (pip install 'cocotb>=2.0.1')"
    return None


def _results(xml: Path) -> dict[str, str | None]:
    outcome: dict[str, str | None] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        outcome[case.get("name", "")] = None if failure is None else (failure.get("message") or "failed")
    return outcome


def run_suite(build_dir: Path, *, ptr_w: int = 32, max_depth: int = 2, defines: dict | None = None,
              testcase: str | None = None, extra_files: tuple[Path, ...] = (), toplevels: tuple[str, ...] = (),
              env: dict[str, str] | None = None, dumps: bool = False) -> dict[str, str | None]:
    """Builds the block and runs the tests; returns each test's outcome. ``extra_files``
    and ``toplevels`` add sources and extra roots (a dump module for a waveform);
    ``dumps``: let their $dumpfile write (FST, Icarus's waveform format under cocotb)."""
    from cocotb_tools.runner import get_runner

    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner("icarus")
    build_args = [arg for top in toplevels for arg in ("-s", top)]
    runner.build(sources=[RTL, *extra_files], hdl_toplevel="kvmu", build_dir=build_dir,
                 parameters={"PTR_W": ptr_w, "MAX_DEPTH": max_depth}, defines=defines or {},
                 build_args=build_args, timescale=("1ns", "1ps"), always=True,
                 log_file=build_dir / "build.log")
    xml = build_dir / "results.xml"
    xml.unlink(missing_ok=True)
    test_env = {"KVMU_PTR_W": str(ptr_w), "KVMU_MAX_DEPTH": str(max_depth), **(env or {})}
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))  # the runner hands the simulator this process's sys.path
    try:
        runner.test(test_module="kvmu_tb", hdl_toplevel="kvmu", build_dir=build_dir, test_dir=build_dir,
                    results_xml=str(xml), testcase=testcase, extra_env=test_env, seed=1, waves=dumps,
                    log_file=build_dir / "sim.log")
    except SystemExit:
        pass  # a failing test; the results file says which
    if not xml.exists():
        log = (build_dir / "sim.log").read_text(errors="replace")[-2000:] if (build_dir / "sim.log").exists() else ""
        raise RuntimeError(f"the cocotb run left no results file; its log ends:\n{log}")
    return _results(xml)
