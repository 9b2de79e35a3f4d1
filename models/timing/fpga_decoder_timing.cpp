#include "fpga_decoder_timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kBitsPerByte = 8.0;
constexpr double kMhzToGhz = 1e-3;  // bytes per cycle x MHz x 1e-3 = GB/s
}  // namespace

const char* fpga_bound_name(FpgaBound bound) {
    switch (bound) {
        case FpgaBound::macs: return "macs";
        case FpgaBound::ports: return "ports";
        case FpgaBound::hbm: return "hbm";
        case FpgaBound::pipeline: return "pipeline";
        case FpgaBound::profile: return "profile";
    }
    return "?";
}

void FpgaAcceleratorParams::validate(const std::string& where) const {
    COSIM_FPGA_ACCELERATOR_PARAMS(COSIM_CHECK_PARAM)
    // rtl-faulty, the broken build of the block, is there for the run-time checker's own
    // test; configurations offer tlm and rtl.
    if (kvmu != "tlm" && kvmu != "rtl" && kvmu != "rtl-faulty")
        throw ConfigError(where + ".kvmu: one of tlm, rtl, got '" + kvmu + "'");
}

FpgaDecoderTiming::FpgaDecoderTiming(const std::string& where, const FpgaAcceleratorParams& params,
                                     const HbmParams& hbm, const ModelSpec& model, FpgaProfile profile)
    : params_(params), model_(model), profile_(std::move(profile)) {
    model_.validate();
    hbm.validate(where + ".hbm");
    params_.validate(where);
    if (profile_.project_clock) {
        require_positive(where + ".profile.measured_clock_mhz", profile_.measured_clock_mhz);
        profile_scale_ = profile_.measured_clock_mhz / params_.clock_mhz;
    }
    const double ns_per_cycle = params_.ns_per_cycle();
    port_clocked_gbps_ = params_.port_width_bits / kBitsPerByte * params_.clock_mhz * kMhzToGhz *
                         params_.port_efficiency;
    decoder_gbps_ = hbm.ports_gbps(params_.hbm_ports, port_clocked_gbps_);
    // The ports bind where their width x clock, not the channels, sets the rate.
    ports_bind_ = decoder_gbps_ < hbm.ports_gbps(params_.hbm_ports, std::numeric_limits<double>::infinity());
    compute0_ns_ = model_.linear_macs_per_token() / params_.macs_per_cycle * ns_per_cycle;
    compute_per_ctx_ns_ = model_.attention_macs_per_token(1.0) / params_.macs_per_cycle * ns_per_cycle;
    memory0_ns_ = streamed_weight_bytes() / decoder_gbps();
    memory_per_ctx_ns_ = kv_bytes_per_token() / decoder_gbps();
    pipeline_ns_ = static_cast<double>(model_.layers) * params_.pipeline_cycles_per_layer * ns_per_cycle;
}

double FpgaDecoderTiming::profile_ns(Phase phase, int64_t tokens, double context) const {
    return profile_.table.seconds(phase, tokens, static_cast<int64_t>(std::llround(context))) * 1e9 *
           profile_scale_;
}

double FpgaDecoderTiming::token_ns(double context) const {
    check_argument_non_negative("FpgaDecoderTiming::token_ns", "context", context);
    if (profiled(Phase::decode)) return profile_ns(Phase::decode, 1, context);
    return std::max(compute_ns(context), memory_ns(context)) + pipeline_ns_;
}

double FpgaDecoderTiming::prefill_ns(int64_t tokens, double context) const {
    check_argument_positive("FpgaDecoderTiming::prefill_ns", "tokens", static_cast<double>(tokens));
    check_argument_non_negative("FpgaDecoderTiming::prefill_ns", "context", context);
    if (profiled(Phase::prefill)) return profile_ns(Phase::prefill, tokens, context);
    const double compute = prefill_macs(tokens, context) / params_.macs_per_cycle * params_.ns_per_cycle();
    const double memory = prefill_bytes(tokens, context) / decoder_gbps();
    return std::max(compute, memory) + pipeline_ns_;
}

double FpgaDecoderTiming::token_macs(double context) const {
    return model_.linear_macs_per_token() + model_.attention_macs_per_token(1.0) * context;
}

double FpgaDecoderTiming::token_bytes(double context) const {
    return streamed_weight_bytes() + context * kv_bytes_per_token();
}

double FpgaDecoderTiming::prefill_macs(int64_t tokens, double context) const {
    const double n = static_cast<double>(tokens);
    // Sum over j = 0..n-1 of the attention span (context + j).
    const double span = n * context + n * (n - 1.0) / 2.0;
    return n * model_.linear_macs_per_token() + model_.attention_macs_per_token(1.0) * span;
}

double FpgaDecoderTiming::prefill_bytes(int64_t tokens, double context) const {
    // One weight stream for the batch, the context's KV read and the new tokens' written.
    return streamed_weight_bytes() + (context + static_cast<double>(tokens)) * kv_bytes_per_token();
}

FpgaBound FpgaDecoderTiming::bound(double context) const {
    if (profiled(Phase::decode)) return FpgaBound::profile;
    const double compute = compute_ns(context);
    const double memory = memory_ns(context);
    if (pipeline_ns_ > std::max(compute, memory)) return FpgaBound::pipeline;
    if (compute >= memory) return FpgaBound::macs;
    return ports_bind_ ? FpgaBound::ports : FpgaBound::hbm;
}

}  // namespace cosim
