"""A GTKWave save file (.gtkw) beside every VCD: signals grouped by part of the system,
pointers in decimal, modes and device states by name (translate filter files shipped in
cosim/data/gtkwave), power as an analog trace in watts. It names the waveform relative to
itself, so the pair can be moved together, and opens on the first problem the waveform
shows, between markers A and B. Open it with ``gtkwave run.gtkw`` (or ``gtkwave run.vcd
run.gtkw``)."""

from __future__ import annotations

import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ._atomic import write_atomically

# GTKWave's trace flags (its save file format writes them in hex after '@').
_DEC, _RJUSTIFY, _BLANK, _FTRANSLATED = 0x4, 0x20, 0x200, 0x2000
_ANALOG_STEP, _BLANK_STRETCH, _GROUP_BEGIN, _GROUP_END = 0x8000, 0x20000, 0x800000, 0x1000000
_TOP = "SystemC"  # the scope SystemC's VCD writer puts every signal in
_ANALOG_ROWS = 4  # extra rows an analog trace spans, so its curve can be read
_WAVE_PIXELS = 830
_ZOOM_OFFSET = 7.6
_MARGIN = 0.1  # the view runs this share of the first problem past its end: its last change and marker B show
_NAMED_MARKERS = 26  # GTKWave's markers A to Z, each -1 when unset

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

# A GPU group's collectives on its PCIe link, where a run has them (docs/hardware.md,
# "Collectives on shared links"): the directions they hold.
COLLECTIVES = tuple((f"pcie.{device}_collectives", 32, "dec") for device in ("draft", "prm", "target"))


# The KVMU's RTL pins, in a run with fpga.kvmu: rtl (models/rtl/kvmu_transactor.cpp).
RTL_GROUP: tuple[str, tuple[tuple[str, int, str], ...]] = (
    "KVMU RTL pins", (("kvmu_rtl.cycles", 64, "dec"), ("kvmu_rtl.valid_ptr", 32, "dec"),
                      ("kvmu_rtl.curr_ptr", 32, "dec"), ("kvmu_rtl.ahead_ptr", 32, "dec"),
                      ("kvmu_rtl.mark", 32, "dec"), ("kvmu_rtl.n_marks", 32, "dec"),
                      ("kvmu_rtl.mode", 32, "kvmu_mode"), ("kvmu_rtl.mux_pcie", 1, "bit"),
                      ("kvmu_rtl.following", 1, "bit"), ("kvmu_rtl.drafting", 1, "bit"),
                      ("kvmu_rtl.err", 1, "bit"), ("kvmu_rtl.err_code", 32, "dec")))


def _declares(vcd: Path, text: str) -> bool:
    """Whether a line of the VCD's header holds ``text`` (read up to its end of definitions)."""
    try:
        with open(vcd, encoding="ascii", errors="replace") as f:
            for line in f:
                if text in line:
                    return True
                if "$enddefinitions" in line:
                    return False
    except OSError:
        return False
    return False


def _has_scope(vcd: Path, scope: str) -> bool:
    """Whether the VCD's header declares ``scope``."""
    return _declares(vcd, f"$scope module {scope} ")


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


def first_problem(rows: Any, start_s: float = 0.0, end_s: float = math.inf,
                  slot: int | None = None) -> tuple[float, float] | None:
    """The span (start_s, end_s) of the first problem the waveform shows: of the rows that
    overlap ``start_s`` to ``end_s`` (served by request slot ``slot`` when given), the one
    that starts first, clipped to that window; None when there is none. ``rows``: a
    result's per-problem rows, read a batch at a time so memory stays flat."""
    names = ("start_s", "end_s") + (("slot",) if slot is not None else ())
    best: tuple[float, float] | None = None
    for batch in rows.batches(names):
        begin, end = np.asarray(batch["start_s"], dtype=float), np.asarray(batch["end_s"], dtype=float)
        shown = (end > start_s) & (begin < end_s)
        if slot is not None:
            shown &= np.asarray(batch["slot"]) == slot
        if shown.any():
            i = int(np.flatnonzero(shown)[np.argmin(begin[shown])])
            if best is None or begin[i] < best[0]:
                best = (float(begin[i]), float(end[i]))
    return None if best is None else (max(best[0], start_s), min(best[1], end_s))


