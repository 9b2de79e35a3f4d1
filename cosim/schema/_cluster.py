"""A scenario's serving cluster and GPU batching, declared once (docs/serving.md): pools of
draft, PRM and target devices, and how a GPU batches the work of many requests at each
iteration. From this module come the Python classes (cosim/config/_cluster.py), the C++
ClusterShape and BatchingSettings with their readers (generated at build time by
scripts/gen_native_params.py) and `cosim params`. A scenario without these sections is
the single-request system: one device per role, one context on the draft device, no
batching. Standard library only, beside cosim/schema/_declarations.py.

The engine takes the cluster as one flat section: each native parameter of a pool under
``<pool>_<name>`` (``cluster.draft.contexts_per_device`` is ``draft_contexts_per_device``),
so a flat key and a scenario path name the same thing by one rule (`flat_key`).
"""

from __future__ import annotations

from dataclasses import dataclass

try:
    from ._declarations import GPU_BLOCKS, PROCESSES, Decl, Group
except ImportError:  # read by path at build time, after the declarations (scripts/gen_native_params.py)
    from cosim_schema_declarations import GPU_BLOCKS, PROCESSES, Decl, Group  # type: ignore[no-redef]

_ONE_OF_EACH = "source: the single-request systems, one device per role (docs/system.md)"

DRAFT_POOL = Group("cluster.draft", "DraftPool", "ClusterShape", "COSIM_CLUSTER_SHAPE",
                   "The draft devices (FPGA boards or GPUs), all of the scenario's draft device.", (
    Decl("devices", int, "draft devices in the pool", default=1, note=_ONE_OF_EACH, limit=PROCESSES),
    Decl("contexts_per_device", int, "requests one draft device holds at once, each with its own KV cache of the "
         "draft model's window (or the device's kv_reserve_tokens) in the device's memory beside the weights",
         default=1, note="source: the single-request systems hold one context (docs/system.md)", limit=PROCESSES),
    Decl("boards_per_host_link", int, "draft boards behind one PCIe switch, sharing its link to the host "
         "(host_link); 1: each board has its own link to the host", default=1,
         note="source: the single-request systems plug their one board into its own x16 slot (docs/system.md)",
         limit=PROCESSES),
    # Loaded in Python (a built-in link or a link YAML); the engine takes the loaded link's parameters.
    Decl("host_link", str, "the link a PCIe switch's boards share to the host (a built-in link or a link YAML), "
         "with boards_per_host_link > 1", rule="any", default="pcie_gen4_x16", native=False,
         note="estimate: a Gen4 x16 host port, the widest a Gen4 PCIe switch offers (the boards' own Gen3 x16 "
              "links on the U280 are narrower)"),
))

GPU_POOL = Group("cluster.gpu", "GpuPool", "ClusterShape", "COSIM_CLUSTER_SHAPE",
                 "GPUs serving one role (PRM or target), each holding the role's whole model.", (
    Decl("devices", int, "GPUs in the pool, each with a copy of the model", default=1, note=_ONE_OF_EACH,
         limit=PROCESSES),
))

# The cluster's pools in the order the engine numbers its devices: (name, group, help).
POOLS = (("draft", DRAFT_POOL, "the draft devices"), ("prm", GPU_POOL, "the PRM GPUs"),
         ("target", GPU_POOL, "the target GPUs"))


def flat_key(pool: str, name: str) -> str:
    """The engine's cluster key of parameter ``name`` of pool ``pool``."""
    return f"{pool}_{name}"


@dataclass(frozen=True)
class ShapeField:
    """One key of the engine's cluster section: a native parameter of a pool."""

    pool: str
    decl: Decl

    @property
    def key(self) -> str:
        return flat_key(self.pool, self.decl.name)

    @property
    def path(self) -> str:
        return f"cluster.{self.pool}.{self.decl.name}"


# The engine's cluster section, in order (generated as ClusterShape's fields).
SHAPE = tuple(ShapeField(pool, d) for pool, group, _ in POOLS for d in group.params if d.native)


POLICIES = ("fcfs", "verify_first")

