#include "roofline_timing.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kFlopsPerMac = 2.0;
constexpr double kFlopsPerNsPerTflops = 1e3;  // 1 TFLOP/s = 1e12 FLOP/s = 1e3 FLOP/ns
}  // namespace

void GpuParams::validate(const std::string& where) const {
    COSIM_GPU_PARAMS(COSIM_CHECK_PARAM)
}

double GpuParams::tflops_for(const std::string& activation_precision) const {
    const double rate = activation_precision == "fp8"    ? fp8_tflops
                        : activation_precision == "int8" ? int8_tflops
                        : activation_precision == "fp4"  ? fp4_tflops
                                                         : 0.0;
    return rate > 0.0 ? rate : peak_tflops;
}

void check_precision(const std::string& where, const GpuParams& params, const ModelSpec& model) {
    const std::string& type = model.activation_precision;
    if (type == "bf16") return;
    // An 8-bit type takes weights of a byte (block scales add a little); a 4-bit one, 4.25 bits.
    const double widest = type == "fp4" ? 0.6 : 1.01;
    const double dense = model.weight_bytes(params.weight_bytes_per_param);
    const double experts = model.experts > 0 ? model.expert_bytes(params.weight_bytes_per_param) : 0.0;
    if (dense > widest || experts > widest) {
        std::ostringstream text;
        text << where << ": model.activation_precision " << type << " multiplies weights of at most "
             << (type == "fp4" ? "4" : "8") << " bits, but they are stored at " << std::max(dense, experts)
             << " bytes each (model or device weight_bytes_per_param); store them no wider, or use bf16";
        throw ConfigError(text.str());
    }
}

RooflineTiming::RooflineTiming(const GpuParams& params, const ModelSpec& model, const ParallelLayout& layout)
    : params_(params), model_(model), layout_(layout) {
    linear_cost_ = params_.peak_tflops / params_.tflops_for(model_.activation_precision);
    decode0_ns_ = stream_ns(streamed_weight_bytes());
    decode_per_ctx_ns_ = stream_ns(kv_bytes_per_token());
}

double RooflineTiming::roofline(double compute_ns, double memory_ns) const {
    const double p = params_.roofline_exponent;
    if (p <= 0.0) return std::max(compute_ns, memory_ns);
    // Scaled by the larger term so that the powers never overflow.
    const double top = std::max(compute_ns, memory_ns);
    if (top <= 0.0) return 0.0;
    return top * std::pow(std::pow(compute_ns / top, p) + std::pow(memory_ns / top, p), 1.0 / p);
}

double RooflineTiming::compute_ns(double macs) const {
    check_argument_non_negative("GpuTiming::compute_ns", "macs", macs);
    return kFlopsPerMac * macs * layout_.share() /
           (params_.peak_tflops * params_.compute_efficiency * kFlopsPerNsPerTflops);
}

double RooflineTiming::sequence_macs(double n, double c) const {
    const double span = n * c + n * (n - 1.0) / 2.0;
    const double head = model_.output_head_macs();
    return n * (model_.linear_macs_per_token() - head) * linear_cost_ + head * linear_cost_ +
           model_.attention_macs_per_token(1.0) * span + moe_macs(n) * linear_cost_;
}

double RooflineTiming::weight_bytes_for(double tokens) const {
    const double wb = model_.weight_bytes(params_.weight_bytes_per_param);
    if (model_.experts == 0) return model_.dense_streamed_params() * wb * layout_.share();
    // The experts the tokens of every engine sharing them touch, of which this GPU holds its share.
    return model_.dense_streamed_params() * wb * layout_.share() +
           model_.expert_streamed_params(layout_.expert_tokens(tokens)) *
               model_.expert_bytes(params_.weight_bytes_per_param) * layout_.expert_weight_share();
}

double RooflineTiming::stored_weight_bytes() const {
    const double wb = params_.weight_bytes_per_param;
    if (model_.experts == 0) return model_.stored_weight_bytes(wb) * layout_.share();
    const double routed = model_.expert_params();
    return (model_.params - routed) * model_.weight_bytes(wb) * layout_.share() +
           routed * model_.expert_bytes(wb) * layout_.expert_weight_share();
}

