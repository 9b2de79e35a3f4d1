"""The shapes a HuggingFace config gives, per model family: which fields say what, and
the stored parameter count worked out from them (attention, MLP or experts, norms,
embedding and head). ``cosim model import`` (cosim/config/_hf_import.py) writes them as a
model YAML, each value citing the field it came from.

Families: dense llama, mistral, qwen2, qwen3; mixture-of-experts qwen2_moe, qwen3_moe,
gpt_oss, llama4 (its text model), deepseek_v2 and deepseek_v3 (with multi-head latent
attention). What a family's config may hold that the timing models leave out is said
where it is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ConfigError


@dataclass(frozen=True)
class Family:
    qkv_bias: bool = False        # q, k and v carry biases always (Qwen2)
    attention_bias: bool = False  # the config's attention_bias adds q/k/v/o biases
    qk_norm: bool = False         # an RMSNorm on each head's q and k (Qwen3)
    moe: str = ""                 # how its experts are described ("" for a dense model)
    mla: bool = False             # multi-head latent attention (DeepSeek)
    sinks: bool = False           # a learned attention sink per head (gpt-oss)


FAMILIES: dict[str, Family] = {
    "llama": Family(attention_bias=True),
    "mistral": Family(),
    "qwen2": Family(qkv_bias=True),
    "qwen3": Family(attention_bias=True, qk_norm=True),
    "qwen2_moe": Family(qkv_bias=True, moe="qwen"),
    "qwen3_moe": Family(attention_bias=True, qk_norm=True, moe="qwen"),
    "gpt_oss": Family(attention_bias=True, moe="gpt_oss", sinks=True),
    "llama4": Family(moe="llama4"),
    "deepseek_v2": Family(moe="deepseek", mla=True),
    "deepseek_v3": Family(moe="deepseek", mla=True),
}

# Bytes per weight of the quantized checkpoints a config's quantization_config names,
# with their block scales. MXFP4: 4-bit E2M1 elements and one 8-bit E8M0 scale per 32
# (OCP Microscaling Formats (MX) specification v1.0): 4.25 bits. FP8 with 128 x 128
# blocks: one byte and a 4-byte scale per 16,384 weights (DeepSeek-V3's checkpoints).
MXFP4_BYTES = (4 + 8 / 32) / 8
FP8_BLOCK_BYTES = 1 + 4 / (128 * 128)


@dataclass
class Shapes:
    """What the reader found: values for the YAML (value, citation) and the parameter count."""

    values: dict[str, tuple[Any, str]]
    params: int
    breakdown: str


Whole = Callable[..., int]


def gqa_attention(f: Family, hidden: int, heads: int, kv_heads: int, head_dim: int, flag: Callable[..., bool]
                   ) -> tuple[int, str]:
    q, kv = heads * head_dim, kv_heads * head_dim
    params = hidden * q + 2 * hidden * kv + q * hidden
    all_bias = f.attention_bias and flag("attention_bias", False)
    biases = (q + 2 * kv) if (f.qkv_bias or all_bias) else 0
    biases += hidden if all_bias else 0
    params += biases + (2 * head_dim if f.qk_norm else 0) + (heads if f.sinks else 0)
    extras = ", ".join(part for part in (
        "with q/k/v biases" if biases and not all_bias else "with q/k/v/o biases" if all_bias else "",
        "q/k norms" if f.qk_norm else "", "a sink per head" if f.sinks else "") if part)
    return params, extras


def mla_attention(data: dict[str, Any], whole: Whole, hidden: int, heads: int) -> tuple[int, dict[str, Any]]:
    """DeepSeek's multi-head latent attention: its projections and the ranks it caches."""
    kv_rank, rope = whole("kv_lora_rank"), whole("qk_rope_head_dim")
    nope, v_dim = whole("qk_nope_head_dim"), whole("v_head_dim")
    q_rank = whole("q_lora_rank") if data.get("q_lora_rank") is not None else 0
    q_out = heads * (nope + rope)
    q = hidden * q_rank + q_rank + q_rank * q_out if q_rank else hidden * q_out  # with its norm
    kv = hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim)  # with its norm
    fields = {"head_dim": (nope, "qk_nope_head_dim"), "kv_lora_rank": (kv_rank, "kv_lora_rank"),
              "q_lora_rank": (q_rank, "q_lora_rank" if q_rank else "q_lora_rank not given: a full query "
                              "projection"),
              "rope_head_dim": (rope, "qk_rope_head_dim"), "v_head_dim": (v_dim, "v_head_dim")}
    return q + kv + heads * v_dim * hidden, fields


