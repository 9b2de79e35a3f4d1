"""The installed C++ models in a pysystemc session on Python 3.14: one SystemC kernel, the
one pysystemc ships, drives them.

    python examples/pysystemc_models.py PREFIX   # PREFIX: the library built against
                                                 # pysystemc's SystemC (scripts/pysystemc_check.sh)

pysystemc loads its SystemC and starts cppyy; the library, linked against that same
libsystemc.so, is loaded into the process, its headers are included through pysystemc's
cppyy, and the models of examples/cppyy_models.py run on pysystemc's kernel. Their times
are compared with the hand-worked ones: an HBM stream of 2,300 bytes at 32 x 14.375 x 0.5
= 230 bytes/ns takes 10 ns; a PCIe transfer of 1,200 bytes at 16 x 0.75 = 12 bytes/ns after
1,000 ns of latency ends at 1,100 ns, and a second one, queued behind it, at 2,200 ns.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cppyy_models import drive  # noqa: E402 - beside this file

# The hand-worked times (ns): HBM stream, the first and the second transfer's end.
EXPECTED = {"hbm_ns": 2300 / (32 * 14.375 * 0.5), "first_ns": 1000 + 1200 / 12, "second_ns": 2 * (1000 + 1200 / 12)}


def load(prefix: str):
    import amal.eda.systemc  # noqa: F401 - loads pysystemc's SystemC and cppyy, once
    import cppyy

    ctypes.CDLL(os.path.join(prefix, "lib", "libheteroreason_models.so"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    cppyy.add_include_path(os.path.join(prefix, "include"))
    for header in ("hbm.hpp", "pcie_link.hpp", "host_dma.hpp"):
        cppyy.include(f"heteroreason/{header}")
    return cppyy.gbl


def main(prefix: str) -> int:
    print(f"Python {sys.version.split()[0]}, pysystemc {importlib.metadata.version('pysystemc')}, "
          f"cppyy {importlib.metadata.version('cppyy')}")
    found = drive(load(prefix))
    for name, value in EXPECTED.items():
        print(f"{name}: {found[name]:.1f} (hand-worked {value:.1f})")
    same = all(found[name] == value for name, value in EXPECTED.items())
    print("identical" if same else "different")
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/pysystemc_models.py PREFIX")
    sys.exit(main(sys.argv[1]))
