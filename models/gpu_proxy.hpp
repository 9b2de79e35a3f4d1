#pragma once
// One model served on one GPU, or on a tensor-parallel group of them (timed, stored and
// powered as the group: timing/parallel_layout.hpp), batch size 1: its timing (GpuTiming:
// the latency formula its configuration picks, timing/latency_model.hpp), its memory and
// power.
// TLM-2.0: the host's commands arrive on `host` (DeviceCommand: gpu_prefill, gpu_decode,
// gpu_score, gpu_abort, gpu_batch_decode, gpu_decode_run, gpu_request, gpu_step), one
// blocking transaction per command; with a batcher, the work goes on through
// `batcher_port` to the GPU's GpuBatcher.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "abort_signal.hpp"
#include "collective_link.hpp"
#include "decode_run.hpp"
#include "device_command.hpp"
#include "gpu_batcher.hpp"
#include "gpu_power_states.hpp"
#include "gpu_timing.hpp"
#include "hbm.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "power.hpp"
#include "spec_decode.hpp"

namespace cosim {

class GpuProxy : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket_optional<GpuProxy> host;
    tlm_utils::simple_initiator_socket_optional<GpuProxy> batcher_port;

    // `kv_reserve` false: served by an engine that keeps the KV cache in its own blocks
    // (VllmEngine), so the memory holds the weights and no per-request KV reserve.
    GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model, const PowerParams& power,
             LatencyProfile profile = LatencyProfile(), bool kv_reserve = true,
             const ParallelLayout& layout = ParallelLayout());
    // A latency formula of the caller's own (timing/latency_model.hpp) in place of the one a
    // profile picks: a new formula needs no edit here.
    GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model, const PowerParams& power,
             std::shared_ptr<const LatencyModel> latency, bool kv_reserve = true);
    // A second model on a GPU that already has a proxy: shares that GPU's power meter
    // (one physical board, one energy integral) and its memory capacity check.
    GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model, Power& shared_power,
             LatencyProfile profile = LatencyProfile(), const ParallelLayout& layout = ParallelLayout());

    const GpuTiming& timing() const { return timing_; }
    double overhead_ns() const { return timing_.overhead_ns(); }
    double decode_token_ns(int64_t context) const { return timing_.decode_token_ns(context); }
    double prefill_ns(int64_t tokens, int64_t context) const { return timing_.prefill_ns(tokens, context); }
    double streamed_weight_bytes() const { return timing_.streamed_weight_bytes(); }
    double kv_bytes_per_token() const { return timing_.kv_bytes_per_token(); }

    // Token-level speculative decoding of its lone requests (gpu_request): set once. With a
    // draft device, `draft_power` is its meter, which this GPU's requests set. A proposer
    // model on this GPU takes memory beside the model: its weights, and its KV where the
    // GPU reserves a request's (CapacityError if they do not fit).
    void set_speculation(std::shared_ptr<const SpecDecoder> spec, Power* draft_power = nullptr);
    const SpecDecoder* speculation() const { return spec_.get(); }

    // Serving with iteration-level batching: this GPU's work goes through `batcher`
    // (shared by the models on one GPU), which times and powers it.
    void set_batcher(GpuBatcher* batcher);

    GpuBatcher* batcher() const { return batcher_; }

    // A group whose peer link is PCIe (ParallelLayout::on_pcie) books its collectives on
    // `link`, its GPUs' links in the system, as TLM transactions (collective_link.hpp), its
    // batcher's too; elsewhere they stay the closed form. Set once, while elaborating.
    void set_collective_link(PcieLink& link);
    bool collectives_on_link() const { return collectives_ != nullptr; }
    // The energy the last blocking operation drew for its caller (its share of each
    // batched iteration; watts x time when not batched): read it before waiting again.
    double last_energy_j() const { return last_energy_j_; }
    // The time the last blocking operation kept the GPU computing for its caller (its share
    // of each batched iteration; its own time when not batched).
    double last_work_ns() const { return last_work_ns_; }

    // Blocking operations, called from an SC_THREAD.
    // Returns false if `abort` cut it short (nothing was prefilled then). `urgent`:
    // scheduled first by a verify-first batcher (a PRM verification).
    bool prefill(int64_t tokens, int64_t context, AbortSignal* abort = nullptr, bool urgent = false);
    // Decodes `tokens` tokens after `context`; token_ready is notified after each.
    // An abort stops it at once; returns the tokens decoded.
    int64_t decode(int64_t tokens, int64_t context, AbortSignal* abort = nullptr);
    // Batched: decodes a token per iteration from `context` on while `next()` says so (see
    // GpuBatcher::decode); `energy_j` and `work_ns` gain this work's share. Returns the tokens.
    // A target run the host follows: decodes from `context` on up to run.limit as it stands,
    // one wait for all the tokens, cut short by an abort or by the host retuning the run;
    // publishes the tokens' schedule while the host streams them. Returns the tokens decoded.
    // With speculation (set_speculation) the run decodes speculatively, its draws keyed by `key`.
    int64_t decode_run(DecodeRun& run, int64_t context, AbortSignal* abort, uint64_t key = 0);
    // `certain`: tokens it takes unless aborted (GpuBatcher::decode; the command's count);
    // with speculation (set_speculation) it verifies drafts each iteration, draws keyed by `key`.
    int64_t batch_decode(int64_t context, const std::function<bool()>& next, AbortSignal* abort, double& energy_j,
                         double& work_ns, int64_t certain = 1, uint64_t key = 0);
    // A lone request (gpu_request): the serving stack's overhead with the GPU idle, the
    // prompt's prefill, then its output tokens' decodes in one wait (their times summed:
    // nobody looks in on them). `c` answers the instants and the meter's energy over it all.
    void serve_request(int64_t prompt, int64_t output, DeviceCommand& c);
    // A lone request decoded speculatively (spec_decode.hpp): the serving overhead, the
    // prompt's prefill, then the proposals and verifications of `output` - 1 tokens in one
    // wait, at the load of their summed work. `c` answers as for serve_request.
    SpecDecoder::Decode serve_speculative(int64_t prompt, int64_t output, const SpecDecoder& spec, uint64_t request,
                                          DeviceCommand& c);
    // One forward pass of an iteration-level engine (gpu_step) over `c.batch`: prefill power
    // if it holds a prefill chunk, decode otherwise; `c` answers its time and energy.
    void forward_step(DeviceCommand& c);

    sc_core::sc_event token_ready;  // notified per decoded token once enabled
    void enable_token_events() { token_events_ = true; }

    // What this GPU draws busy in `state` over a pass of `ns` doing `work` (its load model's
    // power, or the state's).
    double busy_w(PowerState state, const std::vector<BatchWork>& work, double ns) const {
        return timing_.busy_w(power_->params(), state, timing_.work(work), ns);
    }
    const Power& power() const { return *power_; }
    Power& power() { return *power_; }
    const GpuParams& params() const { return timing_.params(); }
    const ModelSpec& model() const { return timing_.model(); }
    bool profiled(Phase phase) const { return timing_.profiled(phase); }
    int64_t tokens_decoded() const { return tokens_decoded_; }
    int64_t tokens_prefilled() const { return tokens_prefilled_; }

