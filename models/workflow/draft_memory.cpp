#include "draft_memory.hpp"

#include <cmath>

namespace cosim {

int64_t DraftMemory::most_contexts() const {
    if (context_bytes <= 0.0) return 0;
    const double room = std::floor((capacity_bytes - weights_bytes) / context_bytes);
    return room > 0.0 ? static_cast<int64_t>(room) : 0;
}

DraftMemory draft_memory(const ModelSpec& model, double weight_bytes_per_param, double kv_bytes_per_element,
                         int64_t kv_reserve_tokens, double capacity_bytes, const std::string& where) {
    DraftMemory m;
    m.weights_bytes = model.params * weight_bytes_per_param;
    m.reserve_tokens = model.kv_reserve(where, kv_reserve_tokens);
    m.context_bytes = static_cast<double>(m.reserve_tokens) * model.kv_bytes_per_token(kv_bytes_per_element);
    m.capacity_bytes = capacity_bytes;
    return m;
}

}  // namespace cosim
