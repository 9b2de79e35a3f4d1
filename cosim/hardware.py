"""Descriptions of devices, links and models, loaded from YAML.

Built-in descriptions live in ``cosim/data`` (every value there cites its
source or says it is an estimate); a path to a user's own YAML file works
wherever a built-in name does.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

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
    clock_mhz: float = param("kernel clock")
    macs_per_cycle: float = param("INT8 multiply-accumulates retired per cycle")
    pipeline_cycles: float = param("fixed fill/drain cycles per forward pass", rule="non_negative")
    weight_bytes_per_param: float = param("bytes per weight (W8A8: 1)")
    kv_bytes_per_element: float = param("bytes per K or V element")
    kv_reserve_tokens: int = param("KV cache reserved in HBM, tokens (0: the model's window)",
                                   rule="non_negative", default=0)


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
    return build(_KINDS[kind], body)


def load_device(ref: Any) -> Device:
    """An FPGA or GPU device: built-in name (``u280``), YAML path or config object."""
    return _load("device", ref, ("fpga", "gpu"))


def load_link(ref: Any) -> PcieLinkConfig:
    return _load("link", ref, ("pcie",))


def load_model(ref: Any) -> ModelConfig:
    return _load("model", ref, ("model",))
