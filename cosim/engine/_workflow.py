"""Replaying a trace through a system: the description the engine takes, the
checks before a run, and the result with its waveform and timeline (the engine
call itself, with the trace streamed in, is cosim.engine._engine_run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ._run_session import RunSession, check_replay
from ..errors import ConfigError
from ..devices._latency_csv import load_latency_profile
from ..devices._operator_profile import load_operator_profile
from .. import devices, systems
from ..result import Result
from ..config.scenario import Scenario
from ..trace import Trace
from ._serving_sections import batching_section, cluster_section, serving_sections, speculation_section
from ..schema._toggles import OPTIONS


def profile_native(profile: str | None, model: Any, tensor_parallel: int = 1) -> Any:
    """A role's measured profile as the native models take it: a latency CSV's rows, or a
    folder's operator profile for the role's model (its pass at the role's degree)."""
    if profile is None:
        return None
    if Path(profile).is_dir():
        return load_operator_profile(profile, model, tensor_parallel).native()
    return load_latency_profile(profile).native()


def role_section(scn: Scenario, role: str) -> dict[str, Any]:
    """The engine's section for one role: its device kind's (cosim/devices/), with the role's
    measured profile."""
    r = getattr(scn, role)
    return devices.kind_of(r.device).native(r, scn, profile_native(r.profile, r.model, r.parallel.tensor_parallel))


def options_section(scn: Scenario) -> dict[str, Any]:
    """The engine's ``options``: each option the host reads, from the scenario value its
    declaration names (cosim/schema/_toggles.py, ``Option.source``)."""
    options = {}
    for option in OPTIONS:
        if not option.read:
            continue
        section, _, name = option.source.partition(".")
        options[option.name] = getattr(systems.of(scn), option.name) if option.source == "system" else \
            getattr(getattr(scn, section), name)
    # Without step-ahead nothing is drafted ahead, and no interrupted target run is kept.
    if not scn.toggles.step_ahead:
        options["step_ahead_depth"], options["prefetch_cache"] = 0, False
    return options


class _Sections:
    """The engine's sections of one scenario, as a system composes its description from them."""

    def __init__(self, scn: Scenario):
        self._scn = scn

    def role(self, name: str) -> dict[str, Any]:
        return role_section(self._scn, name)

    def kind(self, name: str) -> str:
        return devices.kind_of(getattr(self._scn, name).device).name

    def options(self) -> dict[str, Any]:
        return options_section(self._scn)

    def cluster(self) -> dict[str, int]:
        return cluster_section(self._scn)

    def batching(self) -> dict[str, Any]:
        return batching_section(self._scn)

    def serving(self) -> dict[str, dict[str, Any]]:
        return serving_sections(self._scn)

    def speculation(self, role: str = "target") -> dict[str, Any]:
        return speculation_section(self._scn, role)


def system_dict(scn: Scenario) -> dict[str, Any]:
    """The flat description the native engine takes: its system's (cosim/systems/)."""
    return systems.of(scn).describe(scn, _Sections(scn))


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
