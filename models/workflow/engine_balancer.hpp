#pragma once
// vLLM's data-parallel load balancer: a request goes to the engine of the group with the
// lowest score, 4 x waiting + running (vLLM's DPLBAsyncMPClient), a request sent and not yet
// arrived counting as waiting. Requests handed out at one instant are balanced in trace
// order, whatever order their host slots' threads run in.
#include <cstdint>
#include <utility>
#include <vector>

#include <systemc>

#include "vllm_engine.hpp"

namespace cosim {

class EngineBalancer : public sc_core::sc_module {
public:
    // The group's engines and their GPU indices.
    EngineBalancer(sc_core::sc_module_name name, std::vector<std::pair<VllmEngine*, int>> engines);

    // Blocking, from a host slot's thread: the engine request `index` goes to (and its GPU
    // index). The caller hands it the request at once (VllmEngine::generate).
    std::pair<VllmEngine*, int> choose(int64_t index);

private:
    struct Asked {
        int64_t index;
        int chosen;
    };
    void assign();

    std::vector<std::pair<VllmEngine*, int>> engines_;
    std::vector<int64_t> sent_;      // sent this instant, not yet in the engine's queue
    std::vector<Asked*> asked_;
    sc_core::sc_event ask_, assigned_;
};

}  // namespace cosim
