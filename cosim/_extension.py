"""The compiled part of the package (cosim._native, the SystemC models behind the
bindings), loaded on first use."""

from __future__ import annotations

from typing import Any


def native() -> Any:
    """The native module. Its simulating calls run in a worker (cosim.engine._isolation.run_isolated);
    its pure timing functions (fpga_timing, gpu_timing, param_declarations) run anywhere."""
    from . import _native  # lazy: the SystemC extension loads only in a process that uses it

    return _native
