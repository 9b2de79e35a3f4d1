#include "engine_balancer.hpp"

#include <algorithm>
#include <limits>

#include "errors.hpp"

namespace cosim {

EngineBalancer::EngineBalancer(sc_core::sc_module_name name, std::vector<std::pair<VllmEngine*, int>> engines)
    : sc_core::sc_module(name), engines_(std::move(engines)), sent_(engines_.size(), 0) {
    if (engines_.empty()) throw ConfigError(std::string(this->name()) + ": a balancer needs an engine");
    SC_HAS_PROCESS(EngineBalancer);
    SC_METHOD(assign);
    sensitive << ask_;
    dont_initialize();
}

std::pair<VllmEngine*, int> EngineBalancer::choose(int64_t index) {
    Asked asked{index, -1};
    asked_.push_back(&asked);
    ask_.notify(sc_core::SC_ZERO_TIME);
    while (asked.chosen < 0) sc_core::wait(assigned_);
    --sent_[static_cast<size_t>(asked.chosen)];
    return engines_[static_cast<size_t>(asked.chosen)];
}

void EngineBalancer::assign() {
    // Every request asked at this instant, in trace order; the lowest score wins, the lower
    // index on a tie.
    std::sort(asked_.begin(), asked_.end(), [](const Asked* a, const Asked* b) { return a->index < b->index; });
    for (Asked* a : asked_) {
        int64_t least = std::numeric_limits<int64_t>::max();
        for (size_t e = 0; e < engines_.size(); ++e) {
            const int64_t score = engines_[e].first->load_score() + 4 * sent_[e];
            if (score < least) {
                least = score;
                a->chosen = static_cast<int>(e);
            }
        }
        ++sent_[static_cast<size_t>(a->chosen)];
    }
    asked_.clear();
    assigned_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace cosim
