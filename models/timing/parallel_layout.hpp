#pragma once
// How one role's model spans a group of GPUs of one kind (docs/hardware.md "Parallel
// groups"), as the roofline needs it:
//   tensor parallel T   each GPU computes 1/T of every layer's MACs and reads 1/T of the
//                       weights; KV heads shard across the group (a head is copied where
//                       T exceeds kv_heads, as vLLM does); MLA's latent is copied on each
//   expert parallel     whole experts on each GPU of the group instead of a 1/T slice of
//                       each: the same weights and MACs per GPU on average, so the
//                       roofline charges it as tensor parallel (it differs in GEMM shapes
//                       and in load imbalance, which the roofline does not see)
//   collectives         two all-reduces per layer (after attention and after the MLP) of
//                       every token's hidden state, a ring over the group's peer link:
//     all_reduce(S) = collective_latency_ns + 2(T-1) * link latency_ns
//                     + 2(T-1)/T * S / (link bandwidth * efficiency)
//                     (NCCL's ring all-reduce: 2(T-1) steps each moving S/T bytes)
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
struct PeerLink {
    double bandwidth_gbps = 0.0;
    double efficiency = 1.0;
    double latency_ns = 0.0;
};

class ParallelLayout {
public:
    ParallelLayout() = default;  // one GPU
    // Checks the group against the model (ConfigError naming `where`).
    ParallelLayout(const std::string& where, const ParallelParams& params, const PeerLink& link,
                   const ModelSpec& model);

    int64_t gpus() const { return params_.tensor_parallel; }
    const ParallelParams& params() const { return params_; }
    const PeerLink& link() const { return link_; }
    // Each GPU's share of the MACs and of the weights.
    double share() const { return share_; }
    // Each GPU's share of the KV cache.
    double kv_share() const { return kv_share_; }
    // One ring all-reduce of `bytes` over the group (0 on one GPU).
    double all_reduce_ns(double bytes) const;
    // The collectives of one forward pass over `tokens` tokens: two all-reduces a layer.
    double collectives_ns(double tokens) const;

private:
    ParallelParams params_;
    PeerLink link_;
    double share_ = 1.0;
    double kv_share_ = 1.0;
    double hidden_ = 0.0;
    double layers_ = 0.0;
};

}  // namespace cosim
