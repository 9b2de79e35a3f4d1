#include "measured_timing.hpp"

#include <cmath>

namespace cosim {

namespace {
constexpr double kNsPerSecond = 1e9;
}  // namespace

MeasuredTiming::MeasuredTiming(LatencyProfile profile, std::shared_ptr<const RooflineTiming> roofline)
    : profile_(std::move(profile)), roofline_(std::move(roofline)) {}

double MeasuredTiming::decode_token_ns(int64_t context) const {
    if (profile_.covers(Phase::decode)) return profile_.seconds(Phase::decode, 1, context) * kNsPerSecond;
    return roofline_->decode_token_ns(context);
}

double MeasuredTiming::prefill_ns(int64_t tokens, int64_t context) const {
    if (profile_.covers(Phase::prefill)) return profile_.seconds(Phase::prefill, tokens, context) * kNsPerSecond;
    return roofline_->prefill_ns(tokens, context);
}

double MeasuredTiming::batch_ns(const std::vector<BatchWork>& work) const {
    if (work.size() == 1) return lone_ns(work.front());
    const double roofline = roofline_->roofline_ns(work);
    if (!profile_.covers_batches(Phase::decode) && !profile_.covers_batches(Phase::prefill)) return roofline;
    std::vector<BatchWork> parts[2];  // by phase
    for (const BatchWork& w : work) parts[static_cast<int>(w.decode ? Phase::decode : Phase::prefill)].push_back(w);
    double measured = 0.0;
    double modelled = 0.0;
    for (Phase phase : {Phase::prefill, Phase::decode}) {
        const auto& part = parts[static_cast<int>(phase)];
        if (part.empty()) continue;
        const double r = roofline_->roofline_ns(part);
        modelled += r;
        measured += profile_.covers_batches(phase) ? measured_ns(phase, part) : r;
    }
    return roofline * measured / modelled;
}

double MeasuredTiming::measured_ns(Phase phase, const std::vector<BatchWork>& part) const {
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

}  // namespace cosim
