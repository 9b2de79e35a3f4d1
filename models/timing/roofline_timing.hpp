#pragma once
// The GPU roofline with the serving stack's launch overheads (one model on a GPU, or on
// each GPU of a parallel group: parallel_layout.hpp):
//   overhead_ns       = forward_overhead_ns + layers * layer_overhead_ns   (eager-mode launches)
//   a forward pass    = overhead_ns + roofline(compute_ns, memory_ns) + collectives(tokens)
//   roofline(c, m)    = (c^p + m^p)^(1/p), p = roofline_exponent; p = 0 is the hard max(c, m)
//   compute_ns        = FLOPs * share / (peak * compute_efficiency) (the experts' at their share);
//                       a model whose activations are fp8, int8 or fp4 runs its weight GEMMs at the
//                       GPU's rate for that type, so they count peak / rate of a BF16 FLOP each
//                       (attention stays BF16)
//   memory_ns         = (weight bytes * share + KV bytes read * kv_share) / (bandwidth * memory_efficiency)
//   weight bytes(n)   = dense weights + the routed experts n tokens touch (model_spec.hpp)
//   decode token at c : FLOPs of one token over c; KV of c tokens
//   prefill n at c    : FLOPs = 2 * (n * layer MACs + output head MACs + attention MACs over
//                       spans c+0 .. c+n-1); KV of c + n tokens
//   a batch           : overhead_ns + roofline(sum FLOPs, (weights(sum tokens) + sum KV bytes))
//                       + collectives(sum tokens), the weights read once, a decode token at
//                       c reading c tokens of KV, a prefill chunk of n at c reading c + n
// The output head runs once per sequence (on its last token), as serving engines compute
// logits only where they sample. The smooth roofline is how a GEMM leaves the memory floor:
// neither term hides the other completely near the ridge, where a hard max is too fast.
#include <cstdint>
#include <string>
#include <vector>

#include "latency_model.hpp"
#include "model_spec.hpp"
#include "parallel_layout.hpp"
#include "param_rules.hpp"

namespace cosim {

// What one GPU of the group does in a forward pass: the FLOPs and bytes of the roofline's
// terms, before its efficiencies, the FLOPs in BF16 ones (a faster type's counted at its share
// of the BF16 rate), so that FLOPs over peak_tflops is the tensor cores' busy share. The power
// model's load reads them (power_params.hpp).
struct StepWork {
    double flops = 0.0;
    double bytes = 0.0;
    StepWork& operator+=(const StepWork& o) {
        flops += o.flops;
        bytes += o.bytes;
        return *this;
    }
};

struct GpuParams {
    COSIM_GPU_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    // The dense tensor rate for a model's activation precision: that type's rate where the
    // GPU has tensor cores for it, else peak_tflops (its weights widened to BF16, as vLLM's
    // weight-only kernels do on a GPU without them).
    double tflops_for(const std::string& activation_precision) const;
};

// ConfigError (naming `where`) unless the model's weights are stored no wider than its
// activation precision: W8A8 needs 8-bit weights, W4A4 4-bit ones.
void check_precision(const std::string& where, const GpuParams& params, const ModelSpec& model);

class RooflineTiming : public LatencyModel {
public:
    // The parameters and model are checked by the caller (GpuTiming).
    RooflineTiming(const GpuParams& params, const ModelSpec& model, const ParallelLayout& layout = ParallelLayout());

    const char* kind() const override { return "roofline"; }
    double decode_token_ns(int64_t context) const override;
    double prefill_ns(int64_t tokens, int64_t context) const override;
    double batch_ns(const std::vector<BatchWork>& work) const override;

    double overhead_ns() const;
    double decode_compute_ns(int64_t context) const;
    double decode_memory_ns(int64_t context) const;
    double prefill_compute_ns(int64_t tokens, int64_t context) const;
    double prefill_memory_ns(int64_t tokens, int64_t context) const;
    // The smooth roofline of a compute and a memory time (no overheads).
    double roofline(double compute_ns, double memory_ns) const;
    // A batch's roofline, whatever its size (batch_ns times a batch of one as its lone operation).
    double roofline_ns(const std::vector<BatchWork>& work) const;
    // The FLOPs and bytes of one GPU in a batch (a lone operation: a batch of one).
    StepWork work(const std::vector<BatchWork>& work) const;
    // Bytes streamed at the GPU's effective bandwidth.
    double stream_ns(double bytes) const {
        check_argument_non_negative("RooflineTiming::stream_ns", "bytes", bytes);
        return bytes / (params_.memory_bandwidth_gbps * params_.memory_efficiency);
    }
    // Per GPU: the weights one token reads, those `tokens` tokens read together, the weights
    // stored, and the KV bytes of a token of context.
    double streamed_weight_bytes() const { return weight_bytes_for(1.0); }
    double weight_bytes_for(double tokens) const;
    double stored_weight_bytes() const;
    double kv_bytes_per_token() const {
        return model_.kv_bytes_per_token(params_.kv_bytes_per_element) * layout_.kv_share();
    }
    const ParallelLayout& layout() const { return layout_; }
    const GpuParams& params() const { return params_; }
    const ModelSpec& model() const { return model_; }

private:
    // A batch's MACs, KV tokens read and tokens (what its time and its work sum).
    struct BatchSums {
        double macs = 0.0, kv_tokens = 0.0, tokens = 0.0;
    };
    BatchSums sums(const std::vector<BatchWork>& work) const;
    double compute_ns(double macs) const;
    // MACs of one sequence's forward pass of n tokens after c: the layers for every token,
    // the output head once, attention over the spans.
    double sequence_macs(double n, double c) const;
    // The expert MACs of n tokens that a GPU's expert share adds over its tensor-parallel
    // share (0 unless the experts span data-parallel engines).
    double moe_macs(double tokens) const;

    GpuParams params_;
    ModelSpec model_;
    ParallelLayout layout_;
    double linear_cost_ = 1.0;  // BF16 FLOPs a weight GEMM's FLOP costs at the model's precision
    double decode0_ns_ = 0.0, decode_per_ctx_ns_ = 0.0;  // the decode memory time, precomputed
};

}  // namespace cosim
