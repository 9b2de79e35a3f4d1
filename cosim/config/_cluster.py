"""A scenario's serving cluster and GPU batching (docs/serving.md): pools of draft, PRM
and target devices, and how a GPU batches the work of many requests at each iteration.
Every parameter is declared once, here: name, rule, help, and where its default comes
from. A scenario without these sections is the single-request system: one device per
role, one context on the draft device, no batching.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import _params
from ._declarations import GPU_BLOCKS, PROCESSES
from ._params import param
from .hardware import FpgaDevice, kv_bytes_per_token, load_link
from ..errors import ConfigError
from .._isolation import native

_ONE_OF_EACH = "source: the single-request systems, one device per role (docs/system.md)"


@dataclass(frozen=True, kw_only=True)
class DraftPool:
    """The draft devices (FPGA boards or GPUs), all of the scenario's draft device."""

    devices: int = param("draft devices in the pool", default=1, note=_ONE_OF_EACH, limit=PROCESSES)
    contexts_per_device: int = param(
        "requests one draft device holds at once, each with its own KV cache of the draft model's window (or "
        "the device's kv_reserve_tokens) in the device's memory beside the weights", default=1, note="source: the single-request systems hold one context (docs/system.md)",
        limit=PROCESSES)
    boards_per_host_link: int = param(
        "draft boards behind one PCIe switch, sharing its link to the host (host_link); 1: each board has its "
        "own link to the host", default=1,
        note="source: the single-request systems plug their one board into its own x16 slot (docs/system.md)",
        limit=PROCESSES)
    host_link: str = param(
        "the link a PCIe switch's boards share to the host (a built-in link or a link YAML), with "
        "boards_per_host_link > 1", rule="any", default="pcie_gen4_x16",
        note="estimate: a Gen4 x16 host port, the widest a Gen4 PCIe switch offers (the boards' own Gen3 x16 "
             "links on the U280 are narrower)")


@dataclass(frozen=True, kw_only=True)
class GpuPool:
    """GPUs serving one role (PRM or target), each holding the role's whole model."""

    devices: int = param("GPUs in the pool, each with a copy of the model", default=1, note=_ONE_OF_EACH,
                         limit=PROCESSES)


@dataclass(frozen=True, kw_only=True)
class Cluster:
    """The devices requests are served on; a request keeps its draft context, PRM and target."""

    draft: DraftPool = param("the draft devices", rule="any", default=DraftPool())
    prm: GpuPool = param("the PRM GPUs", rule="any", default=GpuPool())
    target: GpuPool = param("the target GPUs", rule="any", default=GpuPool())


POLICIES = ("fcfs", "verify_first")


