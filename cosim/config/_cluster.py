"""A scenario's serving cluster and GPU batching (docs/serving.md): the configuration
classes of the sections declared in cosim/schema/_cluster.py, and the checks that need
the whole scenario (memory, threads, links, which system reads which value)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..schema import _params
from ..schema._declarations import GPU_BLOCKS, PROCESSES
from ..schema._params import param
from .. import devices, systems
from . import _speculation
from .hardware import load_link
from ..errors import ConfigError
from .._extension import native
from ..schema._cluster import BATCHING, DRAFT_POOL, GPU_POOL, POOLS, SPECULATIVE_ONLY

DraftPool = _params.config_class(DRAFT_POOL, __name__)
GpuPool = _params.config_class(GPU_POOL, __name__)
Batching = _params.config_class(BATCHING, __name__)


# Each pool's class, by the pool's name (PRM and target share the GPU pool's).
POOL_CLASSES = {pool: {DRAFT_POOL.python: DraftPool, GPU_POOL.python: GpuPool}[group.python]
                for pool, group, _ in POOLS}


def _cluster_class() -> type:
    """The cluster: one group per declared pool."""
    fields = [(pool, POOL_CLASSES[pool], param(help, rule="any", default=POOL_CLASSES[pool]()))
              for pool, _, help in POOLS]
    cls = dataclasses.make_dataclass("Cluster", fields, frozen=True, kw_only=True)
    cls.__module__ = __name__
    cls.__doc__ = "The devices requests are served on; a request keeps its draft context, PRM and target."
    return cls


Cluster = _cluster_class()


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
    kind = devices.kind_of(device)
    design, group, name = kind.design_of(device), getattr(device, kind.memory.group), kind.memory.field
    path, what = f"draft.device.{kind.memory.group}", kind.memory.words
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
    """The vLLM engine's block parameters belong to the autoregressive system, the batchers'
    policy to the speculative ones; given for the other they would do nothing, so they are
    refused."""
    system = systems.of(scn)
    alone = system.batching_unread == SPECULATIVE_ONLY
    defaults = Batching()
    for name in system.batching_unread:
        if _params.origin(scn.batching, name) or getattr(scn.batching, name) != getattr(defaults, name):
            why = ("sets the speculative systems' batchers; the autoregressive system's vLLM engine admits requests "
                   "in arrival order (docs/serving.md), so it would have no effect" if alone else
                   f"sets the autoregressive system's vLLM engine; {scn.system} batches by KV bytes "
                   f"(docs/serving.md)")
            raise ConfigError(f"{_named(scn.batching, name, 'batching.' + name)}: batching.{name} {why}")


def gpu_blocks(scn: Any) -> int:
    """The vLLM engine's KV blocks per target GPU, as vLLM counts them: the given number,
    or derived from gpu_memory_utilization (Worker.determine_available_memory): what the
    share of memory leaves beside the weights and the engine's runtime memory, in blocks."""
    batching, role = scn.batching, scn.target
    if batching.num_gpu_blocks:
        return int(batching.num_gpu_blocks)
    gpu = role.device.gpu
    # One GPU's: its share of the weights and of every token's KV (a parallel group's).
    kind = devices.kind_of(role.device)
    weights, kv_per_token = kind.group_memory(role)
    proposer = _proposer_on_target(scn)
    if proposer is not None:
        # vLLM loads the proposer beside the target and gives its layers slots in every block.
        more_weights, more_kv = kind.group_memory(dataclasses.replace(role, model=proposer))
        weights, kv_per_token = weights + more_weights, kv_per_token + more_kv
    available = batching.gpu_memory_utilization * gpu.memory_bytes - weights - batching.runtime_memory_bytes
    block = batching.block_size * kv_per_token
    blocks = math.floor(available / block) if available > 0 else 0
    if blocks > GPU_BLOCKS.value:
        where = _named(gpu, "memory_bytes", "target.device.gpu.memory_bytes")
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


def _proposer_on_target(scn: Any) -> Any:
    """The model a scenario's token-level proposer runs on the target's GPUs, or None (no
    speculation read, a host lookup, or drafts made on a draft device)."""
    system = systems.of(scn)
    if not _speculation.reads_target(system, scn.toggles) or system.drafts_on_draft_device:
        return None
    return _speculation.proposer_model(scn.speculation, scn.target)


def threads(scn: Any) -> dict[str, int]:
    """The engine's simulated threads by the parameter that makes them: a thread per device
    and per request slot (a draft context; a sequence of the vLLM engine's batch)."""
    return systems.of(scn).threads(scn)


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
    check_engine_groups(scn)


def check_engine_groups(scn: Any) -> None:
    """A pool whose engines share their MoE layers (``parallel.data_parallel``) holds whole
    groups of them."""
    for pool in systems.of(scn).pools():
        engines = getattr(scn, pool).parallel.data_parallel
        devices = getattr(scn.cluster, pool).devices
        if devices % engines:
            where = _named(getattr(scn.cluster, pool), "devices", f"cluster.{pool}.devices")
            raise ConfigError(f"{where}: {devices} devices do not make whole groups of {pool}.parallel.data_parallel "
                              f"{engines} engines that share their experts")
