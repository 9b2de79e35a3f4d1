#pragma once
// Architecture of a decoder-only transformer, reduced to the quantities the
// timing models need: weights streamed per token, MACs per token, KV bytes per
// token of context. Numbers come from the model's config (see cosim/data/models).
// A mixture-of-experts model routes each token through experts_per_token of its
// experts in every MoE layer; the weights a batch streams are those of the experts its
// tokens touch (docs/hardware.md "MoE models"). MLA models cache one compressed latent
// per token and layer instead of K and V.
#include <cstdint>
#include <string>

#include "param_rules.hpp"

namespace cosim {

// params: total parameters as published (stored weights); lm_head false: a scoring head
// of score_head_params replaces the vocabulary projection (PRMs).
struct ModelSpec {
    COSIM_MODEL_PARAMS(COSIM_DECLARE_PARAM)

    void validate() const;  // throws ConfigError naming the field

    // Weight MACs of one forward token: attention projections, the MLP (a MoE layer's
    // router, shared experts and experts_per_token routed experts), and the output head.
    double linear_macs_per_token() const;
    // The part of that every token runs whatever the routing (all of a dense model's).
    double dense_macs_per_token() const;
    // MACs of one routed expert in one layer (also its parameter count), and the MoE layers.
    double expert_macs() const;
    int64_t moe_layers() const { return experts > 0 ? layers - dense_layers : 0; }
    // Distinct experts of one MoE layer that `tokens` tokens touch, in expectation, each
    // choosing experts_per_token of the experts uniformly: E * (1 - (1 - k/E)^n).
    double expected_experts(double tokens) const;
    // Weights a forward pass over `tokens` tokens reads once, counted as parameters: the
    // dense part and the experts the tokens touch. `tokens` = 1 gives the MACs of one token.
    double dense_streamed_params() const { return dense_macs_per_token(); }
    double expert_streamed_params(double tokens) const;
    // Routed-expert parameters stored (all experts of all MoE layers).
    double expert_params() const;
    // The output head's share of the dense MACs: the vocabulary projection, or the scoring head.
    double output_head_macs() const;
    // Attention MACs of one token over `context` earlier tokens (QK^T and AV).
    double attention_macs_per_token(double context) const;
    // K and V elements stored per token of context, all layers (MLA: the latent and its
    // rotary key).
    double kv_elements_per_token() const;
    // Bytes of those elements at `kv_bytes_per_element` (a device's KV precision): the one
    // formula every model and check uses (Python through cosim._native.kv_bytes_per_token).
    double kv_bytes_per_token(double kv_bytes_per_element) const;
    // Bytes per weight of this checkpoint on a device serving at `device_bytes` (the model's
    // own precision when it has one), and of its routed experts.
    double weight_bytes(double device_bytes) const;
    double expert_bytes(double device_bytes) const;
    // Bytes of all weights stored at those precisions.
    double stored_weight_bytes(double device_bytes) const;

    // Tokens of KV cache to reserve: `requested`, or the whole window when 0.
    // ConfigError (naming `where`) if `requested` exceeds the window.
    int64_t kv_reserve(const std::string& where, int64_t requested) const;

private:
    double attention_linear_macs() const;  // one layer's attention projections
};

}  // namespace cosim