@dataclass(frozen=True, kw_only=True)
class Batching:
    """Iteration-level (continuous) batching on the GPUs: at every forward pass a GPU takes
    the waiting work of several requests, within a sequence count and a token budget."""

    enabled: bool = param(
        "GPUs batch the work of several requests at each iteration; off: one request at a time, at batch size "
        "1", rule="any", default=False,
        note="source: the systems compared serve every request at batch size 1 (docs/system.md)")
    max_batch: int = param(
        "most sequences one GPU iteration holds", default=64,
        note="estimate: between the batch caps Sarathi-Serve evaluated vLLM with (32, 64, 128) and under "
             "vLLM's default max_num_seqs (128); an RTX 3090 holding the 7B target in BF16 keeps about 10.5 GB "
             "for KV cache, about 184k tokens at 56 KiB a token, a few thousand tokens for each of 64 requests; "
             "plausible from Sarathi-Serve's 32 to vLLM's 128", range=(32, 128), limit=PROCESSES)
    token_budget: int = param(
        "most tokens one GPU iteration processes (tokens): prefill tokens and one per decoding sequence, "
        "together; a longer prefill is split across iterations", default=2048,
        note="estimate: vLLM's default max_num_batched_tokens (SchedulerConfig, 2048), the larger of the two "
             "token budgets Sarathi-Serve evaluated (512 and 2048); plausible from 512 to 8192 (vLLM's chunked-prefill "
             "budgets)", range=(512, 8192))
    policy: str = param(
        "which waiting work an iteration admits first: fcfs, in arrival order; verify_first, the verification "
        "of steps of requests in flight ahead of other waiting work", rule="any", default="fcfs",
        choices=POLICIES, note="source: vLLM's default scheduling policy is fcfs (SchedulerConfig.policy)")
    gpu_memory_utilization: float = param(
        "share of each batching GPU's memory for weights and KV cache: the sequences of one iteration hold "
        "their KV caches in what is left beside every model's weights, and work that does not fit waits",
        rule="fraction", default=0.9,
        note="source: vLLM's default gpu_memory_utilization (0.9, EngineArgs)")
    # The autoregressive system's vLLM engine (models/vllm_scheduler.hpp, docs/serving.md).
    block_size: int = param(
        "tokens per KV-cache block of the autoregressive system's vLLM engine: KV memory is allocated a block "
        "at a time", default=16,
        note="source: vLLM's default block_size on CUDA GPUs (CacheConfig.block_size, 16)")
    num_gpu_blocks: int = param(
        "KV-cache blocks of the autoregressive system's vLLM engine on each GPU, counted as vLLM counts them "
        "(its null block included); 0: derived, floor((gpu_memory_utilization x memory - weights - "
        "runtime_memory) / (block_size x KV bytes per token))", rule="non_negative", default=0,
        note="source: vLLM derives num_gpu_blocks from gpu_memory_utilization at start-up "
             "(Worker.determine_available_memory); 0 does the same, give the number a vLLM log reports to "
             "match a run exactly", limit=GPU_BLOCKS)
    runtime_memory_bytes: float = param(
        "GPU memory the autoregressive system's vLLM engine holds beside the weights and the KV cache "
        "(activations at the token budget, CUDA graphs, the CUDA context), left out when num_gpu_blocks is "
        "derived", rule="non_negative", default=1.24e9,
        note="estimate: a vLLM 0.19 run of Llama-3.1-8B on an RTX 4090 (max_num_batched_tokens 2048, "
             "gpu_memory_utilization 0.9, LLMServingSim's published run) kept 2588 blocks of 16 tokens x "
             "128 KiB: 0.9 x 25.25 GB - 16.06 GB of weights - 5.43 GB of KV cache = 1.24 GB. Range: 0.5-3 GB, "
             "from a smaller token budget without CUDA graphs to a larger one with them", range=(0.5e9, 3e9))
    prefix_caching: bool = param(
        "the autoregressive system's vLLM engine keeps the KV of freed full blocks until they are reused, so "
        "a request whose prefix matches (a shared system prompt, or its own tokens after a preemption) "
        "takes them back instead of recomputing", rule="any", default=True,
        note="source: vLLM V1 enables prefix caching by default (CacheConfig.enable_prefix_caching)")
    async_scheduling: bool = param(
        "the autoregressive system's vLLM engine schedules a step while the GPU runs the one before, so a "
        "roofline-timed step takes the longer of the GPU's forward overhead and its compute or memory time, "
        "not their sum", rule="any", default=True,
        note="source: vLLM 0.19 schedules asynchronously by default (SchedulerConfig.async_scheduling, true in "
             "the resolved configuration of a run that did not set it: LLMServingSim's RTX 4090 meta.json)")


# The batching parameters only the autoregressive system's vLLM engine reads.
ENGINE_ONLY = ("block_size", "num_gpu_blocks", "runtime_memory_bytes", "prefix_caching", "async_scheduling")


def _named(config: Any, name: str, path: str) -> str:
    """A parameter by the file and line it was given at, else by its path."""
    return _params.origin(config, name) or path


def check_batching(batching: Batching) -> None:
    """vLLM's own rule: a budget below the batch cap could never admit a full batch of decodes."""
    if batching.enabled and batching.token_budget < batching.max_batch:
        raise ConfigError(f"{_named(batching, 'token_budget', 'batching.token_budget')}: {batching.token_budget} "
                          f"tokens cannot hold one decoding token for each of max_batch = {batching.max_batch} "
                          f"sequences ({_named(batching, 'max_batch', 'batching.max_batch')}); give at least "
                          f"{batching.max_batch} (vLLM requires max_num_batched_tokens >= max_num_seqs)")