def _view(start_ps: float, end_ps: float, first_ps: tuple[float, float] | None) -> tuple[float, float]:
    """What the window shows when it opens: from the waveform's start to the end of the
    first problem (and a margin), or the whole waveform without one."""
    if first_ps is None:
        return start_ps, end_ps
    return start_ps, min(end_ps, first_ps[1] + _MARGIN * (first_ps[1] - first_ps[0]))


def gtkw_text(dumpfile: str, savefile: str, end_ps: float, start_ps: float = 0.0,
              first_ps: tuple[float, float] | None = None, rtl_pins: bool = False, prm: bool = True,
              collectives: tuple[str, ...] = ()) -> str:
    """The save file ``savefile`` (its name) for the waveform ``dumpfile`` (its path relative to
    the save file's folder), which runs from ``start_ps`` to ``end_ps``. It opens on the first
    problem, ``first_ps`` (start, end), marked A and B; on the whole waveform without one.
    ``rtl_pins``: add the KVMU RTL's pins (a run with fpga.kvmu: rtl); ``prm``: show the
    PRM's signals (a waveform without them is of a target that scores the drafts itself);
    ``collectives``: the links' collective signals the waveform has (GPU groups over PCIe)."""
    view_start, view_end = _view(start_ps, end_ps, first_ps)
    # GTKWave's zoom z shows 2^(-z - 7.6) time units per pixel (measured with GTKWave 3.3);
    # the wave pane of a 1400-pixel window is about 830 pixels wide.
    zoom = -math.log2(max(view_end - view_start, 1.0) / _WAVE_PIXELS) - _ZOOM_OFFSET
    markers = [-1] * _NAMED_MARKERS
    names = []
    if first_ps is not None:
        markers[:2] = [round(first_ps[0]), round(first_ps[1])]
        names = ["[markername] Afirst problem", "[markername] Bits end"]
    # GTKWave finds a relative dumpfile beside the save file through the [savefile] line.
    lines = ["[*] GTKWave save file written by heteroreason-cosim", f'[dumpfile] "{dumpfile}"',
             f'[savefile] "{savefile}"', f"[timestart] {int(view_start)}", "[size] 1400 900",
             f"*{zoom:.6f} -1 " + " ".join(str(m) for m in markers), *names, "[signals_width] 260",
             "[sst_width] 220", "[sst_expanded] 1", f"[treeopen] {_TOP}."]
    filters: dict[str, int] = {}
    groups = (GROUPS[0], RTL_GROUP, *GROUPS[1:]) if rtl_pins else GROUPS  # the pins under the model's KVMU
    shown = tuple(c for c in COLLECTIVES if c[0] in collectives)
    if shown:
        groups = (*groups, ("PCIe links (collectives: directions held)", shown))
    for title, signals in groups:
        if not prm and title == "PRM":
            continue  # a system whose target scores the drafts has no PRM signals
        lines += [f"@{_GROUP_BEGIN | _BLANK:x}", f"-{title}"]
        for name, width, show in signals:
            if not prm and name.startswith("pcie.prm"):
                continue
            lines += _trace(name, width, show, filters)
        lines += [f"@{_GROUP_END | _BLANK:x}", f"-{title}"]
    lines += ["[pattern_trace] 1", "[pattern_trace] 0"]
    return "\n".join(lines) + "\n"


def write_gtkw(path: Path, vcd: Path, end_ps: float, start_ps: float = 0.0,
               first_ps: tuple[float, float] | None = None, final: Path | None = None) -> Path:
    """Writes the save file ``path`` for the waveform ``vcd`` (from ``start_ps`` to ``end_ps``),
    opening on the first problem ``first_ps``. ``final``: where the save file will be once
    the run is published (``path`` itself by default); the waveform is named relative to it."""
    final = path if final is None else final
    # The waveform may still be staged beside the save file, under its final name later.
    rtl_pins = any(_has_scope(v, "kvmu_rtl") for v in (path.with_suffix(".vcd"), vcd))
    prm = any(_has_scope(v, "prm") for v in (path.with_suffix(".vcd"), vcd))
    collectives = tuple(name for name, _, _ in COLLECTIVES
                        if any(_declares(v, f" {name.split('.')[1]} ") for v in (path.with_suffix(".vcd"), vcd)))
    dumpfile = os.path.relpath(os.path.abspath(vcd), os.path.dirname(os.path.abspath(final)))
    return write_atomically(path, gtkw_text(dumpfile, final.name, end_ps, start_ps, first_ps, rtl_pins, prm,
                                            collectives))
