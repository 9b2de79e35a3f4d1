#pragma once
// What a draft device's memory holds for a number of request contexts: the model's
// weights once and each context's KV reservation. The one rule for how many contexts
// fit: the cluster applies it to an FPGA board's HBM when it is built, and the pre-run
// check (through cosim._native.draft_memory) to any draft device, before any work.
#include <cstdint>
#include <string>

#include "model_spec.hpp"

namespace cosim {

struct DraftMemory {
    double weights_bytes = 0.0;
    double context_bytes = 0.0;  // one context's KV reservation
    int64_t reserve_tokens = 0;  // the tokens of that reservation
    double capacity_bytes = 0.0;

    double need_bytes(int64_t contexts) const { return weights_bytes + static_cast<double>(contexts) * context_bytes; }
    bool fits(int64_t contexts) const { return need_bytes(contexts) <= capacity_bytes; }
    // The most contexts that fit (0 when the weights alone do not).
    int64_t most_contexts() const;
};

// `kv_reserve_tokens` 0 reserves the model's whole window; a reservation past the window
// is a ConfigError naming `where`.
DraftMemory draft_memory(const ModelSpec& model, double weight_bytes_per_param, double kv_bytes_per_element,
                         int64_t kv_reserve_tokens, double capacity_bytes, const std::string& where);

}  // namespace cosim
