#pragma once
// Timing of a fully streaming decoder on an FPGA, built the way HLS LLM decoders
// are: a MAC array fed by HBM ports, layer after layer, with a few pipeline
// cycles per layer that nothing overlaps.
//
// Per token, at a context of c earlier tokens, at kernel clock f:
//   compute_ns  = (linear MACs + attention MACs over c) / macs_per_cycle / f
//   port        = port_width_bits / 8 x f x port_efficiency                 a port moves its width per cycle
//   channel     = channel_bandwidth x memory efficiency                     and a channel caps what it serves
//   decoder_gbps = min(hbm_ports x port, min(hbm_ports, channels) x channel)
//   memory_ns   = (streamed weight bytes + c x KV bytes per token) / decoder_gbps
//   pipeline_ns = layers x pipeline_cycles_per_layer / f
//   token_ns    = max(compute_ns, memory_ns) + pipeline_ns
// Up to one port per channel, each port reads its own channel (an HBM design); more ports
// than channels share them (a DDR board's few channels behind many AXI ports).
// Local prefill of n tokens shares one weight stream across the batch:
//   max(sum of the n tokens' compute, weights + KV read and written) + pipeline.
// A measured profile (seconds per token by context, prefill seconds by tokens)
// replaces the formula for the phases it covers; with clock projection it is
// scaled by measured clock / f, as a compute- or pipeline-bound design scales.
// It is a LatencyModel (timing/latency_model.hpp): a draft unit asks it as it asks a GPU's.
// Pure arithmetic: no SystemC, so a fit can evaluate it outside a simulation.
#include <cstdint>
#include <string>

#include "hbm.hpp"
#include "latency_model.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "param_rules.hpp"

namespace cosim {

struct FpgaAcceleratorParams {
    COSIM_FPGA_ACCELERATOR_PARAMS(COSIM_DECLARE_PARAM)

    // Throws ConfigError naming `where`.<field>.
    void validate(const std::string& where) const;
    double ns_per_cycle() const { return 1e3 / clock_mhz; }
};

// A measured decode profile and how it follows the clock.
struct FpgaProfile {
    LatencyProfile table;
    double measured_clock_mhz = 0.0;  // the clock the table was measured at
    bool project_clock = false;       // scale the table's times by measured clock / clock
};

// What sets a token's time: the MAC array, the ports' width x clock, the HBM
// pseudo-channels behind them, the pipeline cycles, or a measured profile.
enum class FpgaBound : int { macs = 0, ports = 1, hbm = 2, pipeline = 3, profile = 4 };
const char* fpga_bound_name(FpgaBound bound);

class FpgaDecoderTiming : public LatencyModel {
public:
    // Checks the parameters (ConfigError naming `where`).
    FpgaDecoderTiming(const std::string& where, const FpgaAcceleratorParams& params, const HbmParams& hbm,
                      const ModelSpec& model, FpgaProfile profile = FpgaProfile());

    // What a token at `context` and a prefill of `tokens` after `context` do: the MACs of the
    // array and the bytes moved to and from memory (the design model's energy: power_params.hpp).
    double token_macs(double context) const;
    double token_bytes(double context) const;
    double prefill_macs(int64_t tokens, double context) const;
    double prefill_bytes(int64_t tokens, double context) const;

    double compute_ns(double context) const { return compute0_ns_ + compute_per_ctx_ns_ * context; }
    double memory_ns(double context) const { return memory0_ns_ + memory_per_ctx_ns_ * context; }
    double pipeline_ns() const { return pipeline_ns_; }
    // The decode time of one token at `context` (the profile's, when it covers decode).
    double token_ns(double context) const;
    double prefill_ns(int64_t tokens, double context) const;
    FpgaBound bound(double context) const;

    // The latency formula's interface (timing/latency_model.hpp): one token at a time.
    const char* kind() const override { return "fpga_decoder"; }
    double decode_token_ns(int64_t context) const override { return token_ns(static_cast<double>(context)); }
    double prefill_ns(int64_t tokens, int64_t context) const override {
        return prefill_ns(tokens, static_cast<double>(context));
    }

    // One port's share of the decoder's bandwidth, and its width x clock x efficiency.
    double port_gbps() const { return decoder_gbps_ / static_cast<double>(params_.hbm_ports); }
    double port_clocked_gbps() const { return port_clocked_gbps_; }
    double decoder_gbps() const { return decoder_gbps_; }
    bool ports_bind() const { return ports_bind_; }  // the ports' width x clock, not the channels, cap bandwidth
    double streamed_weight_bytes() const { return model_.linear_macs_per_token() * params_.weight_bytes_per_param; }
    double stored_weight_bytes() const { return model_.params * params_.weight_bytes_per_param; }
    double kv_bytes_per_token() const { return model_.kv_bytes_per_token(params_.kv_bytes_per_element); }
    bool profiled(Phase phase) const override { return profile_.table.covers(phase); }
    const FpgaAcceleratorParams& params() const { return params_; }

private:
    double profile_ns(Phase phase, int64_t tokens, double context) const;

    FpgaAcceleratorParams params_;
    ModelSpec model_;
    FpgaProfile profile_;
    double profile_scale_ = 1.0;
    double port_clocked_gbps_ = 0.0, decoder_gbps_ = 0.0;
    bool ports_bind_ = false;
    double compute0_ns_ = 0.0, compute_per_ctx_ns_ = 0.0, memory0_ns_ = 0.0, memory_per_ctx_ns_ = 0.0,
           pipeline_ns_ = 0.0;
};

}  // namespace cosim
