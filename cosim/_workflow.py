"""Replaying a trace through a system: the description the engine takes, the
checks before a run, and the result with its waveform and timeline (the engine
call itself, with the trace streamed in, is cosim._engine_run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ._run_session import RunSession, check_replay
from .config import _params
from .errors import ConfigError
from .config._latency_csv import load_latency_profile
from .config._operator_profile import load_operator_profile
from .config.hardware import FpgaDevice, GpuDevice, fpga_profile_native
from .result import Result
from .config.scenario import Scenario
from .trace import Trace
from ._system import autoregressive_system, serving_sections
from .schema._toggles import OPTIONS


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


def options_section(scn: Scenario) -> dict[str, Any]:
    """The engine's ``options``: each option the host reads, from the scenario value its
    declaration names (cosim/schema/_toggles.py, ``Option.source``)."""
    options = {}
    for option in OPTIONS:
        if not option.read:
            continue
        section, _, name = option.source.partition(".")
        options[option.name] = getattr(scn, option.name) if option.source == "system" else \
            getattr(getattr(scn, section), name)
    # Without step-ahead nothing is drafted ahead, and no interrupted target run is kept.
    if not scn.toggles.step_ahead:
        options["step_ahead_depth"], options["prefetch_cache"] = 0, False
    return options


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
    return {
        "options": options_section(scn),
        "draft": draft_section,
        "prm": _gpu_section(scn.prm.device, scn.prm.model, scn.prm.link, scn.prm.profile),
        "target": _gpu_section(scn.target.device, scn.target.model, scn.target.link, scn.target.profile),
        **serving_sections(scn),
    }


VCD_DETAILS = ("step", "token")


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
    check_replay("simulate", scn, trace, vcd)
    if vcd_detail not in VCD_DETAILS:
        raise ConfigError(f"vcd_detail: one of {', '.join(VCD_DETAILS)}, got {vcd_detail!r}")
    session = RunSession(scn, vcd=vcd, timeline=timeline, rows_to=rows_to)
    keep = activities or session.timeline is not None
    raw = session.run(trace, system_dict(scn), keep=keep, every_token=vcd_detail == "token", progress=progress)
    result = Result.from_native(scn, raw)
    session.publish(raw["last_end_s"], result=result)
    return result
