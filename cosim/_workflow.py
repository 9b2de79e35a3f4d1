"""Replaying a trace through a system: the description the engine takes, the
checks before a run, and the result with its waveform and timeline (the engine
call itself, with the trace streamed in, is cosim._engine_run)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from . import _preflight
from ._engine_run import CHUNK_PROBLEMS, run_engine  # noqa: F401 - CHUNK_PROBLEMS re-exported
from .config import _params
from .outputs._atomic import writable_file, writable_folder
from .outputs._guard import through_link
from .outputs._paths import clean_stale_staging
from .outputs._gtkwave import write_gtkw
from .outputs._timeline import write_timeline
from .errors import ConfigError, OutputError
from .config._latency_csv import load_latency_profile
from .config._operator_profile import load_operator_profile
from .config.hardware import FpgaDevice, GpuDevice, fpga_profile_native
from .result import Result
from .config.scenario import Scenario
from .trace import Trace
from ._system import autoregressive_system, host_link_section, serving_sections

def profile_native(profile: str | None, model: Any) -> Any:
    """A role's measured profile as the native models take it: a latency CSV's rows, or a
    folder's operator profile for the role's model."""
    if profile is None:
        return None
    if Path(profile).is_dir():
        return load_operator_profile(profile, model).native()
    return load_latency_profile(profile).native()


def _gpu_section(device: GpuDevice, model: Any, link: Any, profile: str | None = None) -> dict[str, Any]:
    return {"gpu": _params.native(device.gpu), "power": _params.native(device.power),
            "model": _params.native(model), "link": _params.native(link),
            "profile": profile_native(profile, model)}


def system_dict(scn: Scenario) -> dict[str, Any]:
    """The flat description the native engine takes."""
    if scn.system == "autoregressive":
        t = scn.target
        return autoregressive_system(scn, _gpu_section(t.device, t.model, t.link, t.profile))
    draft = scn.draft
    if isinstance(draft.device, FpgaDevice):
        # The draft model's phase-1 prompt prefill runs on the target GPU, in BF16.
        prefill_gpu = _params.native(scn.target.device.gpu)
        draft_section = {"kind": "fpga", "fpga": _params.native(draft.device.accelerator),
                         "hbm": _params.native(draft.device.hbm), "prefill_gpu": prefill_gpu,
                         "fpga_profile": fpga_profile_native(draft.device),
                         "power": _params.native(draft.device.power), "model": _params.native(draft.model),
                         "link": _params.native(draft.link)}
    else:
        draft_section = {"kind": "gpu", **_gpu_section(draft.device, draft.model, draft.link, draft.profile)}
    t = scn.toggles
    return {
        "options": {
            "sequential": scn.sequential,
            "step_ahead_depth": t.step_ahead_depth if t.step_ahead else 0,
            "step_ahead_refine": t.step_ahead,
            "target_ahead_after_refine": t.target_ahead_after_refine,
            "prefetch_cache": t.prefetch_cache and t.step_ahead,
            "shadow_sync": t.shadow_sync,
            "prm_prefix_cache": scn.serving.prm_prefix_cache,
            "token_bytes": scn.serving.token_bytes,
            "control_bytes": scn.serving.control_bytes,
        },
        "draft": draft_section,
        "prm": _gpu_section(scn.prm.device, scn.prm.model, scn.prm.link, scn.prm.profile),
        "target": _gpu_section(scn.target.device, scn.target.model, scn.target.link, scn.target.profile),
        **serving_sections(scn),
        "host_links": host_link_section(scn),
    }


VCD_DETAILS = ("step", "token")
# The comment the native waveform writer puts last (before the final time stamp).
VCD_END = re.compile(rb"\$comment\nheteroreason-cosim: end of waveform\n\$end\n\n(#\d+\n)?$")


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


def publish_vcd(partial: Path, final: Path, end_s: float, start_s: float = 0.0) -> None:
    """The finished waveform in place, with its GTKWave save file beside it (opening on
    ``start_s`` to ``end_s``)."""
    _publish_vcd(partial, final)
    write_gtkw(final.with_suffix(".gtkw"), final, end_s * 1e12, start_s * 1e12)


def _publish_vcd(partial: Path, final: Path) -> None:
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


def simulate(scn: Scenario, trace: Trace, *, vcd: str | Path | None = None, timeline: str | Path | None = None,
             activities: bool = False, vcd_detail: str = "step", rows_to: str | Path | None = None,
             progress: Callable[[int], None] | None = None) -> Result:
    """Replays the whole trace through the scenario's system in one SystemC elaboration.

    ``vcd``: write SystemC waveforms there (KVMU pointers and mode, MUX, device
    states and power in W, step, PCIe bytes in flight; a GTKWave save file beside
    it); ``vcd_detail="step"``
    moves the draft device's pointers at each step boundary and verdict and shows
    shadow sync as one summary state (4) with its mean power; ``"token"`` shows
    every drafted token and shadow-sync pass (a time stamp each, several times
    slower). Timing and results are the same either way. ``timeline``: write a
    Perfetto trace-event JSON there. ``activities``: keep every device activity
    and KVMU verdict in the result (implied by ``timeline``). ``rows_to``: a folder
    where the per-problem rows are written (per_problem.csv and per_problem.arrow)
    as the problems finish, so memory stays flat however long the trace; the
    result's ``per_problem`` then reads that Arrow file. ``progress``: called with
    the number of problems finished so far, every few hundred problems.
    """
    _preflight.check_replay("simulate", scn, trace)
    if vcd is not None and scn.system == "autoregressive":
        raise ConfigError("vcd: the autoregressive system writes no waveform; a timeline shows its requests")
    if vcd_detail not in VCD_DETAILS:
        raise ConfigError(f"vcd_detail: one of {', '.join(VCD_DETAILS)}, got {vcd_detail!r}")
    vcd_stem, vcd_partial, vcd_final = vcd_paths(vcd)
    timeline_path = writable_file(timeline, "timeline") if timeline is not None else None
    rows_folder = writable_folder(rows_to, "rows_to") if rows_to is not None else None
    keep = activities or timeline_path is not None
    system = system_dict(scn)
    every_token = vcd_detail == "token"

    try:
        raw = run_engine(scn, trace, system, keep=keep, vcd_stem=vcd_stem, every_token=every_token,
                         rows_folder=rows_folder, progress=progress)
    except BaseException:
        if vcd_partial is not None:
            vcd_partial.unlink(missing_ok=True)
        raise
    result = Result.from_native(scn, raw)
    if vcd_partial is not None:
        publish_vcd(vcd_partial, vcd_final, raw["last_end_s"])
    if timeline_path is not None:
        labels = {role: getattr(scn, role).device.name for role in ("draft", "prm", "target")}
        write_timeline(result, timeline_path, labels)
    return result