BATCHING = Group("batching", "Batching", "BatchingSettings", "COSIM_BATCHING_SETTINGS",
                 "Iteration-level (continuous) batching on the GPUs: at every forward pass a GPU takes the waiting "
                 "work of several requests, within a sequence count and a token budget.", (
    Decl("enabled", bool, "GPUs batch the work of several requests at each iteration; off: one request at a time, "
         "at batch size 1", rule="any", default=False,
         note="source: the systems compared serve every request at batch size 1 (docs/system.md)"),
    Decl("max_batch", int, "most sequences one GPU iteration holds", default=64,
         note="estimate: between the batch caps Sarathi-Serve evaluated vLLM with (32, 64, 128) and under "
              "vLLM's default max_num_seqs (128); an RTX 3090 holding the 7B target in BF16 keeps about 10.5 GB "
              "for KV cache, about 184k tokens at 56 KiB a token, a few thousand tokens for each of 64 requests; "
              "plausible from Sarathi-Serve's 32 to vLLM's 128", range=(32, 128), limit=PROCESSES),
    Decl("token_budget", int, "most tokens one GPU iteration processes (tokens): prefill tokens and one per "
         "decoding sequence, together; a longer prefill is split across iterations", default=2048,
         note="estimate: vLLM's default max_num_batched_tokens (SchedulerConfig, 2048), the larger of the two "
              "token budgets Sarathi-Serve evaluated (512 and 2048); plausible from 512 to 8192 (vLLM's "
              "chunked-prefill budgets)", range=(512, 8192)),
    Decl("policy", str, "which waiting work an iteration admits first: fcfs, in arrival order; verify_first, the "
         "verification of steps of requests in flight ahead of other waiting work", rule="any", default="fcfs",
         choices=POLICIES, note="source: vLLM's default scheduling policy is fcfs (SchedulerConfig.policy)"),
    Decl("gpu_memory_utilization", float, "share of each batching GPU's memory for weights and KV cache: the "
         "sequences of one iteration hold their KV caches in what is left beside every model's weights, and work "
         "that does not fit waits", rule="fraction", default=0.9,
         note="source: vLLM's default gpu_memory_utilization (0.9, EngineArgs)"),
    # The autoregressive system's vLLM engine (models/vllm_scheduler.hpp, docs/serving.md).
    Decl("block_size", int, "tokens per KV-cache block of the autoregressive system's vLLM engine: KV memory is "
         "allocated a block at a time", default=16,
         note="source: vLLM's default block_size on CUDA GPUs (CacheConfig.block_size, 16)"),
    Decl("num_gpu_blocks", int, "KV-cache blocks of the autoregressive system's vLLM engine on each GPU, counted "
         "as vLLM counts them (its null block included); 0: derived, floor((gpu_memory_utilization x memory - "
         "weights - runtime_memory) / (block_size x KV bytes per token))", rule="non_negative", default=0,
         note="source: vLLM derives num_gpu_blocks from gpu_memory_utilization at start-up "
              "(Worker.determine_available_memory); 0 does the same, give the number a vLLM log reports to "
              "match a run exactly", limit=GPU_BLOCKS),
    # Only used to derive num_gpu_blocks, in Python: the engine takes the blocks.
    Decl("runtime_memory_bytes", float, "GPU memory the autoregressive system's vLLM engine holds beside the "
         "weights and the KV cache (activations at the token budget, CUDA graphs, the CUDA context), left out "
         "when num_gpu_blocks is derived", rule="non_negative", default=1.24e9, native=False,
         note="estimate: a vLLM 0.19 run of Llama-3.1-8B on an RTX 4090 (max_num_batched_tokens 2048, "
              "gpu_memory_utilization 0.9, LLMServingSim's published run) kept 2588 blocks of 16 tokens x "
              "128 KiB: 0.9 x 25.25 GB - 16.06 GB of weights - 5.43 GB of KV cache = 1.24 GB. Range: 0.5-3 GB, "
              "from a smaller token budget without CUDA graphs to a larger one with them", range=(0.5e9, 3e9)),
    Decl("prefix_caching", bool, "the autoregressive system's vLLM engine keeps the KV of freed full blocks until "
         "they are reused, so a request whose prefix matches (a shared system prompt, or its own tokens after a "
         "preemption) takes them back instead of recomputing", rule="any", default=True,
         note="source: vLLM V1 enables prefix caching by default (CacheConfig.enable_prefix_caching)"),
    Decl("async_scheduling", bool, "the autoregressive system's vLLM engine schedules a step while the GPU runs "
         "the one before, so a roofline-timed step takes the longer of the GPU's forward overhead and its compute "
         "or memory time, not their sum", rule="any", default=True,
         note="source: vLLM 0.19 schedules asynchronously by default (SchedulerConfig.async_scheduling, true in "
              "the resolved configuration of a run that did not set it: LLMServingSim's RTX 4090 meta.json)"),
))

# The batching parameters only the autoregressive system's vLLM engine reads.
ENGINE_ONLY = ("block_size", "num_gpu_blocks", "runtime_memory_bytes", "prefix_caching", "async_scheduling")
# The batching parameters only the speculative systems' batchers read: the vLLM engine
# admits waiting requests in arrival order and has no verifications to put first.
SPECULATIVE_ONLY = ("policy",)
