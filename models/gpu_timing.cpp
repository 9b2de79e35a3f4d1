#include "gpu_timing.hpp"

#include <algorithm>

#include "errors.hpp"
#include "measured_timing.hpp"
#include "operator_timing.hpp"
#include "param_rules.hpp"

namespace cosim {

namespace {

std::shared_ptr<const RooflineTiming> checked_roofline(const std::string& where, const GpuParams& params,
                                                       const ModelSpec& model, const ParallelLayout& layout) {
    model.validate();
    params.validate(where);
    model.kv_reserve(where, params.kv_reserve_tokens);
    check_precision(where, params, model);
    return std::make_shared<const RooflineTiming>(params, model, layout);
}

}  // namespace

std::shared_ptr<const LatencyModel> GpuTiming::latency_for(const LatencyProfile& profile,
                                                           std::shared_ptr<const RooflineTiming> roofline) {
    if (profile.operators() != nullptr) return std::make_shared<const OperatorTiming>(profile.shared_operators(), roofline);
    if (profile.covers(Phase::decode) || profile.covers(Phase::prefill))
        return std::make_shared<const MeasuredTiming>(profile, roofline);
    return roofline;
}

GpuTiming::GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
                     LatencyProfile profile, const ParallelLayout& layout)
    : roofline_(checked_roofline(where, params, model, layout)), latency_(latency_for(profile, roofline_)) {
    // A latency table times one GPU alone; an operator profile is one GPU's operators at the
    // group's degree, its collectives added (operator_timing.hpp).
    if (layout.gpus() > 1 && dynamic_cast<const MeasuredTiming*>(latency_.get()) != nullptr)
        throw ConfigError(where + ": a measured latency table times one GPU; a tensor-parallel group of " +
                          std::to_string(layout.gpus()) + " is timed by the roofline or an operator profile");
}

GpuTiming::GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
                     std::shared_ptr<const LatencyModel> latency, const ParallelLayout& layout)
    : roofline_(checked_roofline(where, params, model, layout)), latency_(std::move(latency)) {
    if (latency_ == nullptr) throw ConfigError(where + ": no latency model");
}

double GpuTiming::step_ns(const std::vector<BatchWork>& work, bool overlap_host) const {
    const double ns = batch_ns(work);
    if (overlap_host && !profiled(Phase::decode) && !profiled(Phase::prefill))
        return std::max(overhead_ns(), ns - overhead_ns());
    return ns;
}

double GpuTiming::busy_w(const PowerParams& power, PowerState state, const StepWork& work, double ns) const {
    if (!power.load_model()) return power.watts(state);
    if (ns <= 0.0) return power.load_w(0.0, 0.0);
    // Utilisation against the datasheet peaks: FLOP/ns over TFLOP/s x 1e3, bytes/ns over GB/s.
    const double compute = work.flops / (params().peak_tflops * 1e3 * ns);
    const double memory = work.bytes / (params().memory_bandwidth_gbps * ns);
    return power.load_w(compute, memory);
}

double GpuTiming::sampler_ns(const std::vector<BatchWork>& work) const {
    const double per_row = sampler_row_ns();
    if (per_row <= 0.0) return 0.0;
    double rows = 0.0;
    for (const BatchWork& w : work)
        if (w.verify) rows += static_cast<double>(w.tokens);
        else if (w.decode) rows += 1.0;
    return rows * per_row;
}

double GpuTiming::decode_token_ns(int64_t context) const {
    check_argument_non_negative("GpuTiming::decode_token_ns", "context", static_cast<double>(context));
    return latency_->decode_token_ns(context) + sampler_row_ns();
}

double GpuTiming::prefill_ns(int64_t tokens, int64_t context) const {
    check_argument_positive("GpuTiming::prefill_ns", "tokens", static_cast<double>(tokens));
    check_argument_non_negative("GpuTiming::prefill_ns", "context", static_cast<double>(context));
    return latency_->prefill_ns(tokens, context);
}

}  // namespace cosim
