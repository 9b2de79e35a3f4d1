#pragma once
// Iteration-level (continuous) batching on one GPU, as LLM serving engines run it:
// every iteration is one forward pass per model over the decode token of each
// running sequence and chunks of waiting prefills, up to `max_batch` sequences and
// `token_budget` tokens. Its time is the roofline of the whole batch: each model's
// weights read once, every sequence's KV read, the batch's FLOPs (GpuTiming::
// batch_ns); a batch of one is timed exactly as a lone operation. Sequences join
// and leave between iterations; an abort releases its caller at once (the token in
// flight is lost, the iteration goes on for the others). Power: prefill while an
// iteration holds a prefill chunk, decode otherwise, idle between; with the load model, the
// power of the iteration's work over its time (power_params.hpp).
// KV memory: the sequences of one iteration must hold their KV caches (context plus the
// tokens computed) within `kv_budget_bytes` together, as vLLM admits sequences only while
// their KV blocks fit; work that does not fit waits, in order, for a later iteration.
// A decode may promise tokens it takes for sure (`certain`): while every sequence of the
// batch has such a promise and nothing else changes, the batcher runs the iterations up to
// the first promise's end in one wait, each timed, metered and credited as alone; an arrival
// or an abort ends that wait after the iteration under way, as it would have been planned.
// A decode with a speculative decoder verifies its drafts in each iteration instead of one
// token: its proposer's passes (on this GPU, or a host lookup) before the iteration's pass,
// which computes the drafts and the token after them; the drafts it keeps are drawn from the
// decoder's acceptance, keyed by the sequence's key and position (spec_decode.hpp).
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "abort_signal.hpp"
#include "collective_link.hpp"
#include "device_command.hpp"
#include "gpu_timing.hpp"
#include "power.hpp"
#include "spec_decode.hpp"

namespace cosim {

struct BatchingParams {
    int max_batch = 64;           // sequences per iteration
    int64_t token_budget = 2048;  // tokens per iteration (decode tokens and prefill chunks)
    bool verify_first = false;    // urgent work (PRM verifications) is scheduled before the rest
    double gpu_memory_utilization = 0.9;  // share of device memory for weights and KV cache
    // KV bytes one iteration's sequences may hold together (the memory share less every
    // model's weights on the GPU); infinite: not limited.
    double kv_budget_bytes = std::numeric_limits<double>::infinity();
};

// Which model a batcher's command is for (the models on one GPU share its batcher).
class BatchModel : public tlm::tlm_extension<BatchModel> {
public:
    const GpuTiming* timing = nullptr;
    const SpecDecoder* spec = nullptr;  // gpu_batch_decode: decodes speculatively with it
    tlm::tlm_extension_base* clone() const override { return new BatchModel(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const BatchModel&>(other); }
};

class GpuBatcher : public sc_core::sc_module {
public:
    // The GPU proxies' work (DeviceCommand gpu_prefill, gpu_score, gpu_batch_decode, with a
    // BatchModel): each a blocking transaction that returns when its work left the batch.
    tlm_utils::multi_passthrough_target_socket_optional<GpuBatcher> socket;

    GpuBatcher(sc_core::sc_module_name name, const BatchingParams& params, Power& power);

    // Blocking, from a request's job thread: prefills `tokens` after `context` of the model
    // `timing` describes. False if `abort` stopped it. `energy_j` gains this work's share of
    // each iteration's energy; `work_ns`, if given, its share of each iteration's time
    // (the iteration's time over the sequences in it, credited as the iteration starts, so
    // an abort during it keeps its share: the GPU computed it).
    bool prefill(const GpuTiming& timing, int64_t tokens, int64_t context, bool urgent, AbortSignal* abort,
                 double& energy_j, double* work_ns = nullptr);
    // Decodes one token per iteration from `context` on, for as long as `next()` says
    // (called after each token, on the batcher's thread: it records the token and answers
    // whether to go on). Returns the tokens decoded; an abort returns at once.
    // `certain`: tokens it takes unless aborted, `next()` answering yes to all but the last
    // (1: decided after each token).
    // With `spec`, each iteration verifies up to its draft_tokens drafts (no more than
    // `certain` - 1), its draws keyed by `key`.
    int64_t decode(const GpuTiming& timing, int64_t context, const std::function<bool()>& next,
                   AbortSignal* abort, double& energy_j, double* work_ns = nullptr, int64_t certain = 1,
                   const SpecDecoder* spec = nullptr, uint64_t key = 0);

