#pragma once
// A small transformer whose counts are easy to work by hand:
//   weight MACs per token = 2 x (64x64 + 2x64x32 + 64x64 + 3x64x128) + 64x256 = 90,112
//     (of which the output head 64x256 = 16,384)
//   KV elements per token = 2 x 2 layers x 2 KV heads x 16 = 128
//   attention MACs per token of context = 2 x 2 layers x 4 heads x 16 = 256
#include <heteroreason/model_spec.hpp>

inline cosim::ModelSpec toy_model() {
    cosim::ModelSpec m;
    m.name = "toy";
    m.layers = 2;
    m.hidden = 64;
    m.heads = 4;
    m.kv_heads = 2;
    m.head_dim = 16;
    m.ffn = 128;
    m.vocab = 256;
    m.params = 100000.0;
    m.lm_head = true;
    m.score_head_params = 0.0;
    m.context_window = 512;
    return m;
}