private:
    void init(bool kv_reserve = true);
    void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    // One command to the batcher; `c` gets its answer.
    void to_batcher(DeviceOp op, int64_t count, DeviceCommand& c);
    // Waits out one pass of `ns` over `tokens` tokens: at once, or, with its collectives on
    // the link, its compute and then its collectives as the link books them. False if
    // `abort` cut it short (what it held of the link is freed).
    bool wait_pass(double ns, double tokens, AbortSignal* abort);
    // The compute of a decode run's tokens after `first` to `last` tokens of context, in kernel
    // units: each pass less its collectives' link time (wait_pass).
    std::vector<uint64_t> run_compute_units(int64_t first, int64_t last) const;

    GpuTiming timing_;
    Hbm memory_;
    std::unique_ptr<Power> own_power_;
    Power* power_;
    bool token_events_ = false;
    GpuBatcher* batcher_ = nullptr;
    std::shared_ptr<const SpecDecoder> spec_;
    std::unique_ptr<CollectiveLink> collectives_;
    int64_t kv_reserve_tokens_ = 0;  // the tokens of KV each request reserves (0: an engine's blocks)
    Power* draft_power_ = nullptr;
    double last_energy_j_ = 0.0;
    double last_work_ns_ = 0.0;
    int64_t tokens_decoded_ = 0;
    int64_t tokens_prefilled_ = 0;
};

}  // namespace cosim
