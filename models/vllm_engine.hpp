#pragma once
// One GPU serving one model as vLLM's engine does: requests join its scheduler's waiting
// queue (vllm_scheduler.hpp: KV blocks, chunked prefill, preemption with recompute,
// prefix caching) and every step is one forward pass over the tokens it scheduled. The
// engine is the host's side (vLLM's engine core): it commands each step through its
// TLM-2.0 initiator socket `gpu`, bound to the GPU proxy's `host` target, as one gpu_step
// command (DeviceCommand: each scheduled request's tokens and its KV before them). The GPU
// times the pass (GpuTiming::batch_ns: the batch roofline, or a measured operator profile)
// and powers it. A step of one token for a request is its decode; more is a prefill
// chunk. With asynchronous scheduling (vLLM 0.19's default) the host prepares a step while
// the GPU runs the one before: a roofline-timed step takes the longer of its forward
// overhead and its compute or memory time, not their sum (measured profiles time the GPU's
// kernels alone). Power: prefill while a step holds a prefill chunk, decode otherwise, idle
// between steps; each request draws an equal share of every step it took part in.
// Engines of one data-parallel group that share a MoE model's experts step in lockstep
// (lockstep_group.hpp): a step ends when every engine's pass has, and an engine with no work
// runs a dummy pass of one token while another has some.
#include <cstdint>
#include <exception>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "device_command.hpp"
#include "gpu_timing.hpp"
#include "lockstep_group.hpp"
#include "spec_decode.hpp"
#include "vllm_scheduler.hpp"

namespace cosim {

class VllmEngine : public sc_core::sc_module {
public:
    // Bound to the GPU's `host` socket (GpuProxy) before the simulation starts.
    tlm_utils::simple_initiator_socket<VllmEngine> gpu;

    // `async_scheduling`: the engine's host work for a step (the roofline's forward overhead)
    // runs while the GPU computes the step before, so a step takes the longer of the two.
    VllmEngine(sc_core::sc_module_name name, const VllmSchedulerParams& params, bool async_scheduling = false);

    // Token-level speculative decoding (the scheduler's params.spec): the GPU's proposer, whose
    // passes each step adds after the target's (before the simulation starts).
    void set_speculation(const SpecDecoder* spec) { spec_ = spec; }

    struct Outcome {
        uint64_t first_token_units = 0;  // when its prefill's step ended (the first output token)
        uint64_t end_units = 0;          // when its last token's step ended
        double energy_j = 0.0;           // its share of the steps it took part in
        double busy_ns = 0.0;            // the time of those steps
        double work_ns = 0.0;            // its share of their time
        int32_t preemptions = 0;
        int64_t recomputed_tokens = 0;
        int64_t cached_prompt_tokens = 0;  // prefix-cache hits at its first admission
        int64_t passes = 0;                // its decoding passes after the prefill (verifications among them)
        int64_t drafted = 0;               // speculative: the drafts they checked
        int64_t kept = 0;                  // speculative: the drafts they kept
        double draft_energy_j = 0.0;       // split: its share of the draft device's energy in its steps
        double draft_busy_ns = 0.0;        // split: its share of the draft device's work in them
    };
    // Blocking, from a request's thread: the request joins the waiting queue now; returns
    // once its last token is out.
    Outcome generate(const SeqSpec& spec);

    // Joins a lockstep group as its member `member` (before the simulation starts).
    void lockstep(LockstepGroup* group, int member);

    // vLLM's data-parallel load balancer's score of an engine: 4 x waiting + running.
    int64_t load_score() const {
        return 4 * static_cast<int64_t>(scheduler_.waiting() + arrived_.size()) +
               static_cast<int64_t>(scheduler_.running());
    }

    int64_t iterations() const { return iterations_; }
    // Dummy passes run for a lockstep group's sake, in no iteration.
    int64_t dummy_iterations() const { return dummy_iterations_; }
    int64_t batched_sequences() const { return batched_sequences_; }
    double busy_ns() const { return busy_ns_; }
    // Steps that left a waiting request out because its blocks did not fit.
    int64_t kv_limited_iterations() const { return kv_limited_; }
    int64_t preemptions() const { return preemptions_; }
    int64_t usable_blocks() const { return scheduler_.usable_blocks(); }
    // The exception that stopped the engine's thread (and the simulation), if any.
    std::exception_ptr error() const { return error_; }

private:
    struct Waiter {
        Outcome out;
        bool finished = false;
        sc_core::sc_event done;
    };
    void run();
    void serve();
    void wait_for_work();
    void propose(const VllmScheduler::Step& step, DeviceCommand& c);
    void dummy_step();

    VllmScheduler scheduler_;
    bool async_;
    // Requests that arrived since the last step, added to the waiting queue before the next
    // one in trace order (threads woken at one instant run in no fixed order).
    std::vector<std::pair<SeqSpec, Waiter*>> arrived_;
    std::unordered_map<int64_t, Waiter*> waiters_;  // by scheduler handle
    sc_core::sc_event wake_;
    std::vector<BatchWork> work_;
    int64_t iterations_ = 0;
    int64_t dummy_iterations_ = 0;
    LockstepGroup* group_ = nullptr;
    const SpecDecoder* spec_ = nullptr;
    std::vector<SpecDecoder::Proposal> proposals_;
    int member_ = 0;
    int64_t batched_sequences_ = 0;
    double busy_ns_ = 0.0;
    int64_t kv_limited_ = 0;
    int64_t preemptions_ = 0;
    std::exception_ptr error_;
};

}  // namespace cosim
