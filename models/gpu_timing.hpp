#pragma once
// Latency of one model served on one GPU at batch size 1: a roofline with the
// serving stack's launch overheads.
//   overhead_ns       = forward_overhead_ns + layers * layer_overhead_ns   (eager-mode launches)
//   a forward pass    = overhead_ns + roofline(compute_ns, memory_ns)
//   roofline(c, m)    = (c^p + m^p)^(1/p), p = roofline_exponent; p = 0 is the hard max(c, m)
//   compute_ns        = FLOPs / (peak * compute_efficiency)
//   memory_ns         = (streamed weight bytes + KV bytes read) / (bandwidth * memory_efficiency)
//   decode token at c : FLOPs of one token over c; KV of c tokens
//   prefill n at c    : FLOPs = 2 * (n * layer MACs + output head MACs + attention MACs over
//                       spans c+0 .. c+n-1); KV of c + n tokens
// The output head runs once per sequence (on its last token), as serving engines compute
// logits only where they sample. The smooth roofline is how a GEMM leaves the memory floor:
// neither term hides the other completely near the ridge, where a hard max is too fast.
// The workflow adds request_overhead_ns once per serving request (a drafted step,
// a PRM score, a refinement, a prompt), which the formulas above leave out.
// A measured LatencyProfile, when given, replaces the formula for the phases it covers;
// one holding an operator profile (operator_profile.hpp) times every forward pass from
// the measured operators instead, lone or batched.
// Pure arithmetic: no SystemC, so a fit can evaluate it outside a simulation.
#include <cstdint>
#include <string>
#include <vector>

#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "param_rules.hpp"

namespace cosim {

// One sequence's share of a batched forward pass: a decode token, or a prefill chunk of
// `tokens`, after `context` tokens already in its KV cache.
struct BatchWork {
    int64_t tokens = 1;
    int64_t context = 0;
    bool decode = true;
};

struct GpuParams {
    COSIM_GPU_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
};

class GpuTiming {
public:
    // Checks the parameters (ConfigError naming `where`).
    GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
              LatencyProfile profile = LatencyProfile());

    double overhead_ns() const;
    double decode_token_ns(int64_t context) const;
    double decode_compute_ns(int64_t context) const;
    double decode_memory_ns(int64_t context) const;
    double prefill_ns(int64_t tokens, int64_t context) const;
    double prefill_compute_ns(int64_t tokens, int64_t context) const;
    double prefill_memory_ns(int64_t tokens, int64_t context) const;
    // The smooth roofline of a compute and a memory time (no overheads).
    double roofline(double compute_ns, double memory_ns) const;
    // One forward pass over a batch (iteration-level batching): the weights read once,
    // each sequence's KV read, the batch's FLOPs:
    //   overhead_ns + roofline(sum FLOPs / (peak * efficiency), (weights + sum KV bytes) / effective bandwidth)
    // where a decode token at c reads c tokens of KV and a prefill chunk of n at c reads c + n.
    // A batch of one is the lone operation's time (decode_token_ns, prefill_ns; profiles included).
    // A profile that measured batches of a phase times them instead: a batch's decode part at
    // its size and mean context, its prefill part at its size, mean tokens and mean context;
    // an iteration holding both parts is the roofline scaled by the parts' measured over
    // modelled times.
    double batch_ns(const std::vector<BatchWork>& work) const;
    double streamed_weight_bytes() const { return model_.linear_macs_per_token() * params_.weight_bytes_per_param; }
    double kv_bytes_per_token() const { return model_.kv_bytes_per_token(params_.kv_bytes_per_element); }
    bool profiled(Phase phase) const { return profile_.covers(phase) || profile_.operators() != nullptr; }
    const GpuParams& params() const { return params_; }
    const ModelSpec& model() const { return model_; }

private:
    double stream_ns(double bytes) const {
        check_argument_non_negative("GpuTiming::stream_ns", "bytes", bytes);
        return bytes / (params_.memory_bandwidth_gbps * params_.memory_efficiency);
    }
    double compute_ns(double macs) const;
    // MACs of one sequence's forward pass of n tokens after c: the layers for every token,
    // the output head once, attention over the spans.
    double sequence_macs(double n, double c) const;
    double roofline_ns(const std::vector<BatchWork>& work) const;
    double measured_ns(Phase phase, const std::vector<BatchWork>& part) const;
    // A forward pass timed by the operator profile: its operators, and the output head from
    // the roofline when the profile measured none.
    double operators_ns(const std::vector<BatchWork>& work) const;

    GpuParams params_;
    ModelSpec model_;
    LatencyProfile profile_;
    double decode0_ns_ = 0.0, decode_per_ctx_ns_ = 0.0;  // the formula's decode memory time, precomputed
};

}  // namespace cosim
