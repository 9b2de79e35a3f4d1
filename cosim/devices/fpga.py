"""The FPGA draft accelerator as a device kind (docs/hardware.md): its description file's
shape (the decoder design, its HBM, its power and an optional measured profile), and what
it answers as a device: the draft role only, its memory the HBM, its longest operation a
decode at the end of its KV reservation, and the engine's section, with the target GPU
that prefills the prompt for it."""

from __future__ import annotations

import dataclasses
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._kind import DeviceKind, Memory, Operation, PowerConfig
from ._latency_csv import load_latency_profile
from .._extension import native
from ..errors import ConfigError
from ..schema import _declarations, _params
from ..schema._params import param
from ..schema._yamlio import LocatedDict

HbmConfig = _params.config_class(_declarations.HBM, __name__)


def rtl_kvmu_missing() -> str | None:
    """None when this build has the KVMU's RTL (fpga.kvmu: rtl), else what is missing."""
    if "rtl" in getattr(native(), "kvmu_implementations", ()):
        return None
    return ("the Verilated KVMU (rtl/kvmu.v), which this build lacks: Verilator was not found when the "
            "extension was built (install verilator, then rerun `bash scripts/bootstrap.sh setup`)")


def _kvmu_usable(value: str) -> str | None:
    return rtl_kvmu_missing() if value == "rtl" else None


FpgaAcceleratorConfig = _params.config_class(_declarations.FPGA, __name__, usable={"kvmu": _kvmu_usable})

PROJECTIONS = ("linear", "none")


@dataclass(frozen=True, kw_only=True)
class FpgaProfileConfig:
    file: str = param("CSV of measured times (phase,tokens,context,seconds: decode seconds per token by "
                      "context, local-prefill seconds by tokens); a relative path is taken from the device "
                      "file's folder", rule="any")
    measured_clock_mhz: float = param("kernel clock the profile was measured at (not the clock the design runs "
                                      "at: that is the accelerator's clock_mhz)")
    clock_projection: str = param("linear: times scale by measured clock / clock (a compute- or pipeline-bound "
                                  "design); none: used as measured at any clock", rule="any", default="linear",
                                  choices=PROJECTIONS)


@dataclass(frozen=True, kw_only=True)
class FpgaDevice:
    name: str = param("device name", rule="any")
    description: str = param("what this device is", rule="any", default="")
    host_link: str = param("default link to the host (a link name)", rule="any", default="pcie_gen3_x16")
    hbm: HbmConfig = param("on-board HBM", rule="any")
    accelerator: FpgaAcceleratorConfig = param("the draft decoder design", rule="any")
    power: PowerConfig = param("board power per state", rule="any")
    profile: FpgaProfileConfig | None = param("measured decode times that replace the design's formula "
                                              "(optional)", rule="any", default=None)

    kind = "fpga"


# The parameters that set a decode token's time, by what binds it (the native timing's `bound`).
_TERMS = {
    "macs": ("accelerator", ("macs_per_cycle", "clock_mhz")),
    "ports": ("accelerator", ("port_width_bits", "port_efficiency", "hbm_ports", "clock_mhz")),
    "hbm": ("hbm", ("channel_bandwidth_gbps", "efficiency")),
    "pipeline": ("accelerator", ("pipeline_cycles_per_layer", "clock_mhz")),
}

# The profile's clock was once `clock` (`clock_mhz`), a name every other section gives the
# clock the design runs at; files that still say so load, with a DeprecationWarning.
_OLD_PROFILE_CLOCK = {"clock": "measured_clock", "clock_mhz": "measured_clock_mhz"}


def _caller_level() -> int:
    """The stacklevel of the first frame outside this package (or the command line's own
    __main__), so that a warning points at the caller whichever function loaded the file."""
    package = str(Path(__file__).resolve().parent.parent)
    frame, level = sys._getframe(1), 1  # the frame that calls warnings.warn is level 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package + "/") \
            and frame.f_globals.get("__name__") != "__main__":
        frame, level = frame.f_back, level + 1
    return level


def profile_native(device: FpgaDevice) -> dict[str, Any] | None:
    """The measured profile as the native models take it, or None."""
    if device.profile is None:
        return None
    table = load_latency_profile(device.profile.file)
    return {"source": table.source, "rows": table.table,
            "measured_clock_mhz": device.profile.measured_clock_mhz,
            "project_clock": device.profile.clock_projection == "linear"}


