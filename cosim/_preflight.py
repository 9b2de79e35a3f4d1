"""Limits checked before a simulation allocates or runs anything: every device's longest
operation must be a time the kernel can hold, and every size a number the native models
represent exactly. A value past a limit is named by its parameter path and the file and
line it came from, never by a C++ type or an internal pointer."""

from __future__ import annotations

import math
from typing import Any

from .config import _params, _profile_range
from .config.hardware import FpgaDevice, kv_bytes_per_token
from .errors import ConfigError
from .standalone import fpga_timing, gpu_timing
from .config.scenario import Scenario
from .trace import Trace
from .config._declarations import CLOCK_PS, PAYLOAD

# One operation (a token, a prefill, a transfer, a request) longer than this is not a
# design anyone simulates: about 11.6 days. The kernel's 64-bit picosecond clock holds
# about 106 days for a whole run.
MAX_OPERATION_NS = 1e15
# The kernel's clock (64-bit picoseconds) in seconds.
KERNEL_CLOCK_S = CLOCK_PS.value / 1e12
# Sizes past 2^53 bytes are not exact as the doubles the models compute them in.
MAX_BYTES = 2.0**53

# The parameters that set each term of a device's time, by what binds.
_FPGA_TERMS = {
    "macs": ("accelerator", ("macs_per_cycle", "clock_mhz")),
    "ports": ("accelerator", ("port_width_bits", "port_efficiency", "hbm_ports", "clock_mhz")),
    "hbm": ("hbm", ("channel_bandwidth_gbps", "efficiency")),
    "pipeline": ("accelerator", ("pipeline_cycles_per_layer", "clock_mhz")),
}
_GPU_TERMS = {
    "decode": ("forward_overhead_ns", "layer_overhead_ns", "memory_bandwidth_gbps", "memory_efficiency"),
    "prefill": ("forward_overhead_ns", "layer_overhead_ns", "peak_tflops", "compute_efficiency",
                "memory_bandwidth_gbps", "memory_efficiency"),
}


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


def _fpga(role: str, device: FpgaDevice, model: Any) -> None:
    # The longest decode step is the last token of the KV reservation; a local prefill of n
    # tokens costs at most n such tokens; a run that adds up past the kernel's clock is
    # refused by the kernel's own check.
    window = device.accelerator.kv_reserve_tokens or model.context_window
    timing = fpga_timing(device, model, contexts=[window - 1])
    decode_ns = timing["ns"][0]
    group_name, names = _FPGA_TERMS.get(timing["bound"][0], ("accelerator", ("clock_mhz",)))
    culprits = _named(role, getattr(device, group_name), f"device.{group_name}", names)
    if _too_long(decode_ns):
        _refuse(role, f"one draft token at context {window - 1}", decode_ns, culprits)
    # A local prefill is one operation of up to a window of such tokens.
    if _too_long(decode_ns * window):
        _refuse(role, f"a local prefill of up to {window} tokens", decode_ns * window,
                f"{culprits}; {_named(role, model, 'model', ('context_window', 'vocab', 'params'))}")


def _gpu(role: str, device: Any, model: Any) -> None:
    window = model.context_window
    decode_ns, prefill_ns = gpu_timing(device, model, [("decode", 1, window - 1), ("prefill", window, 0)])["ns"]
    for what, ns, term in ((f"one token at context {window - 1}", decode_ns, "decode"),
                           (f"a prefill of {window} tokens", prefill_ns, "prefill")):
        if _too_long(ns):
            _refuse(role, what, ns, _named(role, device.gpu, "device.gpu", _GPU_TERMS[term]))
    if _too_long(device.gpu.request_overhead_ns):
        _refuse(role, "one serving request", device.gpu.request_overhead_ns,
                _named(role, device.gpu, "device.gpu", ("request_overhead_ns",)))


def _sizes(role: str, r: Any) -> None:
    model, device = r.model, r.device
    group = device.accelerator if isinstance(device, FpgaDevice) else device.gpu
    path = "device.accelerator" if isinstance(device, FpgaDevice) else "device.gpu"
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
        group = r.device.accelerator if isinstance(r.device, FpgaDevice) else r.device.gpu
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
        if isinstance(r.device, FpgaDevice):
            _fpga(role, r.device, r.model)
        else:
            _gpu(role, r.device, r.model)
        _link(role, r)
