"""One engine run as ``simulate``, ``serve.run`` and ``cosimulate`` make it: the checks
before any work, the engine in its worker (cosim/engine/_engine_run.py, which runs it through
cosim.engine._isolation.run_isolated), and the outputs beside the result: the waveform, which
SystemC writes under a hidden partial name and which is put in place only once whole, and
the timeline, written from the result."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import systems
from . import _preflight
from ._engine_run import run_engine
from ..config.scenario import Scenario
from ..errors import ConfigError, OutputError
from ..outputs._atomic import writable_file, writable_folder
from ..outputs._guard import through_link
from ..outputs._gtkwave import first_problem, write_gtkw
from ..outputs._paths import clean_stale_staging
from ..outputs._timeline import write_timeline
from ..result import Result
from ..trace import Trace

# The comment the native waveform writer puts last (before the final time stamp).
VCD_END = re.compile(rb"\$comment\nheteroreason-cosim: end of waveform\n\$end\n\n(#\d+\n)?$")


def check_replay(caller: str, scn: Any, trace: Any, vcd: Any) -> None:
    """What a run replaying ``trace`` checks before any work (``caller`` names it in the
    messages): the scenario, the trace and their limits (cosim/engine/_preflight.py), and a
    waveform only from a system that writes one."""
    _preflight.check_replay(caller, scn, trace)
    if vcd is not None and not systems.of(scn).waveforms:
        raise ConfigError(f"vcd: the {scn.system} system writes no waveform; a timeline shows its requests")


def vcd_paths(vcd: str | Path | None) -> tuple[str, Path | None, Path | None]:
    """The stem SystemC writes a waveform under (a hidden partial file), that file, and
    where it goes once the run is through; ("", None, None) without a waveform."""
    if vcd is None:
        return "", None, None
    vcd_path = writable_file(vcd, "vcd")  # as given: a device or folder is refused, not written beside
    # SystemC appends ".vcd" itself. It writes a hidden partial file, renamed once the run
    # is through: a run that fails midway (a bad problem found while streaming) leaves an
    # earlier waveform at that path as it was.
    stem = vcd_path.with_suffix("") if vcd_path.suffix == ".vcd" else vcd_path
    final = through_link(writable_file(stem.with_name(stem.name + ".vcd"), "vcd"))  # a link stays a link
    stem = final.with_suffix("")
    clean_stale_staging(final)  # a killed run's partial waveform
    partial_stem = stem.with_name(f".{stem.name}.partial-{os.getpid()}")
    return str(partial_stem), partial_stem.with_name(partial_stem.name + ".vcd"), final


def publish_vcd(partial: Path, final: Path, end_s: float, start_s: float = 0.0,
                first_s: tuple[float, float] | None = None) -> None:
    """The finished waveform in place, with its GTKWave save file beside it (the waveform
    runs from ``start_s`` to ``end_s``; it opens on the first problem, ``first_s``)."""
    _put_in_place(partial, final)
    first_ps = None if first_s is None else (first_s[0] * 1e12, first_s[1] * 1e12)
    write_gtkw(final.with_suffix(".gtkw"), final, end_s * 1e12, start_s * 1e12, first_ps)


def _put_in_place(partial: Path, final: Path) -> None:
    """Renames a finished waveform into place once it is known whole and on disk; SystemC's
    writer ignores write errors, so a file without its last comment was cut short."""
    try:
        with partial.open("rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 256))
            whole = VCD_END.search(handle.read()) is not None
            os.fsync(handle.fileno())
        if not whole:
            raise OutputError(f"{final}: the waveform was not written whole (a full disk or a file size limit?)")
        os.replace(partial, final)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"{final}: writing the waveform failed: {exc.strerror or exc}") from None


class RunSession:
    """The outputs of one run, checked before it: ``vcd`` (staged, published by
    ``publish``), ``timeline`` (written from the result by ``publish``) and ``rows_to``
    (the folder the rows stream to), checked in that order."""

    def __init__(self, scn: Scenario, *, vcd: str | Path | None = None, timeline: str | Path | None = None,
                 rows_to: str | Path | None = None):
        self.scn = scn
        self.vcd_stem, self.vcd_partial, self.vcd_final = vcd_paths(vcd)
        self.timeline = writable_file(timeline, "timeline") if timeline is not None else None
        self.rows_folder = writable_folder(rows_to, "rows_to") if rows_to is not None else None

    def run(self, trace: Trace, system: dict[str, Any], *, staged: Path | None = None,
            **options: Any) -> dict[str, Any]:
        """The engine's answer (cosim.engine._engine_run.run_engine, with this run's waveform stem
        and rows folder). If the run fails, the partial waveform goes, and ``staged`` (a
        file the run was writing) with it."""
        try:
            return run_engine(self.scn, trace, system, vcd_stem=self.vcd_stem, rows_folder=self.rows_folder,
                              **options)
        except BaseException:
            for partial in (self.vcd_partial, staged):
                if partial is not None:
                    partial.unlink(missing_ok=True)
            raise

    def publish(self, end_s: float, start_s: float = 0.0, result: Result | None = None, rows: Any = None,
                slot: int | None = None) -> None:
        """The waveform in place (from ``start_s`` to ``end_s``, opening on the first problem
        of ``rows``, served by ``slot`` when given; ``rows`` defaults to ``result``'s), and the
        timeline of ``result`` written, each where one was asked for."""
        if self.vcd_partial is not None:
            rows = result.per_problem if rows is None and result is not None else rows
            first = None if rows is None else first_problem(rows, start_s, end_s, slot)
            publish_vcd(self.vcd_partial, self.vcd_final, end_s, start_s, first)
        if self.timeline is not None and result is not None:
            write_timeline(result, self.timeline,
                           {role: getattr(self.scn, role).device.name for role in systems.of(self.scn).roles})
