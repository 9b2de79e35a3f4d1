#pragma once
// How one role's model spans a group of GPUs of one kind (docs/hardware.md "Parallel
// groups"), as the roofline needs it:
//   tensor parallel T   each GPU computes 1/T of every layer's MACs and reads 1/T of the
//                       weights; KV heads shard across the group (a head is copied where
//                       T exceeds kv_heads, as vLLM does); MLA's latent is copied on each
//   expert parallel E   whole experts on each GPU instead of a 1/T slice of each. E = T:
//                       the experts spread over the tensor-parallel group, the same bytes
//                       and MACs per GPU on average as the slices, so charged as tensor
//                       parallel (GEMM shapes and load imbalance, which the roofline does
//                       not see, differ). E = T x D: the D engines of a pool's data-parallel
//                       group share their MoE layers (vLLM's data parallel with expert
//                       parallel): taking the engines as equally loaded, each GPU runs the
//                       experts it holds for all D engines' tokens, reads 1/E of the experts
//                       D x n tokens touch and does D/E of their expert MACs
//   collectives         two all-reduces per layer (after attention and after the MLP) of
//                       every token's hidden state, a ring over the group's peer link:
//     all_reduce(S) = collective_latency_ns + 2(T-1) * link latency_ns
//                     + 2(T-1)/T * S / (link bandwidth * efficiency)
//                     (NCCL's ring all-reduce: 2(T-1) steps each moving S/T bytes)
//                       and, across the D data-parallel engines, vLLM's default exchange of a
//                       MoE layer's tokens (VLLM_ALL2ALL_BACKEND allgather_reducescatter): every
//                       engine gathers all engines' hidden states with their top-k weights and
//                       ids (fp32 and int32) before the experts, and the results are
//                       reduce-scattered back after them, each a ring over the D engines:
//     gather(S)     = collective_latency_ns + (D-1) * link latency_ns
//                     + (D-1)/D * S / (link bandwidth * efficiency)
//                       (NCCL's ring all-gather and reduce-scatter: D-1 steps each moving S/D)
//                       where S is the D engines' gathered bytes; or, with expert_exchange
//                       all_to_all (DeepEP's and pplx's kernels, engines of one GPU each), each
//                       token sent once to each other GPU that holds one of its k experts
//                       (r = (E-1)(1 - C(X - X/E, k) / C(X, k)) of them, X experts) and back:
//     all_to_all(S) = collective_latency_ns + (E-1) * link latency_ns
//                     + S / (link bandwidth * efficiency)
//                       where S is the bytes this GPU sends
// A group of one GPU is the identity: every share 1, no collective.
// Pure arithmetic: no SystemC.
#include <cstdint>
#include <string>

#include "model_spec.hpp"
#include "param_rules.hpp"

namespace cosim {

struct ParallelParams {
    COSIM_PARALLEL_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
};

// The link the GPUs of a group share for their collectives: NVLink, or PCIe through a
// switch or the host (a link description's bandwidth per direction, efficiency, latency).
// `pcie`: the link is the GPUs' own PCIe links, which also carry their host's transfers
// (a system with a fabric books the collectives there: GpuProxy::set_collective_link).
struct PeerLink {
    double bandwidth_gbps = 0.0;
    double efficiency = 1.0;
    double latency_ns = 0.0;
    bool pcie = false;
};

// A forward pass's collectives as its link carries them: `steps` ring steps (or all-to-all
// rounds), each one link latency, moving `bytes` in all out of each GPU and as many into it,
// and NCCL's fixed latency of each collective, spent on the GPUs (a kernel's launch and
// synchronisation) rather than on the wire.
struct CollectiveTraffic {
    double fixed_ns = 0.0;
    double steps = 0.0;
    double bytes = 0.0;

    bool empty() const { return steps <= 0.0 && fixed_ns <= 0.0; }
    // The link's time for it, either direction, when nothing else is on the link.
    double link_ns(const PeerLink& link) const {
        return steps <= 0.0 ? 0.0 : steps * link.latency_ns + bytes / (link.bandwidth_gbps * link.efficiency);
    }
    CollectiveTraffic& operator+=(const CollectiveTraffic& o) {
        fixed_ns += o.fixed_ns;
        steps += o.steps;
        bytes += o.bytes;
        return *this;
    }
};

class ParallelLayout {
public:
    ParallelLayout() = default;  // one GPU
    // Checks the group against the model (ConfigError naming `where`).
    ParallelLayout(const std::string& where, const ParallelParams& params, const PeerLink& link,
                   const ModelSpec& model);

    int64_t gpus() const { return params_.tensor_parallel; }
    int64_t engines() const { return params_.data_parallel; }
    const ParallelParams& params() const { return params_; }
    const PeerLink& link() const { return link_; }
    // Each GPU's share of the MACs and of the weights.
    double share() const { return share_; }
    // Each GPU's share of the KV cache.
    double kv_share() const { return kv_share_; }
    // Each GPU's share of the experts' weights and of the expert MACs of the tokens the
    // group's experts serve, and those tokens for `tokens` of this engine.
    double expert_weight_share() const { return expert_weight_share_; }
    double expert_compute_share() const { return expert_compute_share_; }
    double expert_tokens(double tokens) const { return tokens * static_cast<double>(params_.data_parallel); }
    // The collectives of one forward pass over `tokens` tokens: two all-reduces a layer, and a
    // MoE layer's gather and reduce-scatter (or all-to-all) across data-parallel engines.
    CollectiveTraffic traffic(double tokens) const;
    // Their time with the link to themselves: fixed latency plus the link's time.
    double collectives_ns(double tokens) const {
        const CollectiveTraffic t = traffic(tokens);
        return t.fixed_ns + t.link_ns(link_);
    }
    // The GPUs' PCIe links carry the collectives (a PCIe peer link, a group of more than one).
    bool on_pcie() const { return link_.pcie && (params_.tensor_parallel > 1 || params_.data_parallel > 1); }
    // A token's routing beside its hidden state in the gather: a top-k weight (fp32) and an
    // expert id (int32) per expert it chose (vLLM's FusedMoE dispatch).
    static constexpr double kRoutingBytes = 8.0;

private:
    // One ring all-reduce of `bytes` over the group (nothing on one GPU).
    CollectiveTraffic all_reduce(double bytes) const;
    // One ring all-gather or reduce-scatter of `bytes` in all over the data-parallel engines
    // (nothing on one engine).
    CollectiveTraffic ring_gather(double bytes) const;
    // One all-to-all in which this GPU sends `bytes` (nothing unless expert_exchange is all_to_all).
    CollectiveTraffic all_to_all(double bytes) const;

    ParallelParams params_;
    PeerLink link_;
    double share_ = 1.0;
    double kv_share_ = 1.0;
    double expert_weight_share_ = 1.0;
    double expert_compute_share_ = 1.0;
    double hidden_ = 0.0;
    double layers_ = 0.0;
    double moe_layers_ = 0.0;
    double experts_per_token_ = 0.0;
    bool all_to_all_ = false;
    double remote_gpus_ = 0.0;
};

}  // namespace cosim
