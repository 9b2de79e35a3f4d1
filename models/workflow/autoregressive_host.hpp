#pragma once
// The plain autoregressive system (docs/system.md): one model, the target, generates each
// request's output alone, with no draft and no reward model. A request is its prompt's
// prefill, which yields the first output token, and one decode for each further token.
// Each request slot takes requests from the dispatcher and serves them on the target GPU
// it is bound to (slot s on GPU s mod T):
//  - without batching, the GPU serves one request at a time (its server, FIFO across
//    slots): one gpu_request command through the slot's TLM-2.0 initiator socket `gpu_port`
//    to the GPU's `host` target: the GPU's request overhead (the serving stack's work, the
//    GPU idle), the prefill, the decodes;
//  - with batching, the request waits out the serving stack's overhead (the API server
//    works beside the GPU) and joins the GPU's vLLM engine (vllm_engine.hpp), which runs
//    every slot's requests in its steps (the engine commands the GPU, one step at a time).
#include <cstdint>
#include <exception>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "decision_broker.hpp"
#include "device_server.hpp"
#include "engine_balancer.hpp"
#include "gpu_proxy.hpp"
#include "request_dispatcher.hpp"
#include "vllm_engine.hpp"

namespace cosim {

// What one served request did.
struct ServedRequest {
    int64_t request = 0;  // index in trace order
    // Instants in kernel units, exactly.
    uint64_t arrival_units = 0;
    uint64_t start_units = 0;        // when its slot took it
    uint64_t first_token_units = 0;  // its first output token
    uint64_t end_units = 0;          // its last output token
    int32_t slot = 0;
    int32_t target_device = 0;
    int64_t prompt_tokens = 0;
    int64_t output_tokens = 0;
    int32_t preemptions = 0;
    int64_t recomputed_tokens = 0;
    int64_t cached_prompt_tokens = 0;
    // Token-level speculative decoding: the target's passes after the prefill, the tokens drafted
    // and those kept.
    int64_t verify_passes = 0;
    int64_t drafted_tokens = 0;
    int64_t accepted_tokens = 0;
    double draft_energy_j = 0.0;  // split decoding: its draft device's energy while it was served
    double draft_busy_ns = 0.0;   // split decoding: its draft device's prefill and drafting
    double busy_ns = 0.0;   // the GPU's time on its prefill and decodes (batched: the steps it was in)
    double work_ns = 0.0;   // its share of the GPU's busy time (batched: its share of each step)
    double energy_j = 0.0;  // batch 1: the GPU's energy while it was served; batched: its share of its steps
    uint64_t overhead_end_units = 0;  // the serving stack's wait ends (its prefill may begin)
};

struct AutoregressiveGpu {
    int index = 0;
    GpuProxy* gpu = nullptr;        // the model on the GPU, timing, memory and power (batch 1: bound to gpu_port)
    DeviceServer* server = nullptr; // batch 1: one request at a time
    VllmEngine* engine = nullptr;   // batching
    // A data-parallel group's balancer, this engine among its engines: a request goes to the
    // one it chooses (null: to `engine`).
    EngineBalancer* balancer = nullptr;
    double request_overhead_ns = 0.0;
    int64_t context_window = 0;
    const Power* draft_power = nullptr;  // split decoding: its draft device's meter (a live view shows its state)
};

class AutoregressiveHost : public sc_core::sc_module {
public:
    // Batch 1: bound to the GPU's `host` socket; batched: unbound (the engine commands the GPU).
    tlm_utils::simple_initiator_socket_optional<AutoregressiveHost> gpu_port;

    AutoregressiveHost(sc_core::sc_module_name name, RequestDispatcher& dispatcher, int slot,
                       const AutoregressiveGpu& gpu, int64_t shared_prefix_tokens, std::vector<ServedRequest>& done);
    std::exception_ptr error() const { return error_; }
    // Live (decision_broker.hpp): a request without an output length asks it (`draft`, step
    // 1); with `ask_drafts`, a lone request asks each speculative pass's drafts (`speculate`).
    void set_decisions(DecisionBroker* broker, bool ask_drafts) {
        broker_ = broker;
        ask_drafts_ = ask_drafts;
    }

private:
    void run();
    void serve(const Request& request);
    void alone(ServedRequest& r, const Request& request);
    // A question about request `r` at this instant, its devices' states filled in.
    void describe(Decision& d, DecisionKind kind, const ServedRequest& r) const;

    RequestDispatcher& dispatcher_;
    const int slot_;
    AutoregressiveGpu gpu_;
    int64_t shared_prefix_;
    std::vector<ServedRequest>& done_;
    DecisionBroker* broker_ = nullptr;
    bool ask_drafts_ = false;
    std::exception_ptr error_;
};

}  // namespace cosim
