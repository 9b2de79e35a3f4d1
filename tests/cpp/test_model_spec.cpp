// The transformer counts the timing models rest on (toy_model.hpp works them out).
#include <heteroreason/errors.hpp>
#include <heteroreason/draft_memory.hpp>
#include <heteroreason/model_spec.hpp>

#include "check.hpp"
#include "toy_model.hpp"

int sc_main(int, char*[]) {
    cosim::ModelSpec m = toy_model();
    m.validate();
    CHECK_EQ_NUM(m.linear_macs_per_token(), 90112);
    CHECK_EQ_NUM(m.output_head_macs(), 16384);
    CHECK_EQ_NUM(m.kv_elements_per_token(), 128);
    CHECK_EQ_NUM(m.attention_macs_per_token(10.0), 2560);
    CHECK(m.kv_reserve("x", 0) == 512);
    CHECK(m.kv_reserve("x", 100) == 100);
    CHECK_THROWS(cosim::ConfigError, "x.kv_reserve_tokens", m.kv_reserve("x", 513));
    // A draft device's memory: weights once, a window's KV per context. The toy model's
    // 128 KV elements a token at 2 bytes, 512 tokens a context: 131,072 bytes.
    const cosim::DraftMemory d = cosim::draft_memory(m, 2.0, 2.0, 0, 1e6, "cluster.draft");
    CHECK_EQ_NUM(d.weights_bytes, 2.0 * m.params);
    CHECK_EQ_NUM(d.context_bytes, 512 * 128 * 2);
    CHECK(d.reserve_tokens == 512);
    // 200,000 + 6 x 131,072 = 986,432 bytes fit in 10^6; a seventh context does not.
    CHECK(d.most_contexts() == 6 && d.fits(6) && !d.fits(7));
    CHECK_THROWS(cosim::ConfigError, "cluster.draft.kv_reserve_tokens",
                 cosim::draft_memory(m, 2.0, 2.0, 513, 1e6, "cluster.draft"));
    // A scoring head replaces the vocabulary projection.
    m.lm_head = false;
    m.score_head_params = 64.0;
    CHECK_EQ_NUM(m.linear_macs_per_token(), 90112 - 16384 + 64);
    // Grouped-query attention needs the KV heads to divide the heads.
    m.kv_heads = 3;
    CHECK_THROWS(cosim::ConfigError, "kv_heads", m.validate());
    m = toy_model();
    m.layers = 0;
    CHECK_THROWS(cosim::ConfigError, "layers", m.validate());
    return check_failures();
}
