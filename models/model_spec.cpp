#include "model_spec.hpp"

#include "errors.hpp"

namespace cosim {

void ModelSpec::validate() const {
    const std::string where = "model '" + name + "'";
    COSIM_MODEL_PARAMS(COSIM_CHECK_PARAM)
    if (heads % kv_heads != 0)
        throw ConfigError(where + ".kv_heads: " + std::to_string(kv_heads) + " does not divide heads (" +
                          std::to_string(heads) + ")");
}

double ModelSpec::linear_macs_per_token() const {
    const double h = static_cast<double>(hidden);
    const double q_width = static_cast<double>(heads * head_dim);
    const double kv_width = static_cast<double>(kv_heads * head_dim);
    const double attention = h * q_width + 2.0 * h * kv_width + q_width * h;
    const double gated_mlp = 3.0 * h * static_cast<double>(ffn);
    return static_cast<double>(layers) * (attention + gated_mlp) + output_head_macs();
}

double ModelSpec::output_head_macs() const {
    return lm_head ? static_cast<double>(hidden) * static_cast<double>(vocab) : score_head_params;
}

double ModelSpec::attention_macs_per_token(double context) const {
    // QK^T and AV each cost heads * head_dim MACs per context position per layer.
    return 2.0 * static_cast<double>(layers * heads * head_dim) * context;
}

double ModelSpec::kv_elements_per_token() const {
    return 2.0 * static_cast<double>(layers * kv_heads * head_dim);
}

double ModelSpec::kv_bytes_per_token(double kv_bytes_per_element) const {
    return kv_elements_per_token() * kv_bytes_per_element;
}

int64_t ModelSpec::kv_reserve(const std::string& where, int64_t requested) const {
    if (requested > context_window)
        throw ConfigError(where + ".kv_reserve_tokens: " + std::to_string(requested) +
                          " exceeds the context window of " + name + " (" + std::to_string(context_window) +
                          " tokens)");
    return requested > 0 ? requested : context_window;
}

}  // namespace cosim
