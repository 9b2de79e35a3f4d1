#pragma once
// The serving sections a scenario gives the engine, declared once in
// cosim/schema/_cluster.py and generated into cosim_params.hpp: the cluster's shape
// (each pool's parameters under <pool>_<name>, as the scenario path
// cluster.<pool>.<name> names them) and the GPUs' batching settings.
#include <cstdint>
#include <string>

#include "param_rules.hpp"

namespace cosim {

// The scenario path of a cluster key: the pool's name ends at the first '_'
// (draft_contexts_per_device is cluster.draft.contexts_per_device).
inline std::string cluster_path(const std::string& key) {
    const auto at = key.find('_');
    return "cluster." + key.substr(0, at) + "." + key.substr(at + 1);
}

struct ClusterShape {
    COSIM_CLUSTER_SHAPE(COSIM_DECLARE_PARAM)

    // The declared rule of every field, errors naming its scenario path; and no more
    // devices and request slots than the engine runs (COSIM_MAX_THREADS), so that every
    // count fits an int.
    void validate() const {
#define COSIM_CHECK_SHAPE(type, name, rule, init)                                        \
    ::cosim::check_##rule(cluster_path(#name), static_cast<double>(name));                \
    if (name > COSIM_MAX_THREADS)                                                         \
        throw ConfigError(cluster_path(#name) + ": " + std::to_string(name) +             \
                          " is past the engine's limit of " + std::to_string(COSIM_MAX_THREADS));
        COSIM_CLUSTER_SHAPE(COSIM_CHECK_SHAPE)
#undef COSIM_CHECK_SHAPE
        const int64_t threads = draft_devices * (1 + draft_contexts_per_device) + prm_devices + target_devices;
        if (threads > COSIM_MAX_THREADS)
            throw ConfigError("cluster: " + std::to_string(threads) + " devices and request slots, past the "
                              "engine's limit of " + std::to_string(COSIM_MAX_THREADS) + " simulated threads");
    }
};

struct BatchingSettings {
    COSIM_BATCHING_SETTINGS(COSIM_DECLARE_PARAM)

    // The declared rules (errors naming batching.<name>), a declared policy, and a batch
    // within the engine's threads (each sequence of the vLLM engine's batch is one).
    void validate() const {
        const std::string where = "batching";
        COSIM_BATCHING_SETTINGS(COSIM_CHECK_PARAM)
        bool known = false;
        std::string policies;
#define COSIM_KNOWN_POLICY(name)  \
    known = known || policy == #name; \
    policies += (policies.empty() ? "" : ", ") + std::string(#name);
        COSIM_BATCHING_POLICIES(COSIM_KNOWN_POLICY)
#undef COSIM_KNOWN_POLICY
        if (!known) throw ConfigError("batching.policy: one of " + policies + ", got '" + policy + "'");
        if (max_batch > COSIM_MAX_THREADS)
            throw ConfigError("batching.max_batch: " + std::to_string(max_batch) + " is past the engine's limit of " +
                              std::to_string(COSIM_MAX_THREADS));
    }
    bool verify_first() const { return policy == "verify_first"; }
};

}  // namespace cosim
