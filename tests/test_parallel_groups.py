"""Models that span GPUs and mixture-of-experts models (docs/hardware.md "Parallel groups",
"MoE models"): each GPU's share of the work, the all-reduces on the peer link, the
experts a batch touches and MLA's compressed KV, against the formulas written again here."""

import math

import pytest

import cosim
from cosim import ConfigError, load_device, load_link, load_model
from cosim.config._cluster import gpu_blocks
from cosim.config.hardware import ParallelConfig
from cosim.config.scenario import build_scenario
from cosim.schema import _params
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from cosim._extension import native

from handmodel import roofline


class Group:
    """One GPU of a tensor-parallel group of `tp` GPUs, written from docs/hardware.md."""

    def __init__(self, device, model, tp=1, link="nvlink4_h100", dp=1):
        self.g, self.m, self.tp, self.dp = load_device(device).gpu, load_model(model), tp, dp
        self.link = load_link(link)
        # Experts spread over tp x dp GPUs when engines share them (else sliced or over tp).
        self.ep = tp * dp

    def dense_params(self):
        m, h = self.m, self.m.hidden
        att = h * m.heads * m.head_dim * 2 + 2 * h * m.kv_heads * m.head_dim
        if not m.experts:
            return m.layers * (att + 3 * h * m.ffn) + h * m.vocab
        moe_layers = m.layers - m.dense_layers
        return (m.layers * att + m.dense_layers * 3 * h * m.ffn
                + moe_layers * (h * m.experts + 3 * h * m.shared_expert_ffn) + h * m.vocab)

    def expert_params(self, tokens):
        m = self.m
        if not m.experts:
            return 0.0
        touched = m.experts * (1 - (1 - m.experts_per_token / m.experts) ** tokens)
        return (m.layers - m.dense_layers) * touched * 3 * m.hidden * m.expert_ffn

    def ring_gather(self, nbytes):
        # NCCL's ring all-gather or reduce-scatter over the dp engines: dp - 1 steps of nbytes / dp.
        d, link = self.dp, self.link
        return 6600 + (d - 1) * link.latency_ns + (d - 1) / d * nbytes / (link.bandwidth_gbps * link.efficiency)

    def kv_bytes(self):
        m = self.m
        heads_here = m.kv_heads / self.tp if m.kv_heads >= self.tp else 1
        return 2 * m.layers * heads_here * m.head_dim * self.g.kv_bytes_per_element

    def all_reduce(self, nbytes):
        t, link = self.tp, self.link
        if t == 1:
            return 0.0
        return 6600 + 2 * (t - 1) * link.latency_ns + 2 * (t - 1) / t * nbytes / (link.bandwidth_gbps
                                                                                  * link.efficiency)

    def decode_batch(self, seqs, context):
        """One step of `seqs` decodes at `context` each (no overlap of the host); with
        engines sharing the experts (dp > 1), each as loaded as this one."""
        m, g = self.m, self.g
        att = 2 * m.layers * m.heads * m.head_dim
        expert = (m.layers - m.dense_layers) * m.experts_per_token * 3 * m.hidden * m.expert_ffn if m.experts else 0
        # This GPU: 1/tp of the dense MACs, and the experts it holds for all dp engines' tokens.
        macs = (seqs * self.dense_params() + seqs * att * context) / self.tp + seqs * expert * self.dp / self.ep
        compute = 2 * macs / (g.peak_tflops * g.compute_efficiency * 1e3)
        weights = (self.dense_params() / self.tp + self.expert_params(seqs * self.dp) / self.ep) \
            * g.weight_bytes_per_param
        memory = (weights + seqs * context * self.kv_bytes()) / (g.memory_bandwidth_gbps * g.memory_efficiency)
        collectives = 2 * m.layers * self.all_reduce(seqs * m.hidden * 2)
        if self.dp > 1:
            # vLLM's allgather_reducescatter exchange: every engine's hidden states with their top-k
            # weights (fp32) and ids (int32) gathered, the experts' results reduce-scattered.
            gathered = self.dp * seqs
            dispatch = gathered * (m.hidden * 2 + m.experts_per_token * 8)
            collectives += (m.layers - m.dense_layers) * (self.ring_gather(dispatch)
                                                          + self.ring_gather(gathered * m.hidden * 2))
        overhead = g.forward_overhead_ns + m.layers * g.layer_overhead_ns
        return overhead + roofline(compute, memory, g.roofline_exponent) + collectives


