"""The files ``cosim run`` and ``cosim serve`` write outside their run folder, handled in
one place: --vcd (the waveform, with its GTKWave save file beside it) and --timeline, each
checked as an output before any work, staged in the run's folder (put in place when the
run is published) and named in the command's last line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..outputs._gtkwave import first_problem, write_gtkw
from ..outputs._guard import through_link
from ..outputs._paths import check_output
from ..outputs._safety import RunFolder


def vcd_final(path: str | Path) -> Path:
    """Where a --vcd lands: SystemC adds .vcd to a name without it."""
    given = Path(path)
    return given if given.suffix == ".vcd" else given.with_name(given.name + ".vcd")


class RunOutputs:
    """A run command's --vcd and --timeline. A command checks them in its own order (its
    other checks may come between the waveform's name and where it lands); ``outputs``
    holds them in that order for check_run_outputs, and the last line names them in it."""

    def __init__(self) -> None:
        self.outputs: dict[str, Path] = {}
        self.named: dict[str, str] = {}  # how check_run_outputs names a file written beside another
        self.vcd: Path | None = None  # where the waveform lands
        self.timeline: str | None = None  # as given: the last line names it so
        self.staged_vcd: Path | None = None
        self.staged_timeline: Path | None = None
        self._staged_gtkw: Path | None = None

    def waveform(self, given: str | None) -> Path | None:
        """Where --vcd ``given`` lands, the name as given checked first; None without one."""
        self.vcd = vcd_final(check_output(given, "--vcd")) if given else None
        return self.vcd

    def check_waveform(self) -> None:
        """The waveform where it lands and its GTKWave save file beside it, as outputs."""
        if self.vcd is not None:
            gtkw = self.vcd.with_suffix(".gtkw")
            self.outputs.update({"--vcd": check_output(self.vcd, "--vcd"),
                                 "the waveform's GTKWave file": check_output(gtkw, "--vcd")})
            self.named["the waveform's GTKWave file"] = f"--vcd {self.vcd}: its GTKWave file {gtkw}"

    def check_timeline(self, given: str | None) -> None:
        """--timeline ``given``, as an output."""
        if given:
            self.outputs["--timeline"] = check_output(given, "--timeline")
            self.timeline = given

    def stage(self, run: RunFolder) -> None:
        """Where each is written in ``run`` until it is published: the waveform, its save
        file beside it (where the waveform's writer puts one), then the timeline."""
        if self.vcd is not None:
            self.staged_vcd = run.staged(self.vcd)
            self._staged_gtkw = run.staged_beside(self.staged_vcd, self.vcd.with_suffix(".gtkw"))
        if self.timeline:
            self.staged_timeline = run.staged(Path(self.timeline))

    def write_gtkw(self, rows: Any, end_s: float, start_s: float = 0.0, slot: int | None = None) -> None:
        """The waveform's save file: the waveform runs from ``start_s`` to ``end_s`` and opens
        on the first problem of ``rows`` (served by ``slot`` when given). It names the
        waveform where it will be once the run is published, relative to itself."""
        if self.vcd is not None and self._staged_gtkw is not None:
            first = first_problem(rows, start_s, end_s, slot)
            write_gtkw(self._staged_gtkw, self.vcd, end_s * 1e12, start_s * 1e12,
                       None if first is None else (first[0] * 1e12, first[1] * 1e12),
                       final=through_link(self.vcd.with_suffix(".gtkw")))

    def wrote(self) -> str:
        """What the command's last line adds for these files, in the order they were checked."""
        parts = []
        for what in self.outputs:
            if what == "--vcd":
                parts.append(f"; waveforms {self.vcd} (GTKWave: gtkwave {self.vcd} {self.vcd.with_suffix('.gtkw')})")
            elif what == "--timeline":
                parts.append(f"; timeline {self.timeline}")
        return "".join(parts)
