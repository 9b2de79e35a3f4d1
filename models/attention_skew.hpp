#pragma once
// Attention over decoding sequences of unequal context, as LLMServingSim's profiler measures
// it (docs/hardware.md, "Operator profiles"): an attention table is measured with every
// decoding sequence at one context, and a batch is looked up at its mean context. A varlen
// kernel over unequal contexts costs more (tile padding, SMs idle behind the longest
// sequence), which the bundle's skew fit gives as a blend toward the time at the longest:
//     t = t_mean + alpha (t_max - t_mean),
// alpha fitted per bucket of (prefill chunk as measured, decoding sequences, skew rate, the
// longest context, the prefill's context), skew rate = (floor(mean) - min) / (max - min). A
// batch whose bucket the fit has no row for takes the fit's pooled alpha. Pure arithmetic.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cosim {

class AttentionSkew {
public:
    // The axes a bucket is read on, LLMServingSim's bins: a value falls in bucket i when it
    // is at most edges[i + 1] (the first such), else in the last.
    enum Axis : int { n_axis = 0, rate_axis = 1, longest_axis = 2, prefill_axis = 3, axes = 4 };
    using Key = std::array<int64_t, 5>;  // the prefill chunk, then a bucket on each axis

    AttentionSkew() = default;
    AttentionSkew(std::string source, std::array<std::vector<double>, axes> edges, std::map<Key, double> alpha,
                  double alpha_default);

    bool empty() const { return source_.empty(); }
    // The blend's alpha for a batch: `chunk` prefill tokens at `prefill_kv`, `decodes`
    // decoding sequences whose contexts are `kv_min`, `kv_mean` and `kv_max`.
    double alpha(double chunk, double prefill_kv, double decodes, double kv_min, double kv_mean,
                 double kv_max) const;
    // The blended time from the times at the mean and the longest context, ns: t_mean where
    // the longest is no slower (an interpolation artefact, not skew). A negative alpha (a
    // bucket whose batches were measured faster than their mean) blends below t_mean; the
    // caller keeps it above the time at the shortest context.
    static double blend(double t_mean, double t_max, double alpha);

private:
    int64_t bucket(Axis axis, double value) const;

    std::string source_;
    std::array<std::vector<double>, axes> edges_;
    std::map<Key, double> alpha_;
    double alpha_default_ = 0.0;
};

}  // namespace cosim
