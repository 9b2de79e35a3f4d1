#include "operator_timing.hpp"

#include <algorithm>

namespace cosim {

namespace {
constexpr double kFlopsPerMac = 2.0;
constexpr double kFlopsPerNsPerTflops = 1e3;  // 1 TFLOP/s = 1e12 FLOP/s = 1e3 FLOP/ns
}  // namespace

OperatorTiming::OperatorTiming(std::shared_ptr<const OperatorProfile> operators,
                               std::shared_ptr<const RooflineTiming> roofline)
    : operators_(std::move(operators)), roofline_(std::move(roofline)) {}

double OperatorTiming::batch_ns(const std::vector<BatchWork>& work) const {
    IterationShape shape;
    double prefill_weighted_kv = 0.0;
    for (const BatchWork& w : work) {
        const auto tokens = static_cast<double>(w.tokens);
        const auto context = static_cast<double>(w.context);
        shape.tokens += tokens;
        shape.sequences += 1.0;
        if (w.decode || w.tokens == 1) {
            shape.decode_kv_min = shape.decodes > 0.0 ? std::min(shape.decode_kv_min, context) : context;
            shape.decode_kv_max = std::max(shape.decode_kv_max, context);
            shape.decodes += 1.0;
            shape.decode_kv += context;
        } else {
            shape.prefill_chunk += tokens;
            prefill_weighted_kv += tokens * context;
        }
    }
    if (shape.decodes > 0.0) shape.decode_kv /= shape.decodes;
    // A MoE layer on this GPU: the expert-token pairs of every engine sharing its experts that
    // it serves, as the tokens of one GPU holding them all, and its share of the experts
    // those engines' tokens touch (parallel_layout.hpp).
    const ParallelLayout& layout = roofline_->layout();
    const double group_tokens = layout.expert_tokens(shape.tokens);
    shape.moe_tokens = group_tokens * layout.expert_compute_share() / static_cast<double>(layout.engines());
    shape.experts = roofline_->model().expected_experts(group_tokens) *
                    (layout.engines() > 1 ? layout.expert_weight_share() : 1.0);
    if (shape.prefill_chunk > 0.0) shape.prefill_kv = prefill_weighted_kv / shape.prefill_chunk;
    double ns = operators_->iteration_ns(shape) + layout.collectives_ns(shape.tokens);
    if (operators_->head_from_roofline()) {
        // The output head the profile did not measure: its weights read once, a row of
        // logits per sequence.
        const ModelSpec& model = roofline_->model();
        const GpuParams& params = roofline_->params();
        const double head_macs = model.lm_head ? static_cast<double>(model.hidden) * static_cast<double>(model.vocab)
                                               : model.score_head_params;
        const double compute = kFlopsPerMac * head_macs * shape.sequences /
                               (params.peak_tflops * params.compute_efficiency * kFlopsPerNsPerTflops);
        ns += std::max(compute, roofline_->stream_ns(head_macs * params.weight_bytes_per_param));
    }
    return ns;
}

double OperatorTiming::decode_token_ns(int64_t context) const { return batch_ns({BatchWork{1, context, true}}); }

double OperatorTiming::prefill_ns(int64_t tokens, int64_t context) const {
    const auto chunk = static_cast<int64_t>(operators_->max_tokens());
    double ns = 0.0;
    for (int64_t done = 0; done < tokens; done += chunk)
        ns += batch_ns({BatchWork{std::min(chunk, tokens - done), context + done, false}});
    return ns;
}

}  // namespace cosim
