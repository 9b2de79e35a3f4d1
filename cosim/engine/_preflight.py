"""Limits checked before a simulation allocates or runs anything: every device's longest
operation must be a time the kernel can hold, and every size a number the native models
represent exactly. A value past a limit is named by its parameter path and the file and
line it came from, never by a C++ type or an internal pointer."""

from __future__ import annotations

import math
from typing import Any

from ..config import _profile_range
from ..schema import _params
from .. import devices
from ..config.hardware import kv_bytes_per_token
from ..errors import ConfigError
from ..config.scenario import Scenario
from ..trace import Trace
from ..schema._declarations import CLOCK_PS, PAYLOAD

# One operation (a token, a prefill, a transfer, a request) longer than this is not a
# design anyone simulates: about 11.6 days. The kernel's 64-bit picosecond clock holds
# about 106 days for a whole run.
MAX_OPERATION_NS = 1e15
# The kernel's clock (64-bit picoseconds) in seconds.
KERNEL_CLOCK_S = CLOCK_PS.value / 1e12
# Sizes past 2^53 bytes are not exact as the doubles the models compute them in.
MAX_BYTES = 2.0**53


def _named(role: str, group: Any, path: str, names: tuple[str, ...]) -> str:
    parts = []
    for name in names:
        where = _params.origin(group, name) or f"{role}.{path}.{name}"
        parts.append(f"{where} = {getattr(group, name):g}")
    return "; ".join(parts)


def _too_long(ns: float) -> bool:
    return not math.isfinite(ns) or ns > MAX_OPERATION_NS


def _refuse(role: str, what: str, ns: float, culprits: str) -> None:
    raise ConfigError(f"{role}.device: {what} would take {ns:.3g} ns, past what a simulation can hold (one "
                      f"operation at most {MAX_OPERATION_NS:.0e} ns); set by {culprits}")


def _longest(role: str, device: Any, model: Any) -> None:
    """Each of the device's longest operations (its kind says which) within the kernel's reach."""
    for op in devices.kind_of(device).longest(device, model):
        if _too_long(op.ns):
            culprits = "; ".join(_named(role, model, "model", names) if group == "model" else
                                 _named(role, getattr(device, group), f"device.{group}", names)
                                 for group, names in op.culprits)
            _refuse(role, op.what, op.ns, culprits)


def _sizes(role: str, r: Any) -> None:
    model, device = r.model, r.device
    kind = devices.kind_of(device)
    group, path = kind.design_of(device), f"device.{kind.design}"
    weights = model.params * group.weight_bytes_per_param
    kv = model.context_window * kv_bytes_per_token(model, group.kv_bytes_per_element)
    for what, size, owner, owner_path, names in (
            ("the weights", weights, group, path, ("weight_bytes_per_param",)),
            ("the KV cache of one window", kv, group, path, ("kv_bytes_per_element",))):
        if not size < MAX_BYTES:
            model_part = _named(role, model, "model", ("params",) if what == "the weights" else
                                ("context_window", "layers", "kv_heads", "head_dim"))
            raise ConfigError(f"{role}: {what} would take {size:.3g} bytes, past what a simulation represents "
                              f"exactly ({MAX_BYTES:.3g}); set by {model_part}; "
                              f"{_named(role, owner, owner_path, names)}")


def _link(role: str, r: Any) -> None:
    """The largest transfer on the link: the draft's prompt KV migration, or a window of tokens."""
    link, model = r.link, r.model
    if role == "draft":
        group = devices.kind_of(r.device).design_of(r.device)
        size, what = model.context_window * kv_bytes_per_token(model, group.kv_bytes_per_element), "a window's KV cache"
    else:
        size, what = model.context_window * 4.0, "a window of tokens"
    ns = link.latency_ns + size / (link.bandwidth_gbps * link.efficiency)
    if _too_long(ns):
        raise ConfigError(f"{role}.link: moving {what} ({size:.3g} bytes) would take {ns:.3g} ns, past what a "
                          f"simulation can hold; set by "
                          f"{_named(role, link, 'link', ('bandwidth_gbps', 'efficiency', 'latency_ns'))}")


def check_replay(caller: str, scn: Any, trace: Any) -> None:
    """What a run replaying ``trace`` on ``scn`` checks first (``caller`` names the run in
    the message): their types, a problem at least, the limits below, and a trace that
    does not backtrack for a forward-only scenario."""
    if not isinstance(scn, Scenario):
        raise ConfigError(f"{caller}: expected a Scenario (cosim.load_scenario), got {type(scn).__name__}")
    if not isinstance(trace, Trace):
        raise ConfigError(f"{caller}: expected a Trace (cosim.trace.load or generate), got {type(trace).__name__}")
    if not trace.problems:
        raise ConfigError(f"{caller}: the trace has no problems")
    check(scn)
    if not scn.backtracking and trace.header.backtracking:
        raise ConfigError(f"{caller}: {scn.name} runs forward-only RSD (algorithm: rsd) and the trace backtracks; "
                          f"draw it with backtracking=False (--no-backtracking) or give an RSD trace")


def _token_transfers(scn: Any) -> None:
    """The largest transfer of token ids, a window of them, within one link payload."""
    window = max(getattr(scn, role).model.context_window for role in ("draft", "prm", "target"))
    size = window * scn.serving.token_bytes
    if size > PAYLOAD.value:
        where = _params.origin(scn.serving, "token_bytes") or "serving.token_bytes"
        raise ConfigError(f"{where}: {scn.serving.token_bytes} bytes a token make a window of {window} tokens "
                          f"{size} bytes, past the engine's limit of {PAYLOAD.value} ({PAYLOAD.why})")


def check(scn: Any) -> None:
    """ConfigError naming the parameter and its file and line if the scenario's devices,
    models or links would make an operation or a size the simulation cannot hold."""
    _token_transfers(scn)
    _profile_range.check(scn)  # a measured profile that reaches zero time where a run can ask
    for role in ("draft", "prm", "target"):
        r = getattr(scn, role)
        _sizes(role, r)
        _longest(role, r.device, r.model)
        _link(role, r)
