"""A GTKWave save file (.gtkw) beside every VCD: signals grouped by part of the system,
pointers in decimal, modes and device states by name (translate filter files shipped in
cosim/data/gtkwave), power as an analog trace in watts. Open both with
``gtkwave run.vcd run.gtkw``."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

from ._atomic import write_atomically

# GTKWave's trace flags (its save file format writes them in hex after '@').
_DEC, _RJUSTIFY, _BLANK, _FTRANSLATED = 0x4, 0x20, 0x200, 0x2000
_ANALOG_STEP, _BLANK_STRETCH, _GROUP_BEGIN, _GROUP_END = 0x8000, 0x20000, 0x800000, 0x1000000
_TOP = "SystemC"  # the scope SystemC's VCD writer puts every signal in
_ANALOG_ROWS = 4  # extra rows an analog trace spans, so its curve can be read
_WAVE_PIXELS = 830
_ZOOM_OFFSET = 7.6

# Per group: (signal below the top scope, its VCD width or 0 for a real, how to show it).
GROUPS: tuple[tuple[str, tuple[tuple[str, int, str], ...]], ...] = (
    ("KVMU", (("kvmu.valid", 64, "dec"), ("kvmu.curr", 64, "dec"), ("kvmu.ahead", 64, "dec"),
              ("kvmu.mark", 64, "dec"), ("kvmu.steps_ahead", 32, "dec"),
              ("kvmu.mode", 32, "kvmu_mode"), ("kvmu.mux_pcie", 1, "bit"))),
    ("Run", (("run.problem", 32, "dec"), ("run.step", 32, "dec"))),
    *((device.capitalize() if device != "prm" else "PRM",
       ((f"{device}.state", 32, "device_state"), (f"{device}.power_w", 0, "analog")))
      for device in ("draft", "prm", "target")),
    ("PCIe links (bytes in flight)", (("pcie.draft_bytes_in_flight", 64, "dec"),
                                      ("pcie.prm_bytes_in_flight", 64, "dec"),
                                      ("pcie.target_bytes_in_flight", 64, "dec"))),
)


# The KVMU's RTL pins, in a run with fpga.kvmu: rtl (models/rtl/kvmu_transactor.cpp).
RTL_GROUP: tuple[str, tuple[tuple[str, int, str], ...]] = (
    "KVMU RTL pins", (("kvmu_rtl.cycles", 64, "dec"), ("kvmu_rtl.valid_ptr", 32, "dec"),
                      ("kvmu_rtl.curr_ptr", 32, "dec"), ("kvmu_rtl.ahead_ptr", 32, "dec"),
                      ("kvmu_rtl.mark", 32, "dec"), ("kvmu_rtl.n_marks", 32, "dec"),
                      ("kvmu_rtl.mode", 32, "kvmu_mode"), ("kvmu_rtl.mux_pcie", 1, "bit"),
                      ("kvmu_rtl.following", 1, "bit"), ("kvmu_rtl.drafting", 1, "bit"),
                      ("kvmu_rtl.err", 1, "bit"), ("kvmu_rtl.err_code", 32, "dec")))


def _has_scope(vcd: Path, scope: str) -> bool:
    """Whether the VCD's header declares ``scope`` (read up to its end of definitions)."""
    try:
        with open(vcd, encoding="ascii", errors="replace") as f:
            for line in f:
                if f"$scope module {scope} " in line:
                    return True
                if "$enddefinitions" in line:
                    return False
    except OSError:
        return False
    return False


def filter_file(name: str) -> Path:
    """A translate filter shipped with the package (value, then the name GTKWave shows)."""
    return Path(str(resources.files("cosim") / "data" / "gtkwave" / f"{name}.txt"))


def signal_names() -> list[str]:
    """Every signal the save file shows, as ``scope.name`` below the top scope."""
    return [name for _, signals in GROUPS for name, _, _ in signals]


def _trace(name: str, width: int, show: str, filters: dict[str, int]) -> list[str]:
    ref = f"{_TOP}.{name}" + (f"[{width - 1}:0]" if width > 1 else "")
    if show == "analog":
        return [f"@{_ANALOG_STEP | _RJUSTIFY:x}", ref] + [f"@{_BLANK_STRETCH:x}", "-"] * _ANALOG_ROWS
    if show == "bit":
        return ["@28", ref]
    if show == "dec":
        return [f"@{_DEC | _RJUSTIFY:x}", ref]
    index = filters.setdefault(show, len(filters) + 1)
    return [f"@{_FTRANSLATED | _DEC | _RJUSTIFY:x}", f"^{index} {filter_file(show)}", ref]


def gtkw_text(vcd: Path, end_ps: float, start_ps: float = 0.0, rtl_pins: bool = False) -> str:
    """The save file for ``vcd``, zoomed to show ``start_ps`` to ``end_ps``; ``rtl_pins``:
    add the KVMU RTL's pins (a run with fpga.kvmu: rtl)."""
    # GTKWave's zoom z shows 2^(-z - 7.6) time units per pixel (measured with GTKWave 3.3);
    # the wave pane of a 1400-pixel window is about 830 pixels wide.
    zoom = -math.log2(max(end_ps - start_ps, 1.0) / _WAVE_PIXELS) - _ZOOM_OFFSET
    lines = ["[*] GTKWave save file written by heteroreason-cosim", f'[dumpfile] "{vcd.resolve()}"',
             f"[timestart] {int(start_ps)}", "[size] 1400 900", f"*{zoom:.6f} -1", "[signals_width] 260", "[sst_width] 220",
             "[sst_expanded] 1", f"[treeopen] {_TOP}."]
    filters: dict[str, int] = {}
    groups = (GROUPS[0], RTL_GROUP, *GROUPS[1:]) if rtl_pins else GROUPS  # the pins under the model's KVMU
    for title, signals in groups:
        lines += [f"@{_GROUP_BEGIN | _BLANK:x}", f"-{title}"]
        for name, width, show in signals:
            lines += _trace(name, width, show, filters)
        lines += [f"@{_GROUP_END | _BLANK:x}", f"-{title}"]
    lines += ["[pattern_trace] 1", "[pattern_trace] 0"]
    return "\n".join(lines) + "\n"


def write_gtkw(path: Path, vcd: Path, end_ps: float, start_ps: float = 0.0) -> Path:
    """Writes the save file ``path`` for the waveform ``vcd``, opening on ``start_ps`` to ``end_ps``."""
    # The waveform may still be staged beside the save file, under its final name later.
    rtl_pins = any(_has_scope(v, "kvmu_rtl") for v in (path.with_suffix(".vcd"), vcd))
    return write_atomically(path, gtkw_text(vcd, end_ps, start_ps, rtl_pins))