def draft_memory(role: Any, contexts: int) -> dict[str, Any]:
    """What the draft device's memory holds for ``contexts`` request contexts, by the
    models' own rule (models/workflow/draft_memory.hpp): the weights, one context's KV
    reservation (the model's window, or kv_reserve_tokens), the need, the capacity and
    the parameter that sets it, whether they fit, and how many would."""
    device, model = role.device, role.model
    if isinstance(device, FpgaDevice):
        design, group, name, path = device.accelerator, device.hbm, "capacity_bytes", "draft.device.hbm"
        what = "HBM"
    else:
        design, group, name, path = device.gpu, device.gpu, "memory_bytes", "draft.device.gpu"
        what = "memory"
    m = native().draft_memory(_params.native(model), float(design.weight_bytes_per_param),
                              float(design.kv_bytes_per_element), int(design.kv_reserve_tokens),
                              float(getattr(group, name)), int(contexts), "cluster.draft")
    why = (f"the window of {model.name}" if m["reserve_tokens"] == model.context_window
           else f"kv_reserve_tokens of {device.name}")
    return {**m, "why": why, "what": what, "capacity_at": _named(group, name, f"{path}.{name}")}


def check_draft_contexts(cluster: Cluster, draft: Any) -> None:
    """The draft device must hold its weights and ``contexts_per_device`` KV reservations.
    One context is the engine's own check (a CapacityError when the run starts), as for
    the single-request systems; more are checked here, before any work."""
    contexts = cluster.draft.contexts_per_device
    if contexts <= 1:
        return
    m = draft_memory(draft, contexts)
    if m["fits"]:
        return
    where = _named(cluster.draft, "contexts_per_device", "cluster.draft.contexts_per_device")
    raise ConfigError(
        f"{where}: {contexts} contexts do not fit the {m['what']} of {draft.device.name}: weights "
        f"{m['weights_bytes']:.0f} bytes + {contexts} x {m['context_bytes']:.0f} bytes of KV cache "
        f"({m['reserve_tokens']} tokens a context, {m['why']}) = {m['need_bytes']:.0f} bytes, more than its "
        f"{m['capacity_bytes']:.0f} bytes ({m['capacity_at']}); at most {m['most_contexts']} fit")


def host_link(cluster: Cluster) -> Any:
    """The shared switch link of the draft boards, loaded (checked where it was given)."""
    draft = cluster.draft
    try:
        return load_link(draft.host_link)
    except ConfigError as exc:
        raise ConfigError(f"{_named(draft, 'host_link', 'cluster.draft.host_link')}: {exc}") from None


# Why a value without effect is refused (the same words from a file, from code and from --set).
HOST_LINK_UNSHARED = ("boards share a host link only with cluster.draft.boards_per_host_link > 1: alone it would "
                      "have no effect; give that too, or drop host_link")
BATCHING_OFF = ("has no effect while batching is off (batching.enabled false or left out); turn batching on as well, "
                "or drop it")


def check_host_link(cluster: Cluster) -> None:
    """A host link given for boards that do not share one would be ignored: refused."""
    draft = cluster.draft
    given = _params.origin(draft, "host_link")
    if given and draft.boards_per_host_link == 1:
        raise ConfigError(f"{given}: {HOST_LINK_UNSHARED}")
    if draft.boards_per_host_link > 1:  # else the default link, unused: no file to read per point
        host_link(cluster)


def check_engine_only(scn: Any) -> None:
    """The vLLM engine's block parameters belong to the autoregressive system; given for
    another system they would do nothing, so they are refused."""
    if scn.system == "autoregressive":
        return
    defaults = Batching()
    for name in ENGINE_ONLY:
        if _params.origin(scn.batching, name) or getattr(scn.batching, name) != getattr(defaults, name):
            raise ConfigError(f"{_named(scn.batching, name, 'batching.' + name)}: batching.{name} sets the "
                              f"autoregressive system's vLLM engine; {scn.system} batches by KV bytes "
                              f"(docs/serving.md)")


