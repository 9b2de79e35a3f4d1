"""What every device kind answers (cosim/devices/__init__.py keeps one of each, by the
``kind:`` its description files give): its YAML shape, where its timing design and its
memory are, which roles it may serve, its longest operations, and the section the native
engine takes for a role on it. Each kind is one file of this package."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..schema import _declarations, _params
from ..schema._yamlio import LocatedDict

# Board power per state: every device kind draws it (cosim/schema/_declarations.py).
PowerConfig = _params.config_class(_declarations.POWER, __name__)


@dataclass(frozen=True)
class Operation:
    """One of a device's longest operations (what a run may ask of it at most): what it is,
    its time, and the parameters that set that time as ``(group path, names)`` pairs of
    the device (``("accelerator", ("clock_mhz",))``) or of the model (``("model", ...)``)."""

    what: str
    ns: float
    culprits: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Memory:
    """Where a device's memory capacity is given: ``group`` (a field of the device's
    configuration), its ``field``, and the word its capacity errors use."""

    group: str
    field: str
    words: str


class DeviceKind:
    """One device kind. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]               # the ``kind:`` of its description files
    config: ClassVar[type]            # the configuration class a description file builds
    label: ClassVar[str]              # "an FPGA": what capacity and role errors call it
    design: ClassVar[str]             # the group with its timing design and weight and KV precision
    memory: ClassVar[Memory]
    roles: ClassVar[tuple[str, ...]]  # the roles a scenario may give it
    gpu: ClassVar[bool] = False       # a GPU: counted where capacity plans compare clusters by GPUs
    parallel: ClassVar[bool] = False  # a role's model may span several of it (parallel:, peer_link:)
    # A forward pass over several tokens: a draft on it may verify token-level drafts
    # (toggles.draft_speculation); an FPGA's streaming decoder writes one token a pass.
    verifies_drafts: ClassVar[bool] = False
    # Whether a scenario's role may name a measured profile for it (else its description does).
    role_profile: ClassVar[bool] = True

    def design_of(self, device: Any) -> Any:
        return getattr(device, self.design)

    def kv_reserve(self, device: Any) -> int:
        """The tokens of KV cache the device reserves for one context (0: the model's window)."""
        return self.design_of(device).kv_reserve_tokens

    def prepared(self, body: LocatedDict) -> LocatedDict:
        """A description's mapping before it is built (older names read under new ones)."""
        return body

    def finished(self, device: Any, folder: Path, body: LocatedDict) -> Any:
        """The built device with what it names beside its file found and checked."""
        return device

    def measured_profile(self, device: Any) -> str | None:
        """The measured profile its description names (a CSV path), or None."""
        return None

    def state_powers(self, device: Any, model: Any) -> dict[str, float]:
        """The board's watts in each state (idle_w, prefill_w, decode_w, transfer_w) running
        ``model``: its declared state powers, or those its kind derives from its design."""
        power = device.power
        return {name: getattr(power, name) for name in ("idle_w", "prefill_w", "decode_w", "transfer_w")}

    def timing(self, device: Any, model: Any, points: list[tuple[str, int, int]], profile: Any = None
               ) -> dict[str, Any]:
        """The native timing formula (or a measured profile) at ``(phase, tokens, context)``
        points, with no simulation: ``ns`` and ``bound`` per point, and its terms."""
        raise NotImplementedError

    def longest(self, device: Any, model: Any) -> list[Operation]:
        """Its longest operations for ``model``, timed by the native models."""
        raise NotImplementedError

    def native(self, role: Any, scn: Any, profile: Any) -> dict[str, Any]:
        """The engine's section for ``role`` on this device (``profile``: the role's measured
        profile as the native models take it, or None)."""
        raise NotImplementedError
