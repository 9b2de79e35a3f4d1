"""Every parameter the native models take, declared once: its name (the unit is in the
name), type, rule, help and default. From this module come the Python configuration
classes (cosim.hardware), the C++ parameter structs with their checks and dict readers
(generated at build time by scripts/gen_native_params.py as X-macro lists), and
`cosim params`. It imports nothing but the standard library, so the build can read it.

Adding a parameter: declare it here, give it a value (cited) in the YAML files of the
devices, links or models it belongs to, and use it in the C++ model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # a parameter every file must give


@dataclass(frozen=True)
class Limit:
    """The largest value of a parameter the engine simulates, and why."""

    value: int
    why: str

    def __str__(self) -> str:
        """How every refusal names it: "... is past the engine's limit of N (why)"."""
        return f"the engine's limit of {self.value} ({self.why})"


# The engine's limits, declared once: the parameters below and the cluster's
# (cosim/config/_cluster.py) name them; a value past one is refused when the scenario is
# built, naming the parameter, where it was given and the limit.
TOKENS = Limit(2**31 - 1, "the engine counts a context's tokens in 32-bit integers")
# Every device and every request slot is a SystemC thread with its own stack (each one
# mapped with a guard page): Linux's default of 65530 memory maps per process holds about
# 32,000; half that leaves room for the rest of the process.
PROCESSES = Limit(16384, "each device and request slot is a simulated thread with its own stack; the engine "
                         "runs at most 16384 of them")
# One transfer over a link is one TLM payload, whose length is an unsigned int.
PAYLOAD = Limit(2**32 - 1, "one transfer on a link is one TLM payload, at most 4 GiB")
# The kernel's clock: 64-bit picoseconds, about 9.2e6 s (106 days) of simulated time.
CLOCK_PS = Limit(2**63 - 1, "the kernel counts simulated time in 64-bit picoseconds, about 106 days")
# A measured time is one forward pass, one call or one operator: milliseconds to seconds.
# An hour is past any of them; a larger number is a unit error (microseconds given as
# seconds), and would stop a run far from the file that caused it.
MEASURED_S = Limit(3600, "a measured time is of one call or one operator; more than an hour (3600 s) is no "
                         "forward pass")
# The vLLM engine's block pool keeps about 40 bytes per KV block: 2^22 blocks take 170 MB.
# With 16-token blocks that is 67M tokens of KV per GPU, past any GPU's memory.
GPU_BLOCKS = Limit(2**22, "the engine's block pool keeps each block in memory; 2^22 blocks of 16 tokens is "
                          "past any GPU's KV cache")


@dataclass(frozen=True)
class Decl:
    name: str
    type: type  # float, int, bool or str
    help: str
    rule: str = "positive"  # positive, non_negative, fraction or any
    default: Any = REQUIRED
    native: bool = True  # False: Python only (names and descriptions)
    choices: tuple[str, ...] | None = None  # the words a text parameter may take
    note: str = ""  # where the default comes from: "source: ..." or "estimate: ..."
    range: tuple[float, float] | None = None  # the default's plausible (low, high); every estimate has one
    limit: Limit | None = None  # the largest value the engine simulates


@dataclass(frozen=True)
class Group:
    key: str     # the group's name in `cosim params` (a cluster pool's: its kind, cluster.gpu)
    python: str  # the configuration class (cosim.hardware, cosim/config/scenario.py, _cluster.py)
    native: str  # the C++ struct that holds the native parameters
    macro: str   # the X-macro list generated for it
    doc: str
    params: tuple[Decl, ...]


def _text(name: str, help: str, default: Any = REQUIRED, native: bool = False) -> Decl:
    return Decl(name, str, help, rule="any", default=default, native=native)


PCIE = Group("pcie", "PcieLinkConfig", "PcieLinkParams", "COSIM_PCIE_LINK_PARAMS", "A PCIe link, per direction.", (
    _text("name", "link name"),
    _text("description", "what this link is", default=""),
    Decl("bandwidth_gbps", float, "raw bandwidth per direction"),
    Decl("efficiency", float, "share of raw bandwidth a DMA transfer achieves", rule="fraction"),
    Decl("latency_ns", float, "fixed cost of one transfer (DMA setup and flight)", rule="non_negative"),
))

HBM = Group("hbm", "HbmConfig", "HbmParams", "COSIM_HBM_PARAMS",
            "An FPGA board's memory: its HBM pseudo-channels, or on a DDR board its DDR channels.", (
    Decl("capacity_bytes", float, "memory capacity"),
    Decl("pseudo_channels", int, "number of HBM pseudo-channels (on a DDR board: DDR channels)"),
    Decl("channel_bandwidth_gbps", float, "peak bandwidth of one channel"),
    Decl("efficiency", float, "share of peak a channel sustains on long streaming reads", rule="fraction"),
))

POWER = Group("power", "PowerConfig", "PowerParams", "COSIM_POWER_PARAMS",
              "Board power per state, a GPU's busy power from its load, or an FPGA board's from its design "
              "(docs/hardware.md).", (
    Decl("idle_w", float, "board power when idle", rule="non_negative"),
    Decl("prefill_w", float, "board power while prefilling (state powers; 0 with the load or design model)",
         rule="non_negative", default=0.0),
    Decl("decode_w", float, "board power while decoding (state powers; 0 with the load or design model)",
         rule="non_negative", default=0.0),
    Decl("transfer_w", float, "board power while only moving data", rule="non_negative"),
    # The load model: busy power = idle + (limit - idle) * (1 - exp(-load)),
    # load = busy_load + compute_load * Uc + memory_load * Um (docs/hardware.md).
    Decl("limit_w", float, "a GPU's power limit, which its busy power approaches as its load grows; > 0 turns the "
                           "load model on in place of prefill_w and decode_w (0: state powers)",
         rule="non_negative", default=0.0),
    Decl("busy_load", float, "the load model's load of a busy GPU whatever its utilisation (clocks up, kernels "
                             "resident, host stalls between kernels)", rule="non_negative", default=0.0),
    Decl("compute_load", float, "the load model's load per unit of tensor-core utilisation (FLOP rate / peak)",
         rule="non_negative", default=0.0),
    Decl("memory_load", float, "the load model's load per unit of memory-bandwidth utilisation (byte rate / peak)",
         rule="non_negative", default=0.0),
    # The design model (FPGA boards): busy power = idle + (MAC energy x MACs + memory energy x
    # bits moved) / time, from what the decoder does (docs/hardware.md).
    Decl("mac_energy_pj", float, "an FPGA design's energy per multiply-accumulate of its array, its operands' "
                                 "on-chip movement included; > 0 (or memory_energy) derives the busy states' power "
                                 "from the design in place of prefill_w and decode_w", rule="non_negative", default=0.0),
    Decl("memory_energy_pj_per_bit", float, "an FPGA design's energy per bit its decoder moves to or from its "
                                            "memory, the memory controller and PHY included", rule="non_negative",
         default=0.0),
))

FPGA = Group("fpga", "FpgaAcceleratorConfig", "FpgaAcceleratorParams", "COSIM_FPGA_ACCELERATOR_PARAMS",
             "The draft decoder design on an FPGA.", (
    Decl("clock_mhz", float, "kernel clock; the MAC array and the HBM ports run on it"),
    Decl("macs_per_cycle", float, "multiply-accumulates the MAC array retires per cycle (its lanes); caps compute "
                                  "at macs x clock"),
    Decl("hbm_ports", int, "memory ports wired to the decoder; weights and KV stream through them. Up to one a "
                           "channel, each reads its own; ports beyond the channels share them"),
    Decl("port_width_bits", float, "data width of one memory port: a port moves at most width x clock, and the "
                                   "channels behind the ports cap them at channel bandwidth x efficiency"),
    Decl("port_efficiency", float, "share of a port's width x clock the design keeps busy (bursts, stalls)",
         rule="fraction"),
    Decl("pipeline_cycles_per_layer", float, "cycles per layer that nothing overlaps (reductions, softmax, norms); "
                                             "added to every forward pass", rule="non_negative"),
    Decl("weight_bytes_per_param", float, "bytes per weight (W8A8: 1)"),
    Decl("kv_bytes_per_element", float, "bytes per K or V element"),
    Decl("kv_reserve_tokens", int, "KV cache reserved in HBM, tokens (0: the model's window)", rule="non_negative",
         default=0, limit=TOKENS),
    Decl("kvmu", str, "the KVMU: tlm, its behavioural model, or rtl, its Verilog (rtl/kvmu.v) Verilated and "
                      "driven pin by pin, checked against the model on every operation (needs a build with "
                      "Verilator)", rule="any", default="tlm", choices=("tlm", "rtl")),
))

GPU = Group("gpu", "GpuConfig", "GpuParams", "COSIM_GPU_PARAMS", "A GPU serving one model at batch size 1.", (
    Decl("memory_bytes", float, "device memory"),
    Decl("memory_bandwidth_gbps", float, "peak memory bandwidth"),
    Decl("memory_efficiency", float, "share of peak bandwidth a batch-1 decode reaches", rule="fraction"),
    Decl("peak_tflops", float, "dense tensor throughput at the serving precision (BF16)"),
    Decl("fp8_tflops", float, "dense FP8 tensor throughput (0: no FP8 tensor cores; FP8 weights are widened and "
                              "run at peak_tflops)", rule="non_negative", default=0.0),
    Decl("int8_tflops", float, "dense INT8 tensor throughput, TOPS (0: none; INT8 weights run at peak_tflops)",
         rule="non_negative", default=0.0),
    Decl("fp4_tflops", float, "dense FP4 tensor throughput (0: no FP4 tensor cores; FP4 weights are widened and "
                              "run at peak_tflops)", rule="non_negative", default=0.0),
    Decl("compute_efficiency", float, "share of peak throughput a prefill reaches", rule="fraction"),
    Decl("roofline_exponent", float, "p of the smooth roofline (compute^p + memory^p)^(1/p) of a forward pass; "
                                     "0: the hard max", rule="non_negative", default=0.0),
    Decl("request_overhead_ns", float, "serving-stack cost of one request (a drafted step, a PRM score, a "
                                       "refinement, a prompt)", rule="non_negative", default=0.0),
    Decl("forward_overhead_ns", float, "fixed host and launch cost of one forward call", rule="non_negative"),
    Decl("layer_overhead_ns", float, "launch cost per transformer layer (eager mode)", rule="non_negative"),
    Decl("sampler_logit_ns", float, "the sampler's time per logit of each row a pass samples, where "
                                        "requests sample with top-p or top-k by sorting the vocabulary (vLLM's "
                                        "PyTorch path); 0: greedy, or a sampler that does not sort",
         rule="non_negative", default=0.0),
    Decl("weight_bytes_per_param", float, "bytes per weight (BF16: 2)"),
    Decl("kv_bytes_per_element", float, "bytes per K or V element"),
    Decl("kv_reserve_tokens", int, "KV cache reserved, tokens (0: the model's window)", rule="non_negative",
         default=0, limit=TOKENS),
))

MODEL = Group("model", "ModelConfig", "ModelSpec", "COSIM_MODEL_PARAMS", "A decoder-only transformer.", (
    _text("name", "model name", native=True),
    _text("description", "what this model is", default=""),
    Decl("layers", int, "transformer layers"),
    Decl("hidden", int, "hidden size"),
    Decl("heads", int, "attention (query) heads"),
    Decl("kv_heads", int, "key/value heads (grouped-query attention)"),
    Decl("head_dim", int, "dimension of one head"),
    Decl("ffn", int, "intermediate size of the gated MLP"),
    Decl("vocab", int, "vocabulary size"),
    Decl("params", float, "total parameters (stored weights)"),
    Decl("lm_head", bool, "true: the output head projects onto the vocabulary", rule="any", default=True),
    Decl("score_head_params", float, "parameters of a scoring head instead (PRMs)", rule="non_negative",
         default=0.0),
    Decl("context_window", int, "longest context the model supports, tokens", limit=TOKENS),
    # Mixture of experts (docs/hardware.md "MoE models"): 0 experts is a dense model.
    Decl("experts", int, "routed experts of a MoE layer (0: every MLP is dense)", rule="non_negative", default=0),
    Decl("experts_per_token", int, "routed experts each token uses (top-k)", rule="non_negative", default=0),
    Decl("expert_ffn", int, "intermediate size of one routed expert's gated MLP", rule="non_negative", default=0),
    Decl("shared_expert_ffn", int, "intermediate size of the shared experts every token uses, together",
         rule="non_negative", default=0),
    Decl("dense_layers", int, "layers of a MoE model whose MLP is the dense one of size ffn", rule="non_negative",
         default=0),
    # Multi-head latent attention (DeepSeek-V2/V3): 0 kv_lora_rank is grouped-query attention.
    Decl("kv_lora_rank", int, "rank of the compressed KV latent that MLA caches (0: plain K and V)",
         rule="non_negative", default=0),
    Decl("q_lora_rank", int, "rank of MLA's compressed query (0: a full query projection)", rule="non_negative",
         default=0),
    Decl("rope_head_dim", int, "MLA's decoupled rotary key width per head, cached beside the latent",
         rule="non_negative", default=0),
    Decl("v_head_dim", int, "MLA's value width per head (0: head_dim)", rule="non_negative", default=0),
    # The checkpoint's precision where it is its own (gpt-oss ships MXFP4 experts).
    Decl("weight_bytes_per_param", float, "bytes per stored weight of this checkpoint (0: the serving device's "
                                          "precision)", rule="non_negative", default=0.0),
    Decl("expert_bytes_per_param", float, "bytes per routed-expert weight, block scales included (0: as the "
                                          "other weights)", rule="non_negative", default=0.0),
    Decl("activation_precision", str, "the type its matrix multiplies take activations in: bf16, or fp8, int8 or "
                                      "fp4 with weights stored no wider (W8A8, W4A4), whose GEMMs run at the GPU's "
                                      "rate for that type", rule="any", default="bf16",
         choices=("bf16", "fp8", "int8", "fp4")),
))

PARALLEL = Group("parallel", "ParallelConfig", "ParallelParams", "COSIM_PARALLEL_PARAMS",
                 "How a role's model spans GPUs of one kind.", (
    Decl("tensor_parallel", int, "GPUs the role's model is split over: weights, heads and KV shard across them, "
                                 "and each layer all-reduces twice", default=1, limit=Limit(64, "a tensor-parallel "
                                 "group spans at most 64 GPUs")),
    Decl("expert_parallel", int, "GPUs a MoE model's routed experts are spread over, whole experts on each (1: "
                                 "every expert split across the tensor-parallel group; tensor_parallel; or "
                                 "tensor_parallel x data_parallel)", default=1,
         limit=Limit(64, "an expert-parallel group spans at most 64 GPUs")),
    Decl("data_parallel", int, "engines of the pool (each a device of it) whose MoE layers share one "
                               "expert-parallel group, as vLLM's data parallel with expert parallel: each runs "
                               "its own requests' attention and exchanges tokens with the others in every MoE "
                               "layer", default=1, limit=Limit(64, "an expert-parallel group spans at most 64 GPUs")),
    Decl("expert_exchange", str, "how engines that share their experts move a MoE layer's tokens: allgather "
                                 "(vLLM's default: every engine gathers all engines' tokens, the results "
                                 "reduce-scattered back) or all_to_all (DeepEP's and pplx's kernels: a token sent "
                                 "once to each GPU that holds one of its experts, and back)", rule="any",
         default="allgather", choices=("allgather", "all_to_all"),
         note="source: vLLM's VLLM_ALL2ALL_BACKEND, default allgather_reducescatter (vllm/envs.py)"),
    Decl("collective_latency_ns", float, "fixed cost of one all-reduce, before the link's latency per ring step",
         rule="non_negative", default=6600.0,
         note="source: NCCL's base latency of a ring all-reduce with its low-latency protocol, 6.6 us "
              "(NVIDIA/nccl src/graph/tuning.cc, baseLat, Ring LL); its Simple protocol is 8.4 us, and vLLM's own "
              "all-reduce for small messages on NVLink is faster", range=(3000.0, 8400.0)),
    Decl("activation_bytes", float, "bytes per activation element an all-reduce moves (BF16: 2)", default=2.0,
         note="source: vLLM all-reduces activations in the model's dtype, BF16 here"),
))

GROUPS = (PCIE, HBM, POWER, FPGA, GPU, MODEL, PARALLEL)
