#include "gpu_timing.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kFlopsPerMac = 2.0;
constexpr double kFlopsPerNsPerTflops = 1e3;  // 1 TFLOP/s = 1e12 FLOP/s = 1e3 FLOP/ns
constexpr double kNsPerSecond = 1e9;
}  // namespace

void GpuParams::validate(const std::string& where) const {
    COSIM_GPU_PARAMS(COSIM_CHECK_PARAM)
}

GpuTiming::GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
                     LatencyProfile profile)
    : params_(params), model_(model), profile_(std::move(profile)) {
    model_.validate();
    params_.validate(where);
    model_.kv_reserve(where, params_.kv_reserve_tokens);
    decode0_ns_ = stream_ns(streamed_weight_bytes());
    decode_per_ctx_ns_ = stream_ns(kv_bytes_per_token());
}

double GpuTiming::roofline(double compute_ns, double memory_ns) const {
    const double p = params_.roofline_exponent;
    if (p <= 0.0) return std::max(compute_ns, memory_ns);
    // Scaled by the larger term so that the powers never overflow.
    const double top = std::max(compute_ns, memory_ns);
    if (top <= 0.0) return 0.0;
    return top * std::pow(std::pow(compute_ns / top, p) + std::pow(memory_ns / top, p), 1.0 / p);
}

double GpuTiming::compute_ns(double macs) const {
    check_argument_non_negative("GpuTiming::compute_ns", "macs", macs);
    return kFlopsPerMac * macs / (params_.peak_tflops * params_.compute_efficiency * kFlopsPerNsPerTflops);
}

double GpuTiming::sequence_macs(double n, double c) const {
    const double span = n * c + n * (n - 1.0) / 2.0;
    const double head = model_.output_head_macs();
    return n * (model_.linear_macs_per_token() - head) + head + model_.attention_macs_per_token(1.0) * span;
}

double GpuTiming::overhead_ns() const {
    return params_.forward_overhead_ns + static_cast<double>(model_.layers) * params_.layer_overhead_ns;
}

double GpuTiming::operators_ns(const std::vector<BatchWork>& work) const {
    const OperatorProfile& ops = *profile_.operators();
    IterationShape shape;
    double prefill_weighted_kv = 0.0;
    for (const BatchWork& w : work) {
        const auto tokens = static_cast<double>(w.tokens);
        const auto context = static_cast<double>(w.context);
        shape.tokens += tokens;
        shape.sequences += 1.0;
        if (w.decode || w.tokens == 1) {
            shape.decodes += 1.0;
            shape.decode_kv += context;
        } else {
            shape.prefill_chunk += tokens;
            prefill_weighted_kv += tokens * context;
        }
    }
    if (shape.decodes > 0.0) shape.decode_kv /= shape.decodes;
    if (shape.prefill_chunk > 0.0) shape.prefill_kv = prefill_weighted_kv / shape.prefill_chunk;
    double ns = ops.iteration_ns(shape);
    if (ops.head_from_roofline()) {
        // The output head the profile did not measure: its weights read once, a row of
        // logits per sequence.
        const double head_macs = model_.lm_head
                                     ? static_cast<double>(model_.hidden) * static_cast<double>(model_.vocab)
                                     : model_.score_head_params;
        const double compute = kFlopsPerMac * head_macs * shape.sequences /
                               (params_.peak_tflops * params_.compute_efficiency * kFlopsPerNsPerTflops);
        ns += std::max(compute, stream_ns(head_macs * params_.weight_bytes_per_param));
    }
    return ns;
}

double GpuTiming::decode_token_ns(int64_t context) const {
    check_argument_non_negative("GpuTiming::decode_token_ns", "context", static_cast<double>(context));
    if (profile_.operators() != nullptr) return operators_ns({BatchWork{1, context, true}});
    if (profile_.covers(Phase::decode)) return profile_.seconds(Phase::decode, 1, context) * kNsPerSecond;
    return overhead_ns() + roofline(decode_compute_ns(context), decode_memory_ns(context));
}

