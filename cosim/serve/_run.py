"""A serving run: a trace's problems as requests arriving over time (drawn at a rate,
or carried by the trace) on the scenario's cluster, and what it did: every request's
row, the serving summary (tail latency, throughput, energy, pools) and each device."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..engine import _preflight
from .._args import real, whole
from .._rows import SERVE_ROW_FIELDS
from ..engine._run_session import RunSession, check_replay
from ..engine._workflow import system_dict
from ..config.scenario import Scenario
from ..errors import ConfigError
from ..result import Activities, PerProblem
from ..trace import Trace
from ._arrivals import gamma, poisson
from ._metrics import ServeSummary, serve_summary


@dataclass
class ServeResult:
    """One serving run. ``per_request``: a row per request, in the order they finished
    (``request`` is its index in the trace), with the single-request metrics (latency
    from arrival) and where it waited and ran; ``devices``: each device over the run."""

    scenario: str
    system: str
    config: int
    summary: ServeSummary
    per_request: PerProblem
    devices: list[dict[str, Any]]
    wall_s: float = 0.0
    activities: Activities | None = None
    request_summary: dict[str, Any] = field(default_factory=dict)  # the single-request metrics over all
    last_end_s: float = 0.0  # when the last request finished, in simulated seconds

    def row(self) -> dict[str, Any]:
        """The summary as one flat row (a sweep's or a plan's)."""
        return self.summary.to_dict()


def with_arrivals(trace: Trace, rate: float | None, cv: float | None, seed: int) -> Trace:
    """The trace with arrival times: drawn at ``rate`` (Poisson, or Gamma with ``cv``), or its own."""
    if rate is None:
        if cv is not None:
            raise ConfigError("cv: applies to drawn arrivals; give a rate as well")
        if trace.arrivals() is None:
            raise ConfigError("serve: the trace carries no arrival times; give a rate (requests per second)")
        return trace
    rate = real(rate, "rate", positive=True)
    seed = whole(seed, "seed")
    times = poisson(rate, len(trace), seed) if cv is None else gamma(rate, real(cv, "cv", positive=True),
                                                                    len(trace), seed)
    return trace.with_arrivals(times)


def waveform_section(scn: Scenario, slot: Any, window_s: Any) -> dict[str, Any]:
    """The engine's waveform section: the request slot followed and the window, checked."""
    slots = int(scn.cluster.draft.devices) * int(scn.cluster.draft.contexts_per_device)
    slot = whole(slot, "vcd_slot")
    if slot >= slots:
        raise ConfigError(f"vcd_slot: {slot}, but {scn.name} has request slots 0 to {slots - 1} "
                          f"(draft devices x contexts per device)")
    start, end = 0.0, math.inf
    if window_s is not None:
        if not isinstance(window_s, (tuple, list)) or len(window_s) != 2:
            raise ConfigError(f"vcd_window_s: give (start, end) in seconds, got {window_s!r}")
        start = real(window_s[0], "vcd_window_s start")
        end = math.inf if window_s[1] is None else real(window_s[1], "vcd_window_s end", positive=True)
        if not end > start:
            raise ConfigError(f"vcd_window_s: the end ({end:g} s) must come after the start ({start:g} s)")
        for what, value in (("start", start), ("end", end)):
            if math.isfinite(value) and value > _preflight.KERNEL_CLOCK_S:
                raise ConfigError(f"vcd_window_s: the {what} ({value:g} s) is past the kernel's clock of about "
                                  f"{_preflight.KERNEL_CLOCK_S:.2g} s" + ("; leave the end out for the end of the run"
                                                                          if what == "end" else ""))
    return {"slot": slot, "start_ns": start * 1e9, "end_ns": end * 1e9}


def run(scn: Scenario, trace: Trace, *, rate: float | None = None, cv: float | None = None, seed: int = 0,
          slo_s: float | None = None, rows_to: str | Path | None = None, activities: bool = False,
          vcd: str | Path | None = None, vcd_slot: int = 0, vcd_window_s: tuple[float, float] | None = None,
          progress: Callable[[int], None] | None = None) -> ServeResult:
    """Serves ``trace``'s problems as requests on ``scn``'s cluster (its ``cluster:`` and
    ``batching:`` sections; one of each without them). Arrivals: Poisson at ``rate``
    requests per second, Gamma with coefficient of variation ``cv`` at that rate, or the
    times the trace carries (``rate`` None); ``seed`` draws them. ``slo_s``: the latency
    objective whose attainment is reported. ``rows_to``: a folder the rows stream to
    (per_request.csv and .arrow are written as per_problem.*); ``activities``: keep every
    device activity (timelines); ``vcd``: SystemC waveforms of request slot ``vcd_slot``'s
    requests and of the devices it is bound to (which other slots share), changing only
    within ``vcd_window_s`` (start, end) seconds of simulated time if given; ``progress``:
    called with the requests finished so far."""
    check_replay("serve", scn, trace, vcd)
    if slo_s is not None:
        slo_s = real(slo_s, "slo_s", positive=True)
    requests = with_arrivals(trace, rate, cv, seed)
    system = system_dict(scn)
    window = waveform_section(scn, vcd_slot, vcd_window_s)
    if vcd is not None:
        system["waveform"] = window
    session = RunSession(scn, vcd=vcd, rows_to=rows_to)
    raw = session.run(requests, system, keep=activities, progress=progress, serving=True)
    rows, n = raw["rows"], raw["summary"]["problems"]
    per_request = (PerProblem(rows, fields=SERVE_ROW_FIELDS) if isinstance(rows, dict)
                   else PerProblem(reader=rows, rows=n, fields=SERVE_ROW_FIELDS))
    start_s = window["start_ns"] / 1e9
    session.publish(max(min(raw["last_end_s"], window["end_ns"] / 1e9), start_s), start_s, rows=per_request,
                    slot=window["slot"])
    summary = serve_summary(raw["requests"], raw["devices"], slo_s=slo_s)
    acts = Activities(raw["activities"]) if "activities" in raw else None
    return ServeResult(scn.name, scn.system, scn.config, summary, per_request, raw["devices"], raw["wall_s"], acts,
                       raw["summary"], raw["last_end_s"])
