#include "operator_profile.hpp"

#include <algorithm>
#include <limits>

#include "errors.hpp"

namespace cosim {

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
            case ProfileInput::attention: q = {s.prefill_chunk, s.prefill_kv, s.decodes, s.decode_kv}; break;
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
