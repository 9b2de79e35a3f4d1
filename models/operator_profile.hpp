#pragma once
// A GPU's forward pass timed from measured operator times (docs/hardware.md, "Operator
// profiles"), as LLMServingSim and Vidur time an iteration: the sum of
//  - every per-layer operator (projections, norms, rotary embedding, activation, ...) at the
//    iteration's token count, times the model's layers (times its count per layer);
//  - attention at the iteration's shape, times the layers: (prefill chunk, its KV, decoding
//    sequences, their KV) in one table (LLMServingSim), or a prefill table by (chunk, KV)
//    plus a decode table by (sequences, KV) (Vidur);
//  - a mixture-of-experts layer (LLMServingSim's moe.csv) by (tokens, experts they touch),
//    times the MoE layers: the experts an iteration's tokens touch in expectation
//    (ModelSpec::expected_experts);
//  - once per iteration: the embedding and the final norm at the token count, and the
//    per-sequence operators (the output head, the sampler) at the number of sequences.
// The iteration's shape from its sequences: tokens = all they compute; prefill chunk = the
// tokens of those computing more than one, at their token-weighted mean context; decoding
// sequences = those computing one, at their mean context (and, where the profile measured
// unequal contexts, a blend toward the time at the longest: attention_skew.hpp). Lookups
// interpolate linearly between measured points (ragged_table.hpp). Pure arithmetic: no SystemC.
#include <cstdint>
#include <string>
#include <vector>

#include "attention_skew.hpp"
#include "ragged_table.hpp"

namespace cosim {

// What a table is looked up by.
enum class ProfileInput : int {
    tokens = 0,             // the iteration's token count
    sequences = 1,          // the number of sequences in it
    attention = 2,          // (prefill chunk, its KV, decoding sequences, their KV)
    prefill_attention = 3,  // (prefill chunk, its KV); nothing without a prefill chunk
    decode_attention = 4,   // (decoding sequences, their KV); nothing without decodes
    moe = 5,                // (the tokens a MoE layer serves, the experts they touch)
};

struct OperatorTerm {
    std::string name;
    ProfileInput input = ProfileInput::tokens;
    double count = 1.0;  // times per iteration (per-layer operators: layers x per layer)
    RaggedTable table;   // nanoseconds
    AttentionSkew skew;  // attention only: the blend toward the longest context, where measured
};

// The shape of one iteration, from its sequences' tokens and contexts.
struct IterationShape {
    double tokens = 0.0;
    double sequences = 0.0;
    double prefill_chunk = 0.0;
    double prefill_kv = 0.0;
    double decodes = 0.0;
    double decode_kv = 0.0;      // their mean context
    double decode_kv_min = 0.0;  // the shortest and the longest (attention's skew)
    double decode_kv_max = 0.0;
    double moe_tokens = 0.0;  // the tokens a MoE layer serves, as one GPU holding every expert would
    double experts = 0.0;     // the distinct experts of a MoE layer they touch
};

class OperatorProfile {
public:
    OperatorProfile() = default;
    OperatorProfile(std::string source, std::vector<OperatorTerm> terms, bool head_from_roofline);

    bool empty() const { return terms_.empty(); }
    const std::string& source() const { return source_; }
    // The profile measured no output head (Vidur): the caller adds the roofline's.
    bool head_from_roofline() const { return head_from_roofline_; }
    // The iteration's time from its operators, ns (the output head aside when it has none).
    double iteration_ns(const IterationShape& shape) const;
    // The largest token count every token-indexed operator was measured at: a lone prefill
    // longer than this is timed in chunks of it.
    double max_tokens() const { return max_tokens_; }

private:
    std::string source_;
    std::vector<OperatorTerm> terms_;
    bool head_from_roofline_ = false;
    double max_tokens_ = 0.0;
};

}  // namespace cosim
