#include "sim_time.hpp"
#include "vllm_engine.hpp"

#include <algorithm>
#include <string>

#include "device_command.hpp"
#include "errors.hpp"

namespace cosim {

VllmEngine::VllmEngine(sc_core::sc_module_name name, const VllmSchedulerParams& params, bool async_scheduling)
    : sc_core::sc_module(name), gpu("gpu"), scheduler_(params), async_(async_scheduling) {
    SC_HAS_PROCESS(VllmEngine);
    SC_THREAD(run);
}

VllmEngine::Outcome VllmEngine::generate(const SeqSpec& spec) {
    scheduler_.check(spec);
    Waiter waiter;
    arrived_.emplace_back(spec, &waiter);
    wake_.notify(sc_core::SC_ZERO_TIME);
    while (!waiter.finished) sc_core::wait(waiter.done);
    return waiter.out;
}

void VllmEngine::run() {
    try {
        serve();
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

void VllmEngine::lockstep(LockstepGroup* group, int member) {
    group_ = group;
    member_ = member;
}

void VllmEngine::wait_for_work() {
    // The GPU is idle between steps (it says so after each); wait for a request, or in a
    // lockstep group for a round another engine opened.
    if (!scheduler_.idle() || !arrived_.empty()) return;
    if (group_ == nullptr) {
        while (arrived_.empty()) sc_core::wait(wake_);
        return;
    }
    while (arrived_.empty() && !group_->pending(member_)) sc_core::wait(wake_ | group_->opened());
}

void VllmEngine::dummy_step() {
    // vLLM's execute_dummy_batch: one token, so that the MoE layers' collectives meet.
    work_.assign(1, BatchWork{1, 0, true});
    DeviceCommand c;
    c.batch = &work_;
    c.overlap_host = async_;
    send_command(gpu, DeviceOp::gpu_step, 1, c);
    ++dummy_iterations_;
    group_->finish(member_);
}

void VllmEngine::propose(const VllmScheduler::Step& step, DeviceCommand& c) {
    // Every request that samples drafts for its next step over the tokens it kept: a
    // verification's kept drafts and its token, a prefill's chunk, a decode's token.
    proposals_.clear();
    for (const VllmScheduler::Scheduled& x : step.scheduled) {
        if (!scheduler_.samples(x)) continue;
        const int64_t fresh = x.drafts > 0 ? x.kept + 1 : x.tokens;
        proposals_.push_back(SpecDecoder::Proposal{fresh, x.computed_before, scheduler_.drafts_after(x),
                                                   scheduler_.first_sample(x)});
    }
    const SpecDecoder::Decode d = spec_->propose_batch(proposals_);
    c.extra_ns = d.ns;
    c.extra_flops = d.work.flops;
    c.extra_bytes = d.work.bytes;
    // A draft device's share of it (split decoding): the GPU waits idle meanwhile.
    c.draft_busy_ns = d.draft_busy_ns + d.draft_prefill_ns;
    c.draft_prefill_ns = d.draft_prefill_ns;
}

void VllmEngine::serve() {
    for (;;) {
        wait_for_work();
        std::sort(arrived_.begin(), arrived_.end(),
                  [](const auto& a, const auto& b) { return a.first.uid < b.first.uid; });
        for (const auto& [spec, waiter] : arrived_) waiters_[scheduler_.add(spec)] = waiter;
        arrived_.clear();
        if (group_ != nullptr) group_->join(member_);
        const VllmScheduler::Step& step = scheduler_.schedule();
        preemptions_ += step.preempted;
        if (step.scheduled.empty()) {
            // A request that preempted itself runs again once readmitted, at the next step.
            if (step.preempted > 0 || (group_ != nullptr && scheduler_.idle())) {
                if (group_ != nullptr) dummy_step();
                continue;
            }
            throw SimulationError(std::string(name()) + ": " + std::to_string(scheduler_.waiting()) +
                                  " requests wait and none can be scheduled");
        }
        if (step.kv_limited) ++kv_limited_;
        scheduler_.verify();
        work_.clear();
        for (const VllmScheduler::Scheduled& x : step.scheduled)
            work_.push_back(BatchWork{x.tokens, x.computed_before, x.tokens == 1 && x.drafts == 0, x.drafts > 0});
        // One command per step: the GPU times, powers and waits out the forward pass (and the
        // proposer's passes after it).
        DeviceCommand c;
        c.batch = &work_;
        c.overlap_host = async_;
        if (spec_ != nullptr) propose(step, c);
        send_command(gpu, DeviceOp::gpu_step, static_cast<int64_t>(work_.size()), c);
        // In a lockstep group the step ends with the slowest engine's.
        if (group_ != nullptr) group_->finish(member_);
        const double ns = c.work_ns;
        busy_ns_ += ns;
        ++iterations_;
        const auto n = static_cast<int64_t>(step.scheduled.size());
        batched_sequences_ += n;
        const double share = c.energy_j / static_cast<double>(n);
        for (const VllmScheduler::Scheduled& x : step.scheduled) {
            Waiter& w = *waiters_.at(x.seq);
            w.out.draft_energy_j += c.draft_energy_j / static_cast<double>(n);
            w.out.draft_busy_ns += c.draft_busy_ns / static_cast<double>(n);
            w.out.drafted += x.drafts;
            w.out.kept += x.kept;
            w.out.energy_j += share;
            w.out.busy_ns += ns;
            w.out.work_ns += ns / static_cast<double>(n);
        }
        const uint64_t now = now_units();
        scheduler_.complete([&](int64_t seq, bool first, bool finished) {
            Waiter& w = *waiters_.at(seq);
            if (first) w.out.first_token_units = now;
            else if (spec_ != nullptr) ++w.out.passes;  // a decode or a verification after its prefill
            if (!finished) return;
            w.out.end_units = now;
            w.out.preemptions = scheduler_.preemptions(seq);
            w.out.recomputed_tokens = scheduler_.recomputed(seq);
            w.out.cached_prompt_tokens = scheduler_.cached_prompt(seq);
            w.finished = true;
            w.done.notify(sc_core::SC_ZERO_TIME);
            waiters_.erase(seq);
        });
    }
}

}  // namespace cosim
