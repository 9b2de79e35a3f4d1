#pragma once
// Latency proxy of one model served on one GPU (SPEC section 4), batch size 1.
//   overhead_ns       = forward_overhead_ns + layers * layer_overhead_ns   (eager-mode launches)
//   decode token at c = overhead_ns + (streamed weight bytes + c * KV bytes per token) / (bandwidth * efficiency)
//   prefill n at c    = overhead_ns + max(FLOPs / (peak * efficiency), (weights + (c + n) KV) / effective bandwidth)
// The workflow adds request_overhead_ns once per serving request (a drafted step,
// a PRM score, a refinement, a prompt), which the formulas above leave out.
//   FLOPs             = 2 * (n * linear MACs + attention MACs over spans c+0 .. c+n-1)
// A measured LatencyProfile, when given, replaces the formula for the phases it covers.
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "abort_signal.hpp"
#include "hbm.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "power.hpp"

namespace cosim {

struct GpuParams {
    double memory_bytes = 0.0;
    double memory_bandwidth_gbps = 0.0;
    double memory_efficiency = 1.0;
    double peak_tflops = 0.0;            // dense tensor throughput at the serving precision
    double compute_efficiency = 1.0;
    double request_overhead_ns = 0.0;    // serving-stack cost of one request (a step, a score, a refinement)
    double forward_overhead_ns = 0.0;    // fixed host/launch cost of one forward call
    double layer_overhead_ns = 0.0;      // extra launch cost per transformer layer (eager mode)
    double weight_bytes_per_param = 2.0; // BF16
    double kv_bytes_per_element = 2.0;
    int64_t kv_reserve_tokens = 0;       // KV memory reserved; 0 reserves the model's context window

    void validate(const std::string& where) const;
};

class GpuProxy : public sc_core::sc_module {
public:
    GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model, const PowerParams& power,
             LatencyProfile profile = LatencyProfile());
    // A second model on a GPU that already has a proxy: shares that GPU's power meter
    // (one physical board, one energy integral) and its memory capacity check.
    GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model, Power& shared_power,
             LatencyProfile profile = LatencyProfile());

    double overhead_ns() const;
    double decode_token_ns(int64_t context) const;
    double prefill_ns(int64_t tokens, int64_t context) const;
    double prefill_compute_ns(int64_t tokens, int64_t context) const;
    double prefill_memory_ns(int64_t tokens, int64_t context) const;
    double streamed_weight_bytes() const;
    double kv_bytes_per_token() const;

    // Blocking operations, called from an SC_THREAD.
    // Returns false if `abort` cut it short (nothing was prefilled then).
    bool prefill(int64_t tokens, int64_t context, AbortSignal* abort = nullptr);
    // Decodes `tokens` tokens after `context`; token_ready is notified after each.
    // An abort stops it at once; returns the tokens decoded.
    int64_t decode(int64_t tokens, int64_t context, AbortSignal* abort = nullptr);

    sc_core::sc_event token_ready;  // notified per decoded token once enabled
    void enable_token_events() { token_events_ = true; }

    const Power& power() const { return *power_; }
    Power& power() { return *power_; }
    const GpuParams& params() const { return params_; }
    const ModelSpec& model() const { return model_; }
    bool profiled(Phase phase) const { return profile_.covers(phase); }
    int64_t tokens_decoded() const { return tokens_decoded_; }
    int64_t tokens_prefilled() const { return tokens_prefilled_; }

private:
    void init();

    GpuParams params_;
    ModelSpec model_;
    Hbm memory_;
    std::unique_ptr<Power> own_power_;
    Power* power_;
    LatencyProfile profile_;
    bool token_events_ = false;
    double decode0_ns_ = 0.0, decode_per_ctx_ns_ = 0.0;  // the formula's decode time, precomputed
    int64_t tokens_decoded_ = 0;
    int64_t tokens_prefilled_ = 0;
};

}  // namespace cosim
