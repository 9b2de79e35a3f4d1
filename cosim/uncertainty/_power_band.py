"""The power model's uncertainty on an energy figure: every power parameter the scenario's
devices declare a range for set to the low end of its range, then all to the high end, and
the scenario run again on the same workload.

Why two runs bound every combination: a device's power rises with each of its power
parameters. A state's watts are its power; the load model's busy power is
idle x e^-L + limit x (1 - e^-L), L = busy_load + compute_load x Uc + memory_load x Um,
which rises with idle, limit and each load (Uc and Um are the work's, not the power's);
an FPGA design's busy power is idle + (MAC energy x MACs + memory energy x bits) / time,
which rises with idle and each energy.
Energy is power integrated over the run's timeline, and no timing reads a power
parameter, so the timeline is the same at every point of the ranges: the energy at all
lows and at all highs are the least and the most any combination gives. Ranges declared
with a source (the fitted load coefficients' two standard errors) count as estimates' do."""

from __future__ import annotations

from typing import Any, Callable

from ..config.scenario import Scenario
from ._factors import Factor, apply, factors


def power_factors(scn: Scenario) -> list[Factor]:
    """The factors that set a device's power: each with a declared range, in the scenario's
    devices' power sections."""
    return [f for f in factors(scn) if f.paths and all(".device.power." in p for p in f.paths)]


def power_ends(scn: Scenario) -> tuple[Scenario, Scenario] | None:
    """The scenario with every ranged power parameter at its low end, and at its high end;
    None where no power parameter declares a range."""
    chosen = power_factors(scn)
    if not chosen:
        return None
    return (apply(scn, chosen, {f.name: f.low for f in chosen}),
            apply(scn, chosen, {f.name: f.high for f in chosen}))


def band(scn: Scenario, run: Callable[[Scenario], Any], figure: Callable[[Any], float]
         ) -> tuple[float, float] | None:
    """``figure`` of ``run`` at the power parameters' low and high ends (low <= high), or None."""
    ends = power_ends(scn)
    if ends is None:
        return None
    low, high = (figure(run(s)) for s in ends)
    return low, high
