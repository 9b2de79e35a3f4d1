#pragma once
// Architecture of a decoder-only transformer, reduced to the quantities the
// timing models need: weights streamed per token, MACs per token, KV bytes per
// token of context. Numbers come from the model's config (see cosim/data/models).
#include <cstdint>
#include <string>

#include "param_rules.hpp"

namespace cosim {

// params: total parameters as published (stored weights); lm_head false: a scoring head
// of score_head_params replaces the vocabulary projection (PRMs).
struct ModelSpec {
    COSIM_MODEL_PARAMS(COSIM_DECLARE_PARAM)

    void validate() const;  // throws ConfigError naming the field

    // Weight MACs of one forward token: q/k/v/o, gated MLP, and the output head.
    double linear_macs_per_token() const;
    // The output head's share of that: the vocabulary projection, or the scoring head.
    double output_head_macs() const;
    // Attention MACs of one token over `context` earlier tokens (QK^T and AV).
    double attention_macs_per_token(double context) const;
    // K and V elements stored per token of context, all layers.
    double kv_elements_per_token() const;
    // Bytes of those elements at `kv_bytes_per_element` (a device's KV precision): the one
    // formula every model and check uses (Python through cosim._native.kv_bytes_per_token).
    double kv_bytes_per_token(double kv_bytes_per_element) const;

    // Tokens of KV cache to reserve: `requested`, or the whole window when 0.
    // ConfigError (naming `where`) if `requested` exceeds the window.
    int64_t kv_reserve(const std::string& where, int64_t requested) const;
};

}  // namespace cosim