    int64_t iterations() const { return iterations_; }
    int64_t batched_sequences() const { return batched_sequences_; }
    double busy_ns() const { return busy_ns_; }
    // Iterations that left waiting work out because its KV cache would not fit.
    int64_t kv_limited_iterations() const { return kv_limited_; }
    const BatchingParams& params() const { return params_; }
    // Its models' collectives, where their group's peer link is PCIe, go on `link` after each
    // iteration's compute (GpuProxy::set_collective_link; iterations then run one wait each).
    void set_collective_link(PcieLink& link);

private:
    struct Item {
        const GpuTiming* timing = nullptr;
        bool decode = false;
        bool urgent = false;
        int64_t remaining = 0;  // prefill tokens left
        int64_t context = 0;    // tokens before the next one this item computes
        int64_t done_tokens = 0;
        std::function<bool()> next;
        bool finished = false;
        bool cancelled = false;
        std::string error;  // why it can never run (its caller throws it)
        double energy_j = 0.0;
        double work_ns = 0.0;  // its share of the iterations it was in
        sc_core::sc_event done;
        int64_t certain = 1;  // decode: tokens it takes for sure from now on, unless aborted
        const AbortSignal* abort = nullptr;
        const SpecDecoder* spec = nullptr;  // decodes speculatively: drafts verified each iteration
        uint64_t key = 0;                   // its draws' key
        int64_t fresh = 1;                  // tokens its proposer has not seen yet
        int64_t drafts = 0;                 // verified in the iteration it is in
        // In the iterations run in one wait: how many credited it their time share (at
        // their start) and their tokens and energy (at their end), so far.
        size_t credited = 0;
        size_t applied = 0;
        bool in_bulk = false;
    };
    using ItemPtr = std::shared_ptr<Item>;
    // One iteration of those run in one wait: its kernel-time bounds and its time.
    struct Span {
        uint64_t start = 0, end = 0;
        double ns = 0.0;
        double work_ns = 0.0;  // each sequence's share of its time
        double share_j = 0.0;  // each sequence's share of its energy
    };
    using Batch = std::vector<std::pair<ItemPtr, int64_t>>;  // item, tokens it computes this iteration
    using Passes = std::map<const GpuTiming*, std::vector<BatchWork>>;  // an iteration's work, by model

    bool join_and_wait(const ItemPtr& item, AbortSignal* abort);
    // Waits out an iteration of `ns` whose passes' collectives go on the link: the compute,
    // then each pass's collectives as the link books them. Returns the time it took.
    double wait_with_collectives(const Passes& passes, double ns);
    // A sequence's KV bytes per token of context: its model's, and a speculative decode's
    // proposer's beside it.
    static double kv_per_token(const Item& item) {
        const double proposer = item.spec != nullptr ? item.spec->drafter_kv_bytes_per_token() : 0.0;
        return item.timing->kv_bytes_per_token() + proposer;
    }
    // One forward pass per model: their time; with the load model, `done` gains their work.
    double passes_ns(const Passes& passes, StepWork& done) const;
    // The fewest tokens a sequence of the batch has promised when every one is a plain decode
    // and none waits outside it; 1 (no iteration beyond this one is known) otherwise.
    int64_t promised(const Batch& batch) const;
    // The iterations after the first (bulk_'s) that the batch can run in the same wait, up to
    // `promised` in all (the KV memory, the same power), appended to bulk_.
    void plan_bulk(const Batch& batch, double watts, int64_t promised);
    // Runs bulk_ in one wait, cut after the iteration under way when woken; books what ran.
    void run_bulk(const Batch& batch);
    // Span j of bulk_ to `item`: its time share, as the iteration begins ...
    void credit(Item& item, size_t j) const;
    // ... and, once it has ended, its token (`next()`) and energy.
    void apply(Item& item, size_t j);
    // A speculative decode's iteration ended: the drafts kept and the target's own token.
    void advance_speculative(Item& item);
    void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    void run();

    BatchingParams params_;
    Power& power_;
    std::deque<ItemPtr> items_;  // in arrival order
    std::vector<Span> bulk_;     // the iterations run in one wait now (empty: none)
    sc_core::sc_event wake_;
    int64_t iterations_ = 0;
    int64_t batched_sequences_ = 0;
    double busy_ns_ = 0.0;
    int64_t kv_limited_ = 0;
    std::unique_ptr<CollectiveLink> collectives_;
};

}  // namespace cosim
