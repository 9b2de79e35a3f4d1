#include "latency_model.hpp"

#include <string>

#include "errors.hpp"

namespace cosim {

double LatencyModel::batch_ns(const std::vector<BatchWork>& work) const {
    if (work.size() != 1)
        throw SimulationError(std::string(kind()) + ": a batch of " + std::to_string(work.size()) +
                              " sequences, but this latency formula times one at a time");
    return lone_ns(work.front());
}

}  // namespace cosim
