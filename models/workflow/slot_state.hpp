#pragma once
// What the host's parts share about the problem a request slot serves now: the chain of
// steps kept so far, where each device's KV cache stands, and the last verdict and command
// (what the next work waits on). The step driver (host_orchestrator.hpp) resets it for each
// problem; the other parts read and advance it.
#include <cstdint>
#include <vector>

#include "activity_log.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

struct ChainStep {
    int64_t tokens = 0;
    int64_t product = 0;  // trace event index that produced it
};

struct SlotState {
    const TraceProblem* problem = nullptr;
    int64_t request_index = 0;
    std::vector<ChainStep> chain;
    int64_t last_settle = kNoActivity;   // the activity that settled the last step
    int64_t last_command = kNoActivity;  // the host's last command to the draft device
    uint64_t command_arrival_units = 0;  // when that command reaches the draft device
    int64_t prm_cached = 0;              // context the PRM holds in its KV cache
    int64_t target_cached = 0;           // context the target holds in its KV cache
    double verdict_sent_ns = 0.0;        // when the step under verdict went to the PRM

    // The prompt and the steps kept.
    int64_t context_len() const {
        int64_t total = problem->prompt_tokens;
        for (const ChainStep& s : chain) total += s.tokens;
        return total;
    }
    // The trace events that produced the chain's steps: the key of a context.
    std::vector<int64_t> chain_events() const {
        std::vector<int64_t> events;
        events.reserve(chain.size());
        for (const ChainStep& s : chain) events.push_back(s.product);
        return events;
    }
};

}  // namespace cosim