def batch_ns(device, model, tp, ep, steps, overlap=False, dp=1, link="nvlink4_h100", exchange="allgather"):
    par = _params.replaced(ParallelConfig(), tensor_parallel=tp, expert_parallel=ep, data_parallel=dp,
                           expert_exchange=exchange)
    d = load_device(device)
    return native().gpu_batch_ns(_params.native(d.gpu), _params.native(load_model(model)), _params.native(par),
                                 _params.native(load_link(link)), steps, overlap)


@pytest.mark.parametrize("model,tp,ep", [("qwen3-32b", 2, 1), ("llama-3.1-70b", 4, 1), ("qwen3-30b-a3b", 2, 2),
                                         ("qwen3-30b-a3b", 1, 1), ("llama-3.1-8b", 1, 1)])
@pytest.mark.parametrize("seqs,context", [(1, 100), (8, 700), (64, 2000)])
def test_a_decode_step_of_a_group_is_each_gpus_share_and_its_all_reduces(model, tp, ep, seqs, context):
    hand = Group("h100-sxm", model, tp).decode_batch(seqs, context)
    assert batch_ns("h100-sxm", model, tp, ep, [(seqs, context, 0, 0)])[0] == pytest.approx(hand, rel=1e-9)


@pytest.mark.parametrize("seqs,context", [(1, 100), (16, 700), (128, 2000)])
def test_engines_that_share_their_experts_read_half_and_exchange_tokens(seqs, context):
    # Qwen3-30B-A3B on two RTX PRO 6000s, vLLM's data parallel 2 with expert parallel 2 over
    # PCIe: each GPU runs its engine's attention whole and the 64 experts it holds for both
    # engines' tokens, gathering both engines' tokens before them and reduce-scattering after.
    hand = Group("rtx-pro-6000", "qwen3-30b-a3b", 1, link="pcie_gen5_x16", dp=2).decode_batch(seqs, context)
    found = batch_ns("rtx-pro-6000", "qwen3-30b-a3b", 1, 2, [(seqs, context, 0, 0)], dp=2, link="pcie_gen5_x16")
    assert found[0] == pytest.approx(hand, rel=1e-9)
    alone = batch_ns("rtx-pro-6000", "qwen3-30b-a3b", 1, 1, [(seqs, context, 0, 0)], link="pcie_gen5_x16")[0]
    assert found[0] != alone


