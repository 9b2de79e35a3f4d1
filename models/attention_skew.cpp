#include "attention_skew.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace cosim {

AttentionSkew::AttentionSkew(std::string source, std::array<std::vector<double>, axes> edges,
                             std::map<Key, double> alpha, double alpha_default)
    : source_(std::move(source)), edges_(std::move(edges)), alpha_(std::move(alpha)), alpha_default_(alpha_default) {
    if (source_.empty()) throw ConfigError("an attention skew fit needs its source");
    for (const auto& e : edges_)
        if (e.size() < 2 || !std::is_sorted(e.begin(), e.end()))
            throw ConfigError(source_ + ": a skew bucket axis needs two or more rising edges");
    for (const auto& [key, a] : alpha_) {
        for (int axis = 0; axis < axes; ++axis)
            if (key[axis + 1] < 0 || key[axis + 1] + 1 >= static_cast<int64_t>(edges_[axis].size()))
                throw ConfigError(source_ + ": a skew bucket past its axis");
        if (!std::isfinite(a)) throw ConfigError(source_ + ": a skew alpha must be finite");
    }
    if (!std::isfinite(alpha_default_)) throw ConfigError(source_ + ": the pooled skew alpha must be finite");
}

int64_t AttentionSkew::bucket(Axis axis, double value) const {
    const std::vector<double>& e = edges_[axis];
    const auto buckets = static_cast<int64_t>(e.size()) - 1;
    for (int64_t i = 0; i < buckets; ++i)
        if (value <= e[static_cast<size_t>(i) + 1]) return i;
    return buckets - 1;
}

double AttentionSkew::alpha(double chunk, double prefill_kv, double decodes, double kv_min, double kv_mean,
                            double kv_max) const {
    // The mean as LLMServingSim takes it for the rate: the contexts' sum over their count,
    // rounded down.
    const double gap = kv_max - kv_min;
    const double rate = gap > 0.0 ? std::clamp((std::floor(kv_mean) - kv_min) / gap, 0.0, 1.0) : 0.5;
    const Key key{static_cast<int64_t>(std::llround(chunk)), bucket(n_axis, decodes), bucket(rate_axis, rate),
                  bucket(longest_axis, kv_max), bucket(prefill_axis, prefill_kv)};
    const auto it = alpha_.find(key);
    return it == alpha_.end() ? alpha_default_ : it->second;
}

double AttentionSkew::blend(double t_mean, double t_max, double alpha) {
    if (t_max <= t_mean) return t_mean;
    return t_mean + alpha * (t_max - t_mean);
}

}  // namespace cosim