class Fpga(DeviceKind):
    name = "fpga"
    config = FpgaDevice
    label = "an FPGA"
    design = "accelerator"
    memory = Memory("hbm", "capacity_bytes", "HBM")
    roles = ("draft",)
    role_profile = False  # an FPGA's measured profile goes in its device file (profile: file:)

    def prepared(self, body: LocatedDict) -> LocatedDict:
        profile = body.get("profile")
        if not isinstance(profile, LocatedDict) or not set(_OLD_PROFILE_CLOCK) & set(profile):
            return body
        items, lines = {}, {}
        for key, value in profile.items():
            new = _OLD_PROFILE_CLOCK.get(key, key)
            if new != key:
                both = [k for k in ("measured_clock", "measured_clock_mhz") if k in profile]
                if both:
                    raise ConfigError(f"{profile.where_of(key)}: the old name of profile.{both[0]}, which is also "
                                      f"given; keep {both[0]} only")
                warnings.warn(f"{profile.where_of(key)}: deprecated name; write {new} (the clock the profile was "
                              f"measured at)", DeprecationWarning, stacklevel=_caller_level())
            items[new] = value
            if key in profile.lines:
                lines[new] = profile.lines[key]
        renamed = LocatedDict(items, profile.where, lines)
        return LocatedDict({**body, "profile": renamed}, body.where, body.lines)

    def finished(self, device: FpgaDevice, folder: Path, body: LocatedDict) -> FpgaDevice:
        """The device with its profile's path taken from the device file's folder, and the CSV checked now."""
        profile = device.profile
        if profile is None:
            return device
        where = body["profile"].where_of("file") if isinstance(body.get("profile"), LocatedDict) else body.where
        path = Path(profile.file).expanduser()
        if not path.is_absolute():
            path = folder / path
        try:
            table = load_latency_profile(path)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if table.has_batches():
            raise ConfigError(f"{where}: {path}: rows at batch > 1 time a GPU's batched iterations; the FPGA "
                              f"decodes one context at a time")
        return _params.replaced(device, profile=dataclasses.replace(profile, file=str(path)))

    def measured_profile(self, device: FpgaDevice) -> str | None:
        return None if device.profile is None else device.profile.file

    def timing(self, device: FpgaDevice, model: Any, points: list[tuple[str, int, int]], profile: Any = None
               ) -> dict[str, Any]:
        # Its measured profile is its own (the device file's), never a role's.
        return native().fpga_timing(_params.native(device.accelerator), _params.native(device.hbm),
                                    _params.native(model), profile_native(device), points)

    def state_powers(self, device: FpgaDevice, model: Any) -> dict[str, float]:
        # The design model (docs/hardware.md) derives the busy states' power from what the
        # decoder does; state powers come back as declared.
        found = native().fpga_timing(_params.native(device.accelerator), _params.native(device.hbm),
                                     _params.native(model), profile_native(device), [],
                                     _params.native(device.power))
        return {name: found[name] for name in ("idle_w", "prefill_w", "decode_w", "transfer_w")}

    def longest(self, device: FpgaDevice, model: Any) -> list[Operation]:
        # The longest decode step is the last token of the KV reservation; a local prefill of n
        # tokens costs at most n such tokens; a run that adds up past the kernel's clock is
        # refused by the kernel's own check.
        window = self.kv_reserve(device) or model.context_window
        timing = self.timing(device, model, [("decode", 1, window - 1)])
        decode_ns = timing["ns"][0]
        terms = (_TERMS.get(timing["bound"][0], ("accelerator", ("clock_mhz",))),)
        return [Operation(f"one draft token at context {window - 1}", decode_ns, terms),
                Operation(f"a local prefill of up to {window} tokens", decode_ns * window,
                          terms + (("model", ("context_window", "vocab", "params")),))]

    def native(self, role: Any, scn: Any, profile: Any) -> dict[str, Any]:
        # The draft model's phase-1 prompt prefill runs on the target GPU, in BF16.
        device = role.device
        return {"fpga": _params.native(device.accelerator), "hbm": _params.native(device.hbm),
                "prefill_gpu": _params.native(scn.target.device.gpu), "fpga_profile": profile_native(device),
                "power": _params.native(device.power), "model": _params.native(role.model),
                "link": _params.native(role.link)}
