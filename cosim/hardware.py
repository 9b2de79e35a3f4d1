"""Descriptions of devices, links and models, loaded from YAML.

Built-in descriptions live in ``cosim/data`` (every value there cites its
source or says it is an estimate); a path to a user's own YAML file works
wherever a built-in name does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

from ._latency_csv import load_latency_profile
from ._params import build, param
from ._yamlio import LocatedDict, load_yaml
from .errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class PcieLinkConfig:
    name: str = param("link name", rule="any")
    description: str = param("what this link is", rule="any", default="")
    bandwidth_gbps: float = param("raw bandwidth per direction")
    efficiency: float = param("share of raw bandwidth a DMA transfer achieves", rule="fraction")
    latency_ns: float = param("fixed cost of one transfer (DMA setup and flight)", rule="non_negative")


@dataclass(frozen=True, kw_only=True)
class HbmConfig:
    capacity_bytes: float = param("HBM capacity")
    pseudo_channels: int = param("number of pseudo-channels")
    channel_bandwidth_gbps: float = param("peak bandwidth of one pseudo-channel")
    efficiency: float = param("share of peak reached by long streaming reads", rule="fraction")


@dataclass(frozen=True, kw_only=True)
class PowerConfig:
    idle_w: float = param("board power when idle", rule="non_negative")
    prefill_w: float = param("board power while prefilling", rule="non_negative")
    decode_w: float = param("board power while decoding", rule="non_negative")
    transfer_w: float = param("board power while only moving data", rule="non_negative")


@dataclass(frozen=True, kw_only=True)
class FpgaAcceleratorConfig:
    clock_mhz: float = param("kernel clock; the MAC array and the HBM ports run on it")
    macs_per_cycle: float = param("multiply-accumulates the MAC array retires per cycle (its lanes); caps "
                                  "compute at macs x clock")
    hbm_ports: int = param("HBM ports wired to the decoder, each reading one pseudo-channel; weights and KV "
                           "stream through them")
    port_width_bits: float = param("data width of one HBM port: a port moves at most width x clock, and its "
                                   "pseudo-channel caps it at channel bandwidth x HBM efficiency")
    port_efficiency: float = param("share of a port's width x clock the design keeps busy (bursts, stalls)",
                                   rule="fraction")
    pipeline_cycles_per_layer: float = param("cycles per layer that nothing overlaps (reductions, softmax, "
                                             "norms); added to every forward pass", rule="non_negative")
    weight_bytes_per_param: float = param("bytes per weight (W8A8: 1)")
    kv_bytes_per_element: float = param("bytes per K or V element")
    kv_reserve_tokens: int = param("KV cache reserved in HBM, tokens (0: the model's window)",
                                   rule="non_negative", default=0)


PROJECTIONS = ("linear", "none")


@dataclass(frozen=True, kw_only=True)
class FpgaProfileConfig:
    file: str = param("CSV of measured times (phase,tokens,context,seconds: decode seconds per token by "
                      "context, local-prefill seconds by tokens); a relative path is taken from the device "
                      "file's folder", rule="any")
    clock_mhz: float = param("kernel clock the profile was measured at")
    clock_projection: str = param("linear: times scale by measured clock / clock (a compute- or pipeline-bound "
                                  "design); none: used as measured at any clock", rule="any", default="linear",
                                  choices=PROJECTIONS)


@dataclass(frozen=True, kw_only=True)
class GpuConfig:
    memory_bytes: float = param("device memory")
    memory_bandwidth_gbps: float = param("peak memory bandwidth")
    memory_efficiency: float = param("share of peak bandwidth a batch-1 decode reaches", rule="fraction")
    peak_tflops: float = param("dense tensor throughput at the serving precision")
    compute_efficiency: float = param("share of peak throughput a prefill reaches", rule="fraction")
    request_overhead_ns: float = param("serving-stack cost of one request (a drafted step, a PRM score, a "
                                       "refinement, a prompt)", rule="non_negative", default=0.0)
    forward_overhead_ns: float = param("fixed host and launch cost of one forward call", rule="non_negative")
    layer_overhead_ns: float = param("launch cost per transformer layer (eager mode)", rule="non_negative")
    weight_bytes_per_param: float = param("bytes per weight (BF16: 2)")
    kv_bytes_per_element: float = param("bytes per K or V element")
    kv_reserve_tokens: int = param("KV cache reserved, tokens (0: the model's window)", rule="non_negative",
                                   default=0)


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


@dataclass(frozen=True, kw_only=True)
class GpuDevice:
    name: str = param("device name", rule="any")
    description: str = param("what this device is", rule="any", default="")
    host_link: str = param("default link to the host (a link name)", rule="any", default="pcie_gen4_x16")
    gpu: GpuConfig = param("memory, compute and overheads", rule="any")
    power: PowerConfig = param("board power per state", rule="any")

    kind = "gpu"


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    name: str = param("model name", rule="any")
    description: str = param("what this model is", rule="any", default="")
    layers: int = param("transformer layers")
    hidden: int = param("hidden size")
    heads: int = param("attention (query) heads")
    kv_heads: int = param("key/value heads (grouped-query attention)")
    head_dim: int = param("dimension of one head")
    ffn: int = param("intermediate size of the gated MLP")
    vocab: int = param("vocabulary size")
    params: float = param("total parameters (stored weights)")
    lm_head: bool = param("true: the output head projects onto the vocabulary", rule="any", default=True)
    score_head_params: float = param("parameters of a scoring head instead (PRMs)", rule="non_negative",
                                     default=0.0)
    context_window: int = param("longest context the model supports, tokens")


Device = Union[FpgaDevice, GpuDevice]
_KINDS: dict[str, type] = {"fpga": FpgaDevice, "gpu": GpuDevice, "pcie": PcieLinkConfig, "model": ModelConfig}
_FOLDERS = {"device": "devices", "link": "links", "model": "models"}


def _data_dir(folder: str) -> Path:
    return Path(str(resources.files("cosim") / "data" / folder))


def builtin_names(what: str) -> list[str]:
    """Names of the built-in descriptions of ``what`` (device, link or model)."""
    return sorted(p.stem for p in _data_dir(_FOLDERS[what]).glob("*.yaml"))


def builtin_path(what: str, name: str) -> Path:
    return _data_dir(_FOLDERS[what]) / f"{name}.yaml"


def _load(what: str, ref: Any, allowed: tuple[str, ...]) -> Any:
    if isinstance(ref, tuple(_KINDS[k] for k in allowed)):
        return ref
    if not isinstance(ref, str | Path):
        raise ConfigError(f"a {what} is a built-in name, a YAML path or a config object, not {type(ref).__name__}")
    path = Path(ref)
    if path.suffix not in (".yaml", ".yml"):
        if str(ref) not in builtin_names(what):
            raise ConfigError(f"unknown {what} {str(ref)!r}; built-in: {', '.join(builtin_names(what))}")
        path = builtin_path(what, str(ref))
    data = load_yaml(path)
    if not isinstance(data, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping of parameters")
    kind = data.get("kind")
    if kind not in allowed:
        raise ConfigError(f"{data.where_of('kind') if 'kind' in data else path}: kind must be one of "
                          f"{', '.join(allowed)}, got {kind!r}")
    body = LocatedDict({k: v for k, v in data.items() if k != "kind"}, data.where, data.lines)
    config = build(_KINDS[kind], body)
    if isinstance(config, FpgaDevice) and config.profile is not None:
        config = _with_profile_checked(config, path.parent, body)
    return config


def _with_profile_checked(device: FpgaDevice, folder: Path, body: LocatedDict) -> FpgaDevice:
    """The device with its profile's path taken from the device file's folder, and the CSV checked now."""
    profile = device.profile
    assert profile is not None
    where = body["profile"].where_of("file") if isinstance(body.get("profile"), LocatedDict) else body.where
    path = Path(profile.file).expanduser()
    if not path.is_absolute():
        path = folder / path
    try:
        load_latency_profile(path)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return dataclasses.replace(device, profile=dataclasses.replace(profile, file=str(path)))


def fpga_profile_native(device: FpgaDevice) -> dict[str, Any] | None:
    """The measured profile as the native models take it, or None."""
    if device.profile is None:
        return None
    table = load_latency_profile(device.profile.file)
    return {"source": table.source, "rows": list(table.rows), "clock_mhz": device.profile.clock_mhz,
            "project_clock": device.profile.clock_projection == "linear"}


def load_device(ref: Any) -> Device:
    """An FPGA or GPU device: built-in name (``u280``), YAML path or config object."""
    return _load("device", ref, ("fpga", "gpu"))


def load_link(ref: Any) -> PcieLinkConfig:
    return _load("link", ref, ("pcie",))


def load_model(ref: Any) -> ModelConfig:
    return _load("model", ref, ("model",))
