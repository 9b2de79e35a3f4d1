#include "operator_profile.hpp"

#include <algorithm>
#include <limits>

#include "errors.hpp"

namespace cosim {

namespace {

// An attention table's time for the iteration: at its decoding sequences' mean context, or,
// with a skew fit and unequal contexts, blended toward the time at the longest.
double attention_ns(const OperatorTerm& t, const IterationShape& s) {
    std::vector<double> q = {s.prefill_chunk, s.prefill_kv, s.decodes, s.decode_kv};
    const double mean_ns = t.table.at(q);
    if (t.skew.empty() || s.decodes <= 1.0 || s.decode_kv_max <= s.decode_kv) return mean_ns;
    const double alpha =
        t.skew.alpha(s.prefill_chunk, s.prefill_kv, s.decodes, s.decode_kv_min, s.decode_kv, s.decode_kv_max);
    q[3] = s.decode_kv_max;
    const double blended = AttentionSkew::blend(mean_ns, t.table.at(q), alpha);
    if (blended >= mean_ns) return blended;
    // A negative alpha (a bucket measured faster than its mean): never faster than every
    // sequence at the shortest context, nor slower than the mean where the table puts the
    // shortest above it.
    q[3] = s.decode_kv_min;
    return std::max(blended, std::min(mean_ns, t.table.at(q)));
}

}  // namespace

OperatorProfile::OperatorProfile(std::string source, std::vector<OperatorTerm> terms, bool head_from_roofline)
    : source_(std::move(source)), terms_(std::move(terms)), head_from_roofline_(head_from_roofline) {
    if (terms_.empty()) throw ConfigError(source_ + ": an operator profile needs at least one operator");
    max_tokens_ = std::numeric_limits<double>::infinity();
    for (const OperatorTerm& t : terms_)
        if (t.input == ProfileInput::tokens) max_tokens_ = std::min(max_tokens_, t.table.max_first());
    if (!(max_tokens_ < std::numeric_limits<double>::infinity()))
        throw ConfigError(source_ + ": no operator measured by token count");
}

double OperatorProfile::iteration_ns(const IterationShape& s) const {
    double ns = 0.0;
    std::vector<double> q;
    for (const OperatorTerm& t : terms_) {
        switch (t.input) {
            case ProfileInput::tokens: q = {s.tokens}; break;
            case ProfileInput::sequences: q = {s.sequences}; break;
            case ProfileInput::attention: ns += t.count * attention_ns(t, s); continue;
            case ProfileInput::prefill_attention:
                if (s.prefill_chunk <= 0.0) continue;
                q = {s.prefill_chunk, s.prefill_kv};
                break;
            case ProfileInput::decode_attention:
                if (s.decodes <= 0.0) continue;
                q = {s.decodes, s.decode_kv};
                break;
            case ProfileInput::moe: q = {s.moe_tokens, s.experts}; break;
        }
        ns += t.count * t.table.at(q);
    }
    return ns;
}

}  // namespace cosim
