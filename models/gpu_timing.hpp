#pragma once
// Latency of one model served on one GPU or a parallel group of them: the latency formula
// its configuration picks (timing/latency_model.hpp), behind one object a GPU proxy and a
// batcher hold.
//   no profile                  RooflineTiming: the roofline with launch overheads
//   a measured latency table    MeasuredTiming: the table where it has rows, the roofline elsewhere
//   a measured operator profile OperatorTiming: every forward pass from the operators
// The roofline's terms stay readable whichever answers (a fit and the standalone runs
// report them). The workflow adds request_overhead_ns once per serving request (a drafted
// step, a PRM score, a refinement, a prompt), which the formulas leave out.
// Pure arithmetic: no SystemC, so a fit can evaluate it outside a simulation.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latency_model.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "power_params.hpp"
#include "roofline_timing.hpp"

namespace cosim {

class GpuTiming {
public:
    // Checks the parameters (ConfigError naming `where`); the profile picks the formula.
    // `layout`: the group the model spans (one GPU by default). A measured latency table
    // times one GPU; a group of more is refused with one (ConfigError).
    GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
              LatencyProfile profile = LatencyProfile(), const ParallelLayout& layout = ParallelLayout());
    // A formula of the caller's own (a C++ user's latency model) in place of the one a
    // profile picks; the roofline's terms still come from `params`.
    GpuTiming(const std::string& where, const GpuParams& params, const ModelSpec& model,
              std::shared_ptr<const LatencyModel> latency, const ParallelLayout& layout = ParallelLayout());

    // The formula a profile picks: its operators, its table over the roofline, or the roofline.
    static std::shared_ptr<const LatencyModel> latency_for(const LatencyProfile& profile,
                                                           std::shared_ptr<const RooflineTiming> roofline);

    const LatencyModel& latency() const { return *latency_; }
    // A pass's time is its formula's and its sampler's (sampler_ns): a decode samples one
    // row, a verification of k drafts k + 1; a prefill none (a prompt's first token, sampled
    // by the pass that completes it, is left out).
    double decode_token_ns(int64_t context) const;
    double prefill_ns(int64_t tokens, int64_t context) const;
    // One forward pass over a batch (iteration-level batching); a batch of one is the lone
    // operation's time (decode_token_ns, prefill_ns; profiles included).
    double batch_ns(const std::vector<BatchWork>& work) const { return latency_->batch_ns(work) + sampler_ns(work); }
    // The sampler's time over a pass: sampler_logit_ns x the vocabulary x the rows it
    // samples (0 unless requests sample by sorting their logits: docs/hardware.md).
    double sampler_ns(const std::vector<BatchWork>& work) const;
    // The sampler's time on one row: sampler_logit_ns x the vocabulary.
    double sampler_row_ns() const { return params().sampler_logit_ns * static_cast<double>(model().vocab); }
    bool profiled(Phase phase) const { return latency_->profiled(phase); }
    // One engine step over a batch. `overlap_host` (asynchronous scheduling): the host
    // prepares the step while the GPU runs the one before, so a roofline-timed step takes
    // the longer of its forward overhead and the rest, not their sum (measured profiles
    // time the GPU's kernels alone: nothing to overlap).
    double step_ns(const std::vector<BatchWork>& work, bool overlap_host) const;

    // One GPU's FLOPs and bytes in a batch (a lone operation: a batch of one), whichever
    // formula times it: the work is the model's, not the formula's.
    StepWork work(const std::vector<BatchWork>& batch) const { return roofline_->work(batch); }
    // What `power` draws in `state` over a pass of `ns` doing `work` on each GPU: the load
    // model's power at the pass's utilisation (power_params.hpp), or the state's power.
    double busy_w(const PowerParams& power, PowerState state, const StepWork& work, double ns) const;

    // The roofline's terms.
    double overhead_ns() const { return roofline_->overhead_ns(); }
    double decode_compute_ns(int64_t context) const { return roofline_->decode_compute_ns(context); }
    double decode_memory_ns(int64_t context) const { return roofline_->decode_memory_ns(context); }
    double prefill_compute_ns(int64_t tokens, int64_t context) const {
        return roofline_->prefill_compute_ns(tokens, context);
    }
    double prefill_memory_ns(int64_t tokens, int64_t context) const {
        return roofline_->prefill_memory_ns(tokens, context);
    }
    double roofline(double compute_ns, double memory_ns) const { return roofline_->roofline(compute_ns, memory_ns); }
    double streamed_weight_bytes() const { return roofline_->streamed_weight_bytes(); }
    double kv_bytes_per_token() const { return roofline_->kv_bytes_per_token(); }
    double stored_weight_bytes() const { return roofline_->stored_weight_bytes(); }
    const ParallelLayout& layout() const { return roofline_->layout(); }
    const GpuParams& params() const { return roofline_->params(); }
    const ModelSpec& model() const { return roofline_->model(); }

private:
    std::shared_ptr<const RooflineTiming> roofline_;
    std::shared_ptr<const LatencyModel> latency_;
};

}  // namespace cosim
