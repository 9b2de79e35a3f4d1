"""The command line's flags for the Python API's arguments: an error the API raises about
one of its arguments ("rate: must be > 0") is reported under the flag the user typed
("--rate: must be > 0"), declared once here for each command."""

from __future__ import annotations

from ..errors import CosimError

_ARRIVALS = {"rate": "--rate", "rate_per_s": "--rate", "cv": "--cv", "seed": "--seed", "n": "--requests",
             "problems": "--requests", "slo_s": "--slo"}
_WORKLOAD = {"problems": "--problems", "seed": "--seed"}
# The files a run writes beside its folder, and the folder its rows stream to (staged in --out).
_OUTPUTS = {"vcd": "--vcd", "timeline": "--timeline", "rows_to": "--out"}

FLAGS: dict[str, dict[str, str]] = {
    "serve": {**_ARRIVALS, **_OUTPUTS, "vcd_slot": "--vcd-slot", "vcd_window_s": "--vcd-window"},
    "plan": _ARRIVALS,
    "fit": {"accelerator.clock": "--clock"},
    "run": {**_WORKLOAD, **_OUTPUTS},
    "report": _WORKLOAD,
    "sweep": {**_WORKLOAD, "workers": "--workers"},
    "sensitivity": {"workers": "--workers"},
    "trace": {**_WORKLOAD, "shared_prefix_tokens": "--shared-prefix-tokens"},
}


def flagged(command: str | None, exc: CosimError) -> CosimError:
    """``exc`` with the API argument its message starts with named as ``command``'s flag."""
    message = str(exc)
    head, sep, rest = message.partition(":")
    name, _, tail = head.partition(" ")  # "vcd_window_s start: ..."
    flag = FLAGS.get(command or "", {}).get(name)
    if not sep or flag is None:
        return exc
    renamed = type(exc)(f"{flag}{' ' + tail if tail else ''}:{rest}")
    renamed.__cause__ = exc.__cause__
    return renamed