double RooflineTiming::moe_macs(double tokens) const {
    // compute_ns applies the tensor-parallel share to every MAC; the expert MACs of a GPU
    // are its expert share instead (parallel_layout.hpp): the difference, in the same units.
    if (model_.experts == 0 || layout_.expert_compute_share() == layout_.share()) return 0.0;
    const double expert = tokens * static_cast<double>(model_.experts_per_token) *
                          static_cast<double>(model_.moe_layers()) * model_.expert_macs();
    return expert * (layout_.expert_compute_share() / layout_.share() - 1.0);
}

double RooflineTiming::overhead_ns() const {
    return params_.forward_overhead_ns + static_cast<double>(model_.layers) * params_.layer_overhead_ns;
}

double RooflineTiming::decode_token_ns(int64_t context) const {
    check_argument_non_negative("GpuTiming::decode_token_ns", "context", static_cast<double>(context));
    return overhead_ns() + roofline(decode_compute_ns(context), decode_memory_ns(context)) +
           layout_.collectives_ns(1.0);
}

double RooflineTiming::decode_compute_ns(int64_t context) const {
    return compute_ns(model_.linear_macs_per_token() * linear_cost_ +
                      model_.attention_macs_per_token(static_cast<double>(context)) + moe_macs(1.0) * linear_cost_);
}

double RooflineTiming::decode_memory_ns(int64_t context) const {
    return decode0_ns_ + decode_per_ctx_ns_ * static_cast<double>(context);
}

double RooflineTiming::prefill_compute_ns(int64_t tokens, int64_t context) const {
    return compute_ns(sequence_macs(static_cast<double>(tokens), static_cast<double>(context)));
}

double RooflineTiming::prefill_memory_ns(int64_t tokens, int64_t context) const {
    const double kv = static_cast<double>(context + tokens) * kv_bytes_per_token();
    return stream_ns(weight_bytes_for(static_cast<double>(tokens)) + kv);
}

double RooflineTiming::prefill_ns(int64_t tokens, int64_t context) const {
    check_argument_positive("GpuTiming::prefill_ns", "tokens", static_cast<double>(tokens));
    check_argument_non_negative("GpuTiming::prefill_ns", "context", static_cast<double>(context));
    return overhead_ns() + roofline(prefill_compute_ns(tokens, context), prefill_memory_ns(tokens, context)) +
           layout_.collectives_ns(static_cast<double>(tokens));
}

double RooflineTiming::batch_ns(const std::vector<BatchWork>& work) const {
    if (work.size() == 1 && !work.front().verify) return lone_ns(work.front());
    return roofline_ns(work);
}

RooflineTiming::BatchSums RooflineTiming::sums(const std::vector<BatchWork>& work) const {
    BatchSums sum;
    for (const BatchWork& w : work) {
        const double n = static_cast<double>(w.tokens);
        const double c = static_cast<double>(w.context);
        sum.macs += sequence_macs(n, c);
        // A verification samples at every position: the output head n times, not once.
        if (w.verify) sum.macs += (n - 1.0) * model_.output_head_macs() * linear_cost_;
        sum.kv_tokens += w.decode ? c : c + n;
        sum.tokens += n;
    }
    return sum;
}

double RooflineTiming::roofline_ns(const std::vector<BatchWork>& work) const {
    const BatchSums sum = sums(work);
    const double memory = stream_ns(weight_bytes_for(sum.tokens) + sum.kv_tokens * kv_bytes_per_token());
    return overhead_ns() + roofline(compute_ns(sum.macs), memory) + layout_.collectives_ns(sum.tokens);
}

StepWork RooflineTiming::work(const std::vector<BatchWork>& work) const {
    const BatchSums sum = sums(work);
    StepWork out;
    out.flops = kFlopsPerMac * sum.macs * layout_.share();
    out.bytes = weight_bytes_for(sum.tokens) + sum.kv_tokens * kv_bytes_per_token();
    return out;
}

}  // namespace cosim
