"""The GPUs a role's model spans (docs/hardware.md, "Parallel groups"): a scenario role's
``parallel:`` mapping and ``peer_link:``, and the checks of the group and of the model's
precision against the model and its device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import devices
from ..devices import Device
from ..errors import ConfigError
from ..schema import _params
from ..schema._yamlio import LocatedDict, Where
from ..devices._operator_profile import load_operator_profile
from .hardware import ParallelConfig, PcieLinkConfig, file_ref, load_link


def role_group(data: LocatedDict, where: Where, base: Path | None, device: Device
               ) -> tuple[ParallelConfig, PcieLinkConfig | None]:
    """The GPUs a role's model spans and their link: the role's ``parallel:`` mapping and
    ``peer_link:`` (else the device's peer link, else its host link)."""
    kind = devices.kind_of(device)
    if not kind.parallel:
        for key in ("parallel", "peer_link"):
            if key in data:
                raise ConfigError(f"{data.where_of(key)}: {kind.label} serves its model alone; {key} is for GPUs")
        return ParallelConfig(), None
    given = data.get("parallel") or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{data.where_of('parallel')}: expected a mapping such as {{tensor_parallel: 2}}")
    parallel = _params.replace_given(ParallelConfig(), given, where, "parallel")
    ref = data.get("peer_link") or device.peer_link or device.host_link
    try:
        link = load_link(file_ref(ref, base))
    except ConfigError as exc:
        place = data.where_of("peer_link") if "peer_link" in data else (
            _params.origin(device, "peer_link") or _params.origin(device, "host_link") or where)
        raise ConfigError(f"{place}: {exc}") from None
    return parallel, link


def check_precision(role: Any) -> None:
    """A model's activation precision against the device that runs it: a GPU timed by its
    roofline, its weights stored no wider than the type (the native check): ConfigError
    ``model.activation_precision: ...``."""
    precision = role.model.activation_precision
    if precision == "bf16":
        return
    kind = devices.kind_of(role.device)
    if not kind.gpu:
        raise ConfigError(f"model.activation_precision: {precision} on {kind.label}, whose design sets its own "
                          f"precision; it would have no effect, so drop it")
    if role.profile is not None:
        raise ConfigError(f"model.activation_precision: {precision} with a measured profile, which times the model "
                          f"at the precision it was measured at; it would have no effect, so drop one of them")
    try:
        kind.timing(role.device, role.model, [])
    except ConfigError as exc:
        raise ConfigError(str(exc).split(": ", 1)[-1].replace("model.activation_precision ",
                                                               "model.activation_precision: ", 1)) from None


def check_group(role: Any) -> None:
    """A role's parallel group against its model (heads, KV heads and experts split evenly
    across it; a latency CSV only on one GPU, an operator profile's pass at the group's
    degree): ConfigError ``parallel.<field>: ...`` (the native check names its fields so)."""
    if role.peer_link is None or role.parallel == ParallelConfig():
        return
    tp = role.parallel.tensor_parallel
    if role.profile is not None and tp > 1:
        if not Path(role.profile).is_dir():
            raise ConfigError(f"parallel.tensor_parallel: {tp} with a latency CSV, which times one GPU; give an "
                              f"operator profile with a tp{tp}/ pass, or drop the profile (the roofline times a "
                              f"group)")
        load_operator_profile(role.profile, role.model, tp)
    devices.kind_of(role.device).group_memory(role)
