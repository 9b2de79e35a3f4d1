#include "system_run.hpp"

#include <utility>

#include "errors.hpp"

namespace cosim::bindings {

namespace {

// The tops, by the name the Python registry gives (cosim/systems/, `top`).
constexpr std::pair<const char*, SystemRunFactory> kTops[] = {
    {"stepwise", &stepwise_run},
    {"autoregressive", &autoregressive_run},
};

}  // namespace

SystemRunFactory system_run(const std::string& top) {
    std::string known;
    for (const auto& [name, factory] : kTops) {
        if (top == name) return factory;
        known += (known.empty() ? "" : ", ") + std::string(name);
    }
    throw ConfigError("system top '" + top + "': one of " + known);
}

}  // namespace cosim::bindings
