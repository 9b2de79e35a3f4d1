#include "parallel_layout.hpp"

#include <algorithm>

#include "errors.hpp"

namespace cosim {

void ParallelParams::validate(const std::string& where) const {
    COSIM_PARALLEL_PARAMS(COSIM_CHECK_PARAM)
}

ParallelLayout::ParallelLayout(const std::string& where, const ParallelParams& params, const PeerLink& link,
                               const ModelSpec& model)
    : params_(params), link_(link), hidden_(static_cast<double>(model.hidden)),
      layers_(static_cast<double>(model.layers)) {
    params.validate(where);
    const int64_t t = params.tensor_parallel;
    const std::string tp = where + ".tensor_parallel: " + std::to_string(t);
    // vLLM's rules: the query heads split evenly; KV heads split evenly, or each is copied
    // onto T / kv_heads GPUs.
    if (model.heads % t != 0)
        throw ConfigError(tp + " does not divide the " + std::to_string(model.heads) + " attention heads of " +
                          model.name);
    if (model.kv_lora_rank == 0 && model.kv_heads % t != 0 && t % model.kv_heads != 0)
        throw ConfigError(tp + " neither divides nor is a multiple of the " + std::to_string(model.kv_heads) +
                          " KV heads of " + model.name);
    const int64_t e = params.expert_parallel;
    const int64_t d = params.data_parallel;
    if (d > 1 && e != t * d)
        throw ConfigError(where + ".data_parallel: " + std::to_string(d) + " engines share their MoE layers only "
                          "through expert parallel: give expert_parallel " + std::to_string(t * d) +
                          " (tensor_parallel x data_parallel)");
    if (e > 1) {
        if (model.experts == 0)
            throw ConfigError(where + ".expert_parallel: " + std::to_string(e) + ", but " + model.name +
                              " has no experts");
        if (e != t && e != t * d)
            throw ConfigError(where + ".expert_parallel: " + std::to_string(e) + " must equal tensor_parallel (" +
                              std::to_string(t) + "): experts spread over the tensor-parallel group");
        if (model.experts % e != 0)
            throw ConfigError(where + ".expert_parallel: " + std::to_string(e) + " does not divide the " +
                              std::to_string(model.experts) + " experts of " + model.name);
    }
    if (params.expert_exchange != "allgather" && params.expert_exchange != "all_to_all")
        throw ConfigError(where + ".expert_exchange: " + params.expert_exchange +
                          " is not one of allgather, all_to_all");
    if (params.expert_exchange == "all_to_all") {
        if (d <= 1)
            throw ConfigError(where + ".expert_exchange: all_to_all is how engines that share their experts "
                                      "exchange tokens; with data_parallel 1 there is no exchange, so drop it");
        if (t > 1)
            throw ConfigError(where + ".expert_exchange: all_to_all with tensor_parallel " + std::to_string(t) +
                              ": the all-to-all kernels are modelled for engines of one GPU each");
    }
    moe_layers_ = static_cast<double>(model.moe_layers());
    experts_per_token_ = static_cast<double>(model.experts_per_token);
    if (t > 1 || d > 1) {
        if (link.bandwidth_gbps <= 0.0 || link.efficiency <= 0.0 || link.efficiency > 1.0 || link.latency_ns < 0.0)
            throw ConfigError(where + ".peer_link: a parallel group needs a link with positive bandwidth, "
                                      "efficiency in (0, 1] and a non-negative latency");
    }
    if (t > 1) {
        share_ = 1.0 / static_cast<double>(t);
        const double kv_heads = static_cast<double>(model.kv_heads);
        const double per_gpu = model.kv_heads >= t ? kv_heads / static_cast<double>(t) : 1.0;
        kv_share_ = model.kv_lora_rank > 0 ? 1.0 : per_gpu / kv_heads;
    }
    // Whole experts on E GPUs: 1/E of their weights, and D/E of the expert MACs of the D
    // engines' tokens; sliced (E = 1): every GPU a 1/T slice of each, of this engine's tokens.
    expert_weight_share_ = e > 1 ? 1.0 / static_cast<double>(e) : share_;
    expert_compute_share_ = e > 1 ? static_cast<double>(d) / static_cast<double>(e) : share_;
    all_to_all_ = params.expert_exchange == "all_to_all";
    if (all_to_all_) {
        // A token's k experts are k distinct ones of X, X/E on each GPU: it misses a given
        // other GPU with probability C(X - X/E, k) / C(X, k).
        const double x = static_cast<double>(model.experts);
        const double local = x / static_cast<double>(e);
        double miss = 1.0;
        for (int64_t i = 0; i < model.experts_per_token; ++i)
            miss *= std::max(0.0, x - local - static_cast<double>(i)) / (x - static_cast<double>(i));
        remote_gpus_ = static_cast<double>(e - 1) * (1.0 - miss);
    }
}

CollectiveTraffic ParallelLayout::all_reduce(double bytes) const {
    const int64_t t = params_.tensor_parallel;
    if (t <= 1) return {};
    const double steps = 2.0 * static_cast<double>(t - 1);
    return {params_.collective_latency_ns, steps, steps / static_cast<double>(t) * bytes};
}

CollectiveTraffic ParallelLayout::ring_gather(double bytes) const {
    const int64_t d = params_.data_parallel;
    if (d <= 1 || params_.expert_parallel <= 1) return {};
    const double others = static_cast<double>(d - 1);
    return {params_.collective_latency_ns, others, others / static_cast<double>(d) * bytes};
}

CollectiveTraffic ParallelLayout::all_to_all(double bytes) const {
    const int64_t e = params_.expert_parallel;
    if (!all_to_all_ || e <= 1) return {};
    return {params_.collective_latency_ns, static_cast<double>(e - 1), bytes};
}

namespace {
CollectiveTraffic times(double n, const CollectiveTraffic& t) { return {n * t.fixed_ns, n * t.steps, n * t.bytes}; }
}  // namespace

CollectiveTraffic ParallelLayout::traffic(double tokens) const {
    CollectiveTraffic sum;
    const double hidden_bytes = hidden_ * params_.activation_bytes;
    if (params_.tensor_parallel > 1) sum += times(2.0 * layers_, all_reduce(tokens * hidden_bytes));
    // A MoE layer's exchange: tokens out with their routing, their results back.
    const double routed_bytes = hidden_bytes + experts_per_token_ * kRoutingBytes;
    if (all_to_all_) {
        // This GPU's tokens, each to the other GPUs that hold one of its experts.
        const double sent = tokens * remote_gpus_;
        sum += times(moe_layers_, all_to_all(sent * routed_bytes));
        sum += times(moe_layers_, all_to_all(sent * hidden_bytes));
    } else if (params_.data_parallel > 1) {
        // All D engines' tokens, each as many as this one's (the equal-load assumption).
        const double gathered = static_cast<double>(params_.data_parallel) * tokens;
        sum += times(moe_layers_, ring_gather(gathered * routed_bytes));
        sum += times(moe_layers_, ring_gather(gathered * hidden_bytes));
    }
    return sum;
}

}  // namespace cosim
