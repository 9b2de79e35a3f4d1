"""The installed C++ library loaded into Python with cppyy, as pysystemc users load it.

Optional: it skips, saying why, without cppyy (`pip install cppyy`) or without an installed
library; scripts/cpp_check.sh (run by `bootstrap.sh test` before pytest) installs one into
build/cpp-check/prefix, and COSIM_CPP_PREFIX names another. cppyy runs in a process of its
own: the SystemC kernel elaborates once per process.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PREFIX = Path(os.environ.get("COSIM_CPP_PREFIX", ROOT / "build" / "cpp-check" / "prefix"))


def test_cppyy_instantiates_the_installed_models():
    if importlib.util.find_spec("cppyy") is None:
        pytest.skip("cppyy is not installed (pip install cppyy)")
    if not (PREFIX / "lib" / "libheteroreason_models.so").exists():
        pytest.skip(f"no installed C++ library in {PREFIX} (scripts/cpp_check.sh installs one)")
    # cppyy's first start builds its precompiled header: a bound ten times the usual minute.
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "cppyy_models.py"), str(PREFIX)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # 32 pseudo-channels x 14.375 GB/s x 0.5 = 230 bytes per ns.
    assert "hbm: 2300 bytes stream in 10.0 ns" in lines
    # 1000 ns + 1200 B / (16 GB/s x 0.75); the second transfer waits for the first.
    assert "pcie: transfers of 1200 bytes end at 1100.0 and 2200.0 ns" in lines
    assert "kernel time: 2200.0 ns" in lines
    assert "pcie: 2 transfers, 2400 bytes towards the device" in lines
