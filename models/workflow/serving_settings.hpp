#pragma once
// The serving sections a scenario gives the engine, declared once in
// cosim/schema/_cluster.py and generated into cosim_params.hpp: the cluster's shape
// (each pool's parameters under <pool>_<name>, as the scenario path
// cluster.<pool>.<name> names them) and the GPUs' batching settings.
#include <cstdint>
#include <string>

#include "param_rules.hpp"

namespace cosim {

struct ClusterShape {
    COSIM_CLUSTER_SHAPE(COSIM_DECLARE_PARAM)

    // The declared rule of every field; errors name where.field.
    void validate(const std::string& where) const { COSIM_CLUSTER_SHAPE(COSIM_CHECK_PARAM) }
};

struct BatchingSettings {
    COSIM_BATCHING_SETTINGS(COSIM_DECLARE_PARAM)

    // The declared rules, and a policy that is one of the declared ones.
    void validate(const std::string& where) const {
        COSIM_BATCHING_SETTINGS(COSIM_CHECK_PARAM)
#define COSIM_IS_POLICY(name) || policy == #name
        if (!(false COSIM_BATCHING_POLICIES(COSIM_IS_POLICY)))
            throw ConfigError(where + ".policy: one of the declared policies, got '" + policy + "'");
#undef COSIM_IS_POLICY
    }
    bool verify_first() const { return policy == "verify_first"; }
};

}  // namespace cosim