def experts_of(f: Family, data: dict[str, Any], whole: Whole, where: Callable[[str], str], layers: int, hidden: int
               ) -> tuple[dict[str, tuple[Any, str]], int, int, str]:
    """A MoE config's experts: the YAML values, the parameters of one MoE layer's MLP (router,
    experts, shared experts), the number of dense layers and how that number was read."""
    if f.moe == "qwen":
        experts, k, width = whole("num_experts"), whole("num_experts_per_tok"), whole("moe_intermediate_size")
        shared = whole("shared_expert_intermediate_size") if data.get("shared_expert_intermediate_size") else 0
        step = whole("decoder_sparse_step", 1) if data.get("decoder_sparse_step") is not None else 1
        only = data.get("mlp_only_layers") or []
        if not isinstance(only, list) or not all(isinstance(i, int) and 0 <= i < layers for i in only):
            raise ConfigError(f"{where('mlp_only_layers')}: must be a list of layer numbers below {layers}")
        moe = [i for i in range(layers) if i not in only and (i + 1) % step == 0]
        how = f"mlp_only_layers {sorted(only)} and decoder_sparse_step {step}: {layers - len(moe)} dense layers"
        router = hidden * experts + (hidden if shared else 0)  # Qwen2-MoE gates its shared expert
        names = ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size")
        per_expert = 3 * hidden * width
    elif f.moe == "gpt_oss":
        experts, k, width = whole("num_local_experts"), whole("num_experts_per_tok"), whole("intermediate_size")
        shared, moe, how = 0, list(range(layers)), "every layer is MoE"
        router = hidden * experts + experts  # with its bias
        names = ("num_local_experts", "num_experts_per_tok", "intermediate_size", "")
        per_expert = 3 * hidden * width + 2 * width + hidden  # gate/up and down, with biases
    elif f.moe == "llama4":
        experts, k, width = whole("num_local_experts"), whole("num_experts_per_tok"), whole("intermediate_size")
        shared = width  # one shared expert of the routed experts' width in every MoE layer
        step = whole("interleave_moe_layer_step", 1) if data.get("interleave_moe_layer_step") is not None else 1
        moe = list(range(step - 1, layers, step))
        how = f"interleave_moe_layer_step {step}: every {step} layer MoE, {layers - len(moe)} dense"
        router = hidden * experts
        names = ("num_local_experts", "num_experts_per_tok", "intermediate_size", "intermediate_size (one shared "
                 "expert of the experts' width)")
        per_expert = 3 * hidden * width
    else:  # deepseek
        experts, k, width = whole("n_routed_experts"), whole("num_experts_per_tok"), whole("moe_intermediate_size")
        n_shared = whole("n_shared_experts") if data.get("n_shared_experts") else 0
        shared = n_shared * width
        if data.get("moe_layer_freq", 1) != 1:
            raise ConfigError(f"{where('moe_layer_freq')}: only 1 (every layer past the dense ones MoE) is read")
        dense = whole("first_k_dense_replace") if data.get("first_k_dense_replace") else 0
        moe = list(range(dense, layers))
        how = f"first_k_dense_replace {dense}"
        router = hidden * experts + (experts if data.get("topk_method") == "noaux_tc" else 0)  # its score bias
        names = ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                 f"n_shared_experts x moe_intermediate_size ({n_shared} x {width})")
        per_expert = 3 * hidden * width
    if k > experts:
        raise ConfigError(f"{where(names[1])}: {k} experts a token, but only {experts} experts")
    values = {"experts": (experts, names[0]), "experts_per_token": (k, names[1]), "expert_ffn": (width, names[2])}
    if shared:
        values["shared_expert_ffn"] = (shared, names[3])
    values["dense_layers"] = (layers - len(moe), how)
    layer_mlp = router + experts * per_expert + 3 * hidden * shared
    return values, layer_mlp, layers - len(moe), (f"router {router}, {experts} experts x {per_expert}"
                                                  + (f", shared experts {3 * hidden * shared}" if shared else ""))


def precision(data: dict[str, Any], where: Callable[[str], str]) -> dict[str, tuple[Any, str]]:
    """The checkpoint's own precision where its quantization_config gives one the models read."""
    quant = data.get("quantization_config")
    if quant is None:
        return {}
    if not isinstance(quant, dict):
        raise ConfigError(f"{where('quantization_config')}: must be a mapping")
    method = quant.get("quant_method")
    if method == "mxfp4":
        return {"expert_bytes_per_param": (MXFP4_BYTES, "quantization_config quant_method mxfp4: the experts' "
                                                        "weights in MXFP4, 4-bit elements and an 8-bit scale per 32 "
                                                        "(OCP MX specification v1.0): 4.25 bits")}
    if method == "fp8" and quant.get("weight_block_size") == [128, 128]:
        found = {"weight_bytes_per_param": (FP8_BLOCK_BYTES, "quantization_config quant_method fp8, "
                                                             "weight_block_size [128, 128]: one byte a weight and a "
                                                             "4-byte scale per 128 x 128 block")}
        scheme = quant.get("activation_scheme")
        if scheme in ("dynamic", "static"):
            # W8A8: the activations quantized to FP8 too (per token group when dynamic).
            found["activation_precision"] = ("fp8", f"quantization_config quant_method fp8, activation_scheme "
                                                    f"{scheme}: FP8 activations (W8A8)")
        return found
    raise ConfigError(f"{where('quantization_config')}: quant_method {method!r} is not read (mxfp4, or fp8 in "
                      f"128 x 128 blocks); give weight_bytes_per_param in the model YAML by hand")
