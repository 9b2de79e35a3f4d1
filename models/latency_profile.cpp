#include "latency_profile.hpp"

#include <cmath>
#include <iterator>
#include <sstream>

#include "errors.hpp"

namespace cosim {

LatencyProfile::LatencyProfile(OperatorProfile operators)
    : source_(operators.source()), operators_(std::make_shared<const OperatorProfile>(std::move(operators))) {}

namespace {

const char* phase_name(Phase phase) { return phase == Phase::prefill ? "prefill" : "decode"; }

// Piecewise-linear through the map's points, extending the end segments.
template <typename Map, typename ValueOf>
double interpolate(const Map& points, int64_t x, ValueOf value_of) {
    if (points.size() == 1) return value_of(points.begin());
    auto hi = points.lower_bound(x);
    if (hi != points.end() && hi->first == x) return value_of(hi);
    if (hi == points.begin()) ++hi;
    if (hi == points.end()) --hi;
    auto lo = std::prev(hi);
    const double x0 = static_cast<double>(lo->first);
    const double x1 = static_cast<double>(hi->first);
    const double y0 = value_of(lo);
    const double y1 = value_of(hi);
    return y0 + (y1 - y0) * (static_cast<double>(x) - x0) / (x1 - x0);
}

}  // namespace

LatencyProfile::LatencyProfile(std::string source, const std::vector<ProfilePoint>& points)
    : source_(std::move(source)) {
    for (const ProfilePoint& p : points) {
        std::ostringstream where;
        where << source_ << ": " << phase_name(p.phase) << " point (tokens=" << p.tokens << ", context=" << p.context;
        if (p.batch != 1) where << ", batch=" << p.batch;
        where << ")";
        require_positive(where.str() + " seconds", p.seconds);
        require_positive(where.str() + " tokens", static_cast<double>(p.tokens));
        require_non_negative(where.str() + " context", static_cast<double>(p.context));
        require_positive(where.str() + " batch", static_cast<double>(p.batch));
        if (p.phase == Phase::decode && p.tokens != 1)
            throw ConfigError(where.str() + ": decode rows give seconds per token, so tokens must be 1");
        Curve& curve = table_[static_cast<int>(p.phase)][p.batch][p.context];
        if (!curve.emplace(p.tokens, p.seconds).second) throw ConfigError(where.str() + ": measured twice");
    }
    for (int phase = 0; phase < 2; ++phase)
        if (!table_[phase].empty() && table_[phase].count(1) == 0)
            throw ConfigError(source_ + ": " + phase_name(static_cast<Phase>(phase)) +
                              " rows need batch 1 too (the time of a lone operation)");
}

double LatencyProfile::seconds(Phase phase, int64_t tokens, int64_t context, int64_t batch) const {
    const auto& batches = table_[static_cast<int>(phase)];
    if (batches.empty())
        throw SimulationError(source_ + ": no " + std::string(phase_name(phase)) + " rows in the profile");
    const double result = interpolate(batches, batch, [tokens, context](auto plane) {
        return interpolate(plane->second, context, [tokens](auto it) {
            return interpolate(it->second, tokens, [](auto point) { return point->second; });
        });
    });
    if (!(result > 0.0) || !std::isfinite(result)) {
        std::ostringstream out;
        out << source_ << ": the profile extrapolates to " << result << " s for " << phase_name(phase)
            << " of " << tokens << " tokens at context " << context << (batch != 1 ? " in a batch of " : "")
            << (batch != 1 ? std::to_string(batch) : "") << "; add measured points that cover it";
        throw SimulationError(out.str());
    }
    return result;
}

}  // namespace cosim