@pytest.mark.parametrize("seqs,context", [(1, 100), (128, 2000)])
@pytest.mark.parametrize("dp", [2, 4])
def test_engines_exchanging_by_all_to_all_send_each_token_once_to_each_gpu_it_needs(seqs, context, dp):
    # DeepEP-style: a token goes once to each other GPU holding one of its 8 experts. With
    # 128 experts, 128/dp on each GPU, it misses a given GPU with probability
    # C(128 - 128/dp, 8) / C(128, 8); the gather and reduce-scatter are replaced by an
    # all-to-all of what this GPU sends, each way.
    m = load_model("qwen3-30b-a3b")
    link = load_link("pcie_gen5_x16")
    rate = link.bandwidth_gbps * link.efficiency
    remote = (dp - 1) * (1 - math.comb(128 - 128 // dp, 8) / math.comb(128, 8))
    sent = seqs * remote

    def a2a(nbytes):
        return 6600 + (dp - 1) * link.latency_ns + nbytes / rate

    group = Group("rtx-pro-6000", "qwen3-30b-a3b", 1, link="pcie_gen5_x16", dp=dp)
    gathered = dp * seqs
    layers = m.layers - m.dense_layers
    by_gather = layers * (group.ring_gather(gathered * (m.hidden * 2 + 64)) + group.ring_gather(gathered * m.hidden * 2))
    by_a2a = layers * (a2a(sent * (m.hidden * 2 + 64)) + a2a(sent * m.hidden * 2))
    hand = group.decode_batch(seqs, context) - by_gather + by_a2a
    found = batch_ns("rtx-pro-6000", "qwen3-30b-a3b", 1, dp, [(seqs, context, 0, 0)], dp=dp, link="pcie_gen5_x16",
                     exchange="all_to_all")
    assert found[0] == pytest.approx(hand, rel=1e-9)


@pytest.mark.parametrize("parallel,message", [
    ({"tensor_parallel": 2, "expert_parallel": 2, "expert_exchange": "all_to_all"},
     r"with data_parallel 1 there is no exchange"),
    ({"tensor_parallel": 2, "expert_parallel": 4, "data_parallel": 2, "expert_exchange": "all_to_all"},
     r"all_to_all with tensor_parallel 2"),
    ({"expert_parallel": 2, "data_parallel": 2, "expert_exchange": "broadcast"}, r"expert_exchange")])
def test_an_exchange_that_cannot_run_is_refused(parallel, message):
    target = {"device": "h100-sxm", "model": "qwen3-30b-a3b", "parallel": parallel}
    with pytest.raises(ConfigError, match=message):
        build_scenario({"system": "autoregressive", "target": target, "cluster": {"target": {"devices": 2}},
                        "batching": {"enabled": True}})


def test_a_batch_touches_the_experts_its_tokens_choose_and_no_more():
    # Qwen3-30B-A3B: 128 experts, 8 a token. One token reads 8 experts a layer; 1,000
    # tokens nearly all 128 ((120/128)^1000 is below 1e-28).
    m, g = load_model("qwen3-30b-a3b"), load_device("h100-sxm").gpu
    group = Group("h100-sxm", "qwen3-30b-a3b")
    assert group.expert_params(1) == pytest.approx(48 * 8 * 3 * 2048 * 768)
    assert group.expert_params(1000) == pytest.approx(48 * 128 * 3 * 2048 * 768)
    # A step of 64 decodes at context 0 reads the dense weights and E(64) experts a layer.
    expected = 128 * (1 - (1 - 8 / 128) ** 64)
    assert expected == pytest.approx(125.9, abs=0.05)  # (120/128)^64 = 0.0161
    ns = batch_ns("h100-sxm", "qwen3-30b-a3b", 1, 1, [(64, 0, 0, 0)])[0]
    assert ns == pytest.approx(group.decode_batch(64, 0), rel=1e-9)
    assert m.params * g.weight_bytes_per_param > (group.dense_params() + group.expert_params(64)) * 2


def test_a_group_of_one_is_the_gpu_alone():
    d, m = load_device("h100-sxm"), load_model("qwen3-32b")
    points = [("decode", 1, 500), ("prefill", 300, 0)]
    alone = native().gpu_timing(_params.native(d.gpu), _params.native(m), None, points)
    one = native().gpu_timing(_params.native(d.gpu), _params.native(m), None, points,
                              _params.native(ParallelConfig()), _params.native(load_link("nvlink4_h100")))
    assert alone["ns"] == one["ns"]
    assert alone["stored_weight_bytes"] == m.params * d.gpu.weight_bytes_per_param


def test_kv_heads_are_copied_where_the_group_outnumbers_them():
    # Qwen3-30B-A3B has 4 KV heads: on 8 GPUs each holds one, a quarter of a token's KV.
    d, m = load_device("h100-sxm"), load_model("qwen3-30b-a3b")
    par = _params.replaced(ParallelConfig(), tensor_parallel=8)
    found = native().gpu_timing(_params.native(d.gpu), _params.native(m), None, [], _params.native(par),
                                _params.native(load_link("nvlink4_h100")))
    whole = 2 * 48 * 4 * 128 * 2
    assert found["kv_bytes_per_token"] == pytest.approx(whole / 4)
    assert found["stored_weight_bytes"] == pytest.approx(m.params * 2 / 8)


def test_mla_caches_its_latent_and_rotary_key_whole_on_every_gpu():
    # DeepSeek-V3: 61 layers of a 512-wide latent and a 64-wide rotary key, BF16: 70,272
    # bytes a token, against 2 x 61 x 128 x 128 x 2 = 3,997,696 for plain K and V.
    d, m = load_device("h100-sxm"), load_model("deepseek-v3")
    assert cosim.config.hardware.kv_bytes_per_token(m, 2) == 61 * (512 + 64) * 2
    par = _params.replaced(ParallelConfig(), tensor_parallel=8, expert_parallel=8)
    found = native().gpu_timing(_params.native(d.gpu), _params.native(m), None, [], _params.native(par),
                                _params.native(load_link("nvlink4_h100")))
    assert found["kv_bytes_per_token"] == 61 * (512 + 64) * 2
    # FP8 weights in 128 x 128 blocks: a byte and 4/16384 of a scale a weight, an eighth on each GPU.
    assert found["stored_weight_bytes"] == pytest.approx(m.params * (1 + 4 / 16384) / 8)


def test_mxfp4_experts_store_four_and_a_quarter_bits_a_weight():
    m = load_model("gpt-oss-20b")
    experts = 24 * 32 * 3 * 2880 * 2880
    d = load_device("h100-sxm")
    found = native().gpu_timing(_params.native(d.gpu), _params.native(m), None, [])
    assert found["stored_weight_bytes"] == pytest.approx((m.params - experts) * 2 + experts * 4.25 / 8)


def test_a_tensor_parallel_target_serves_with_each_gpus_share_and_every_gpus_power():
    # The target alone, batch 1, Qwen3-32B on two H100s: a lone request's decode steps are
    # the group's; its energy is both GPUs' power over them.
    scn = build_scenario({"system": "autoregressive", "target": {"device": "h100-sxm", "model": "qwen3-32b",
                                                                "parallel": {"tensor_parallel": 2}}})
    trace = Trace(plain_header("test"), [plain_problem("r0", 200, 50)])
    per = cosim.simulate(scn, trace).per_problem
    group = Group("h100-sxm", "qwen3-32b", 2)
    g, power = load_device("h100-sxm").gpu, load_device("h100-sxm").power
    decodes = sum(group.decode_batch(1, 200 + i) for i in range(49))
    first = per.column("ttft_s")[0]
    assert per.column("latency_s")[0] - first == pytest.approx(decodes * 1e-9, rel=1e-9)
    prefill = first - g.request_overhead_ns * 1e-9
    # Each GPU draws the load model's power (docs/hardware.md) at its utilisation: the
    # prefill's FLOPs and bytes over its time, the decodes' summed over theirs.
    m, wb = group.m, g.weight_bytes_per_param
    att, head, dense = 2 * m.layers * m.heads * m.head_dim, m.hidden * m.vocab, group.dense_params()
    prefill_flops = 2 * (200 * (dense - head) + head + att * 200 * 199 / 2) / 2
    prefill_bytes = dense / 2 * wb + 200 * group.kv_bytes()
    decode_flops = sum(2 * (dense + att * (200 + i)) / 2 for i in range(49))
    decode_bytes = sum(dense / 2 * wb + (200 + i) * group.kv_bytes() for i in range(49))

    def watts(flops, nbytes, seconds):
        load = power.busy_load + power.compute_load * flops / (g.peak_tflops * 1e12 * seconds) + \
            power.memory_load * nbytes / (g.memory_bandwidth_gbps * 1e9 * seconds)
        return power.idle_w + (power.limit_w - power.idle_w) * (1 - math.exp(-load))

    joules = 2 * (power.idle_w * g.request_overhead_ns * 1e-9
                  + watts(prefill_flops, prefill_bytes, prefill) * prefill
                  + watts(decode_flops, decode_bytes, decodes * 1e-9) * decodes * 1e-9)
    assert per.column("energy_j")[0] == pytest.approx(joules, rel=1e-9)


def test_the_engine_counts_kv_blocks_on_one_gpu_of_the_group():
    base = {"system": "autoregressive", "batching": {"enabled": True}}
    g = load_device("h100-sxm").gpu
    m = load_model("qwen3-32b")
    for tp in (1, 2, 4):
        scn = build_scenario({**base, "target": {"device": "h100-sxm", "model": "qwen3-32b",
                                                 "parallel": {"tensor_parallel": tp}}})
        b = scn.batching
        free = b.gpu_memory_utilization * g.memory_bytes - m.params * 2 / tp - b.runtime_memory_bytes
        block = b.block_size * 2 * 64 * (8 / tp) * 128 * 2
        assert gpu_blocks(scn) == math.floor(free / block)


@pytest.mark.parametrize("role,message", [
    ({"device": "h100-sxm", "model": "qwen3-32b", "parallel": {"tensor_parallel": 3}},
     r"target\.parallel: tensor_parallel: 3 does not divide the 64 attention heads of Qwen3-32B"),
    ({"device": "h100-sxm", "model": "qwen3-32b", "parallel": {"tensor_parallel": 2, "expert_parallel": 2}},
     r"expert_parallel: 2, but Qwen3-32B has no experts"),
    ({"device": "h100-sxm", "model": "qwen3-30b-a3b", "parallel": {"tensor_parallel": 4, "expert_parallel": 2}},
     r"expert_parallel: 2 must equal tensor_parallel \(4\)"),
    ({"device": "h100-sxm", "model": "qwen3-32b", "parallel": {"tensor_parallel": 65}},
     r"tensor_parallel.*64"),
    ({"device": "h100-sxm", "model": "qwen3-32b", "parallel": {"tensor_parallel": 2}, "peer_link": "nvlink9"},
     r"unknown link 'nvlink9'"),
    ({"device": "h100-sxm", "model": "qwen3-32b", "parallel": [2]}, r"target\.parallel: expected a mapping"),
    ({"device": "h100-sxm", "model": "qwen3-30b-a3b", "parallel": {"data_parallel": 2}},
     r"data_parallel: 2 engines share their MoE layers only through expert parallel: give expert_parallel 2"),
])
def test_a_group_the_model_cannot_split_is_refused_naming_the_field(role, message):
    with pytest.raises(ConfigError, match=message):
        build_scenario({"system": "heteroreason", "target": role})


def test_a_pool_holds_whole_groups_of_engines_that_share_their_experts():
    target = {"device": "h100-sxm", "model": "qwen3-30b-a3b", "parallel": {"expert_parallel": 2, "data_parallel": 2}}
    with pytest.raises(ConfigError, match=r"cluster\.target\.devices: 3 devices do not make whole groups of "
                                          r"target\.parallel\.data_parallel 2"):
        build_scenario({"system": "autoregressive", "target": target, "cluster": {"target": {"devices": 3}}})
    scn = build_scenario({"system": "autoregressive", "target": target, "cluster": {"target": {"devices": 2}}})
    # Each GPU stores the dense weights whole and half the experts.
    m = load_model("qwen3-30b-a3b")
    experts = 48 * 128 * 3 * 2048 * 768
    found = native().gpu_timing(_params.native(scn.target.device.gpu), _params.native(m), None, [],
                                _params.native(scn.target.parallel), _params.native(scn.target.peer_link))
    assert found["stored_weight_bytes"] == pytest.approx((m.params - experts) * 2 + experts * 2 / 2)


def test_an_fpga_serves_alone():
    with pytest.raises(ConfigError, match=r"draft\.parallel: an FPGA serves its model alone"):
        build_scenario({"system": "heteroreason", "draft": {"device": "u280", "parallel": {"tensor_parallel": 2}}})


def test_a_set_value_that_breaks_the_group_names_the_flag():
    scn = build_scenario({"system": "heteroreason", "target": {"device": "h100-sxm", "model": "qwen3-32b",
                                                               "parallel": {"tensor_parallel": 2}}})
    with pytest.raises(ConfigError, match=r"^--set x: target\.parallel\.tensor_parallel: 5 does not divide"):
        scn.with_values({"target.parallel.tensor_parallel": 5}, given_as={"target.parallel.tensor_parallel": "--set x"})
    assert scn.with_value("target.parallel.tensor_parallel", 4).target.parallel.tensor_parallel == 4


def test_a_written_scenario_reloads_its_group():
    scn = build_scenario({"system": "heteroreason", "target": {"device": "h100-sxm", "model": "qwen3-32b",
                                                               "parallel": {"tensor_parallel": 2}}})
    again = build_scenario(scn.reloadable())
    assert again.target.parallel == scn.target.parallel and again.target.peer_link == scn.target.peer_link
    assert again.fingerprint() == scn.fingerprint()
    assert type(again.target.peer_link).__name__ == "NvlinkConfig"
