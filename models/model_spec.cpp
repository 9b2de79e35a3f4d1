#include "model_spec.hpp"

#include <cmath>

#include "errors.hpp"

namespace cosim {

void ModelSpec::validate() const {
    const std::string where = "model '" + name + "'";
    COSIM_MODEL_PARAMS(COSIM_CHECK_PARAM)
    if (heads % kv_heads != 0)
        throw ConfigError(where + ".kv_heads: " + std::to_string(kv_heads) + " does not divide heads (" +
                          std::to_string(heads) + ")");
    if (experts > 0) {
        if (experts_per_token < 1 || experts_per_token > experts)
            throw ConfigError(where + ".experts_per_token: " + std::to_string(experts_per_token) +
                              " routed experts a token of " + std::to_string(experts) + "; give 1 to " +
                              std::to_string(experts));
        if (expert_ffn <= 0) throw ConfigError(where + ".expert_ffn: a MoE model needs its experts' size");
        if (expert_params() >= params)
            throw ConfigError(where + ".params: " + std::to_string(params) + " is fewer than its routed experts' " +
                              std::to_string(expert_params()) + " (experts x expert_ffn x MoE layers)");
        if (dense_layers >= layers)
            throw ConfigError(where + ".dense_layers: " + std::to_string(dense_layers) +
                              " leaves no MoE layer of " + std::to_string(layers));
    } else if (experts_per_token != 0 || expert_ffn != 0 || shared_expert_ffn != 0 || dense_layers != 0) {
        throw ConfigError(where + ".experts: 0 (a dense model), but the expert settings are given");
    }
}

double ModelSpec::attention_linear_macs() const {
    const double h = static_cast<double>(hidden);
    const double q_width = static_cast<double>(heads * head_dim);
    if (kv_lora_rank == 0) {
        const double kv_width = static_cast<double>(kv_heads * head_dim);
        return h * q_width + 2.0 * h * kv_width + q_width * h;
    }
    // MLA: the query through its low-rank path (or in full), with the rotary part per head;
    // the KV latent and its rotary key from the hidden state; the latent expanded into the
    // no-rope keys and the values; the output projection from the values.
    const double heads_d = static_cast<double>(heads);
    const double rope = static_cast<double>(rope_head_dim);
    const double v_dim = static_cast<double>(v_head_dim > 0 ? v_head_dim : head_dim);
    const double q_out = heads_d * (static_cast<double>(head_dim) + rope);
    const double q = q_lora_rank > 0 ? h * q_lora_rank + static_cast<double>(q_lora_rank) * q_out : h * q_out;
    const double latent = static_cast<double>(kv_lora_rank);
    const double kv = h * (latent + rope) + latent * heads_d * (static_cast<double>(head_dim) + v_dim);
    return q + kv + heads_d * v_dim * h;
}

double ModelSpec::expert_macs() const {
    return 3.0 * static_cast<double>(hidden) * static_cast<double>(expert_ffn);
}

double ModelSpec::dense_macs_per_token() const {
    const double h = static_cast<double>(hidden);
    const double gated_mlp = 3.0 * h * static_cast<double>(ffn);
    if (experts == 0) return static_cast<double>(layers) * (attention_linear_macs() + gated_mlp) + output_head_macs();
    // A MoE layer: its router and shared experts run for every token.
    const double moe_shared = h * static_cast<double>(experts) + 3.0 * h * static_cast<double>(shared_expert_ffn);
    return static_cast<double>(layers) * attention_linear_macs() + static_cast<double>(dense_layers) * gated_mlp +
           static_cast<double>(moe_layers()) * moe_shared + output_head_macs();
}

double ModelSpec::linear_macs_per_token() const {
    if (experts == 0) return dense_macs_per_token();
    return dense_macs_per_token() +
           static_cast<double>(moe_layers()) * static_cast<double>(experts_per_token) * expert_macs();
}

double ModelSpec::expected_experts(double tokens) const {
    if (experts == 0 || tokens <= 0.0) return 0.0;
    const double e = static_cast<double>(experts);
    if (tokens == 1.0) return static_cast<double>(experts_per_token);
    return e * (1.0 - std::pow(1.0 - static_cast<double>(experts_per_token) / e, tokens));
}

double ModelSpec::expert_streamed_params(double tokens) const {
    return static_cast<double>(moe_layers()) * expected_experts(tokens) * expert_macs();
}

double ModelSpec::expert_params() const {
    return static_cast<double>(moe_layers()) * static_cast<double>(experts) * expert_macs();
}

double ModelSpec::output_head_macs() const {
    return lm_head ? static_cast<double>(hidden) * static_cast<double>(vocab) : score_head_params;
}

double ModelSpec::attention_macs_per_token(double context) const {
    if (kv_lora_rank > 0) {
        // MLA with the latent absorbed into the query and output (how serving engines decode
        // it): per head, QK^T over the latent and the rotary key, AV over the latent.
        const double per_position = static_cast<double>(heads) *
                                    (2.0 * static_cast<double>(kv_lora_rank) + static_cast<double>(rope_head_dim));
        return static_cast<double>(layers) * per_position * context;
    }
    // QK^T and AV each cost heads * head_dim MACs per context position per layer.
    return 2.0 * static_cast<double>(layers * heads * head_dim) * context;
}

double ModelSpec::kv_elements_per_token() const {
    if (kv_lora_rank > 0) return static_cast<double>(layers * (kv_lora_rank + rope_head_dim));
    return 2.0 * static_cast<double>(layers * kv_heads * head_dim);
}

double ModelSpec::kv_bytes_per_token(double kv_bytes_per_element) const {
    return kv_elements_per_token() * kv_bytes_per_element;
}

double ModelSpec::weight_bytes(double device_bytes) const {
    return weight_bytes_per_param > 0.0 ? weight_bytes_per_param : device_bytes;
}

double ModelSpec::expert_bytes(double device_bytes) const {
    return expert_bytes_per_param > 0.0 ? expert_bytes_per_param : weight_bytes(device_bytes);
}

double ModelSpec::stored_weight_bytes(double device_bytes) const {
    if (experts == 0) return params * weight_bytes(device_bytes);
    const double routed = expert_params();
    return (params - routed) * weight_bytes(device_bytes) + routed * expert_bytes(device_bytes);
}

int64_t ModelSpec::kv_reserve(const std::string& where, int64_t requested) const {
    if (requested > context_window)
        throw ConfigError(where + ".kv_reserve_tokens: " + std::to_string(requested) +
                          " exceeds the context window of " + name + " (" + std::to_string(context_window) +
                          " tokens)");
    return requested > 0 ? requested : context_window;
}

}  // namespace cosim
