"""A GPU as a device kind (docs/hardware.md): its description file's shape (memory,
compute and overheads, power), and what it answers as a device: any role, its memory its
own, its longest operations a decode at the end of the model's window, a prefill of a
window and a serving request, and the engine's section with the role's measured profile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._architecture import filled
from ._kind import DeviceKind, Memory, Operation, PowerConfig
from .._extension import native
from ..schema import _declarations, _params
from ..schema._params import param

GpuConfig = _params.config_class(_declarations.GPU, __name__)


@dataclass(frozen=True, kw_only=True)
class GpuDevice:
    name: str = param("device name", rule="any")
    description: str = param("what this device is", rule="any", default="")
    host_link: str = param("default link to the host (a link name)", rule="any", default="pcie_gen4_x16")
    peer_link: str = param("link between GPUs of a parallel group (a link name; empty: the host link, "
                           "through the host's PCIe)", rule="any", default="")
    architecture: str = param("GPU architecture (cosim/data/architectures) whose kernel efficiencies it takes "
                              "where its gpu section gives none", rule="any", default="")
    gpu: GpuConfig = param("memory, compute and overheads", rule="any")
    power: PowerConfig = param("board power per state", rule="any")

    kind = "gpu"


# The parameters that set each term of its time, by the operation.
_DECODE = ("forward_overhead_ns", "layer_overhead_ns", "memory_bandwidth_gbps", "memory_efficiency")
_PREFILL = ("forward_overhead_ns", "layer_overhead_ns", "peak_tflops", "compute_efficiency",
            "memory_bandwidth_gbps", "memory_efficiency")


class Gpu(DeviceKind):
    name = "gpu"
    config = GpuDevice
    label = "a GPU"
    design = "gpu"
    memory = Memory("gpu", "memory_bytes", "memory")
    roles = ("draft", "prm", "target")
    gpu = True
    parallel = True
    verifies_drafts = True

    def prepared(self, body: Any) -> Any:
        return filled(body)

    def timing(self, device: GpuDevice, model: Any, points: list[tuple[str, int, int]], profile: Any = None,
               group: Any = None) -> dict[str, Any]:
        parallel, link = _group(group)
        return native().gpu_timing(_params.native(device.gpu), _params.native(model), profile, points, parallel, link)

    def group_memory(self, role: Any) -> tuple[float, float]:
        """Bytes of the weights one GPU of the role's group stores, and of the KV cache one
        token of context keeps on it (the models' own formulas: model_spec.hpp, parallel_layout.hpp)."""
        found = self.timing(role.device, role.model, [], group=role)
        return found["stored_weight_bytes"], found["kv_bytes_per_token"]

    def longest(self, device: GpuDevice, model: Any) -> list[Operation]:
        window = model.context_window
        decode_ns, prefill_ns = self.timing(device, model, [("decode", 1, window - 1), ("prefill", window, 0)])["ns"]
        return [Operation(f"one token at context {window - 1}", decode_ns, (("gpu", _DECODE),)),
                Operation(f"a prefill of {window} tokens", prefill_ns, (("gpu", _PREFILL),)),
                Operation("one serving request", device.gpu.request_overhead_ns,
                          (("gpu", ("request_overhead_ns",)),))]

    def native(self, role: Any, scn: Any, profile: Any) -> dict[str, Any]:
        device = role.device
        parallel, link = _group(role)
        return {"gpu": _params.native(device.gpu), "power": _params.native(device.power),
                "model": _params.native(role.model), "link": _params.native(role.link), "profile": profile,
                "parallel": parallel, "peer_link": link, "peer_link_pcie": _on_pcie(role)}


def _on_pcie(role: Any) -> bool:
    """The role spans GPUs that reach each other over their own PCIe links (a PCIe link, not
    NVLink): their collectives share those links with the host's transfers."""
    if role is None or role.peer_link is None:
        return False
    group = role.parallel.tensor_parallel > 1 or role.parallel.data_parallel > 1
    return group and bool(getattr(role.peer_link, "carries_host_traffic", False))


def _group(role: Any) -> tuple[Any, Any]:
    """The native sections of the GPUs a role's model spans (None, None: one GPU)."""
    if role is None or role.peer_link is None:
        return None, None
    return _params.native(role.parallel), _params.native(role.peer_link)