double GpuTiming::decode_compute_ns(int64_t context) const {
    return compute_ns(model_.linear_macs_per_token() + model_.attention_macs_per_token(static_cast<double>(context)));
}

double GpuTiming::decode_memory_ns(int64_t context) const {
    return decode0_ns_ + decode_per_ctx_ns_ * static_cast<double>(context);
}

double GpuTiming::prefill_compute_ns(int64_t tokens, int64_t context) const {
    return compute_ns(sequence_macs(static_cast<double>(tokens), static_cast<double>(context)));
}

double GpuTiming::prefill_memory_ns(int64_t tokens, int64_t context) const {
    const double kv = static_cast<double>(context + tokens) * kv_bytes_per_token();
    return stream_ns(streamed_weight_bytes() + kv);
}

double GpuTiming::prefill_ns(int64_t tokens, int64_t context) const {
    check_argument_positive("GpuTiming::prefill_ns", "tokens", static_cast<double>(tokens));
    check_argument_non_negative("GpuTiming::prefill_ns", "context", static_cast<double>(context));
    if (profile_.operators() != nullptr) {
        // Longer than the operators were measured for: chunks of the largest measured size,
        // as chunked prefill would run it.
        const auto chunk = static_cast<int64_t>(profile_.operators()->max_tokens());
        double ns = 0.0;
        for (int64_t done = 0; done < tokens; done += chunk)
            ns += operators_ns({BatchWork{std::min(chunk, tokens - done), context + done, false}});
        return ns;
    }
    if (profile_.covers(Phase::prefill)) return profile_.seconds(Phase::prefill, tokens, context) * kNsPerSecond;
    return overhead_ns() + roofline(prefill_compute_ns(tokens, context), prefill_memory_ns(tokens, context));
}

double GpuTiming::batch_ns(const std::vector<BatchWork>& work) const {
    if (profile_.operators() != nullptr) return operators_ns(work);
    if (work.size() == 1) {
        const BatchWork& w = work.front();
        return w.decode ? decode_token_ns(w.context) : prefill_ns(w.tokens, w.context);
    }
    const double roofline = roofline_ns(work);
    if (!profile_.covers_batches(Phase::decode) && !profile_.covers_batches(Phase::prefill)) return roofline;
    std::vector<BatchWork> parts[2];  // by phase
    for (const BatchWork& w : work) parts[static_cast<int>(w.decode ? Phase::decode : Phase::prefill)].push_back(w);
    double measured = 0.0;
    double modelled = 0.0;
    for (Phase phase : {Phase::prefill, Phase::decode}) {
        const auto& part = parts[static_cast<int>(phase)];
        if (part.empty()) continue;
        const double r = roofline_ns(part);
        modelled += r;
        measured += profile_.covers_batches(phase) ? measured_ns(phase, part) : r;
    }
    return roofline * measured / modelled;
}

double GpuTiming::measured_ns(Phase phase, const std::vector<BatchWork>& part) const {
    double tokens = 0.0;
    double context = 0.0;
    for (const BatchWork& w : part) {
        tokens += static_cast<double>(w.tokens);
        context += static_cast<double>(w.context);
    }
    const auto n = static_cast<double>(part.size());
    return profile_.seconds(phase, std::llround(tokens / n), std::llround(context / n),
                            static_cast<int64_t>(part.size())) * kNsPerSecond;
}

double GpuTiming::roofline_ns(const std::vector<BatchWork>& work) const {
    double macs = 0.0;
    double kv_tokens = 0.0;
    for (const BatchWork& w : work) {
        const double n = static_cast<double>(w.tokens);
        const double c = static_cast<double>(w.context);
        macs += sequence_macs(n, c);
        kv_tokens += w.decode ? c : c + n;
    }
    const double memory = stream_ns(streamed_weight_bytes() + kv_tokens * kv_bytes_per_token());
    return overhead_ns() + roofline(compute_ns(macs), memory);
}

}  // namespace cosim