def _role_kv_bytes_per_token(role: Any) -> float:
    """Bytes of K and V one token keeps in every layer, on the role's GPU."""
    return kv_bytes_per_token(role.model, role.device.gpu.kv_bytes_per_element)


def gpu_blocks(scn: Any) -> int:
    """The vLLM engine's KV blocks per target GPU, as vLLM counts them: the given number,
    or derived from gpu_memory_utilization (Worker.determine_available_memory): what the
    share of memory leaves beside the weights and the engine's runtime memory, in blocks."""
    batching, role = scn.batching, scn.target
    if batching.num_gpu_blocks:
        return int(batching.num_gpu_blocks)
    gpu = role.device.gpu
    weights = role.model.params * gpu.weight_bytes_per_param
    available = batching.gpu_memory_utilization * gpu.memory_bytes - weights - batching.runtime_memory_bytes
    block = batching.block_size * _role_kv_bytes_per_token(role)
    blocks = math.floor(available / block) if available > 0 else 0
    if blocks > GPU_BLOCKS.value:
        where = _named(gpu, "memory_bytes", f"target.device.gpu.memory_bytes")
        raise ConfigError(f"{where}: {gpu.memory_bytes:.4g} bytes of {role.device.name} make {blocks} KV-cache blocks, "
                          f"past the engine's limit of {GPU_BLOCKS.value} ({GPU_BLOCKS.why}); give "
                          f"batching.num_gpu_blocks or larger blocks")
    if blocks < 2:
        where = _named(batching, "gpu_memory_utilization", "batching.gpu_memory_utilization")
        raise ConfigError(f"{where}: {batching.gpu_memory_utilization} of {role.device.name}'s {gpu.memory_bytes:.4g} "
                          f"bytes, less {weights:.4g} bytes of weights and {batching.runtime_memory_bytes:.4g} "
                          f"bytes of runtime memory, leaves no KV-cache block of {block:.0f} bytes; give "
                          f"batching.num_gpu_blocks or more memory")
    return blocks


def threads(scn: Any) -> dict[str, int]:
    """The engine's simulated threads by the parameter that makes them: a thread per device
    and per request slot (a draft context; a sequence of the vLLM engine's batch)."""
    c, b = scn.cluster, scn.batching
    if scn.system == "autoregressive":
        slots = c.target.devices * (b.max_batch if b.enabled else 1)
        return {"cluster.target.devices": c.target.devices + (slots if not b.enabled else 0),
                "batching.max_batch": slots if b.enabled else 0}
    return {"cluster.draft.devices": c.draft.devices,
            "cluster.draft.contexts_per_device": c.draft.devices * c.draft.contexts_per_device,
            "cluster.prm.devices": c.prm.devices, "cluster.target.devices": c.target.devices}


def check_threads(scn: Any) -> None:
    """Devices and request slots together within the engine's limit, named by the
    parameter that makes the most of them."""
    made = threads(scn)
    total = sum(made.values())
    if total <= PROCESSES.value:
        return
    path = max(made, key=made.get)
    group, _, name = path.rpartition(".")
    owner = {"cluster.draft": scn.cluster.draft, "cluster.prm": scn.cluster.prm, "cluster.target": scn.cluster.target,
             "batching": scn.batching}[group]
    parts = ", ".join(f"{p} {n}" for p, n in made.items() if n)
    raise ConfigError(f"{_named(owner, name, path)}: {getattr(owner, name)} makes {total} simulated threads in all "
                      f"({parts}), past the engine's limit of {PROCESSES.value} ({PROCESSES.why})")


def check(scn: Any) -> None:
    """The cluster and batching checks that need the whole scenario."""
    check_threads(scn)
    check_batching(scn.batching)
    check_engine_only(scn)
    check_draft_contexts(scn.cluster, scn.draft)
    check_host_link(scn.cluster)
