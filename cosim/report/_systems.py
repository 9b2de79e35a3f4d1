"""The systems the report compares and the one colour each has in every figure: a reader
who learns that heteroreason-u280-200 is green finds it green in the bars, the sweeps, the
accuracy-latency curves, the design space and the serving curves."""

from __future__ import annotations

# The systems the report compares, in its order: built-in scenarios (cosim/data/scenarios),
# each run on both configs; a forward-only one (algorithm: rsd) replays the RSD run.
SYSTEMS = ("gpu-baseline", "gpu-stepahead", "heteroreason-u280-200", "heteroreason-u280-300",
           "heteroreason-u280-flexllm", "heteroreason-v80", "heteroreason-nobacktrack", "heteroreason-jetson",
           "heteroreason-vanilla")

# Each system's colour (matplotlib's tab10, in the order above), declared once: every figure
# takes a system's colour from here, never from matplotlib's colour cycle, so a figure that
# leaves a system out does not shift the others' colours.
COLORS: dict[str, str] = dict(zip(SYSTEMS, (
    "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
    "tab:olive")))

# What is drawn but is no system (the design space's swept MAC array): a colour none of them has.
NOT_A_SYSTEM = "black"
# The devices' shares of the baseline's busy time: greys, so no share reads as a system.
PART_COLORS = {"draft": "0.15", "prm": "0.38", "target": "0.7"}


def color(system: str) -> str:
    """The colour of ``system`` (one of SYSTEMS) in every figure."""
    return COLORS[system]
