#include "sim_time.hpp"
#include "draft_unit.hpp"

#include <limits>
#include <vector>

namespace cosim {

DraftUnit::DraftUnit(FpgaDraftAccelerator& fpga) : fpga_(&fpga) {}

DraftUnit::DraftUnit(GpuProxy& gpu)
    : gpu_(&gpu), gpu_kvmu_(std::make_unique<Kvmu>(gpu.name(), gpu.model().context_window)) {}

Power& DraftUnit::power() { return fpga_ ? fpga_->power() : gpu_->power(); }

double DraftUnit::token_ns(int64_t context) const {
    return fpga_ ? fpga_->token_ns(static_cast<double>(context)) : gpu_->decode_token_ns(context);
}

double DraftUnit::prefill_ns(int64_t tokens, int64_t context) const {
    return fpga_ ? fpga_->prefill_ns(tokens, static_cast<double>(context)) : gpu_->prefill_ns(tokens, context);
}

double DraftUnit::kv_bytes_per_token() const {
    return fpga_ ? fpga_->kv_bytes_per_token() : gpu_->kv_bytes_per_token();
}

double DraftUnit::request_overhead_ns() const { return gpu_ ? gpu_->params().request_overhead_ns : 0.0; }

void DraftUnit::load(int64_t tokens) {
    if (fpga_) {
        fpga_->load_context(tokens);
        return;
    }
    gpu_kvmu_->clear();
    gpu_kvmu_->initialize(tokens);
}

void DraftUnit::prefill_prompt(int64_t tokens) {
    if (batched()) {
        gpu_->prefill(tokens, 0);
        last_energy_j_ = gpu_->last_energy_j();
        last_work_ns_ = gpu_->last_work_ns();
        load(tokens);
        return;
    }
    Power& meter = power();
    meter.set_state(PowerState::prefill);
    sc_core::wait(duration_ns(prefill_ns(tokens, 0)));
    meter.set_state(PowerState::idle);
    load(tokens);
}

int64_t DraftUnit::draft(int64_t tokens, AbortSignal* abort) {
    if (fpga_) return fpga_->decode_step(tokens, abort);
    Kvmu& k = *gpu_kvmu_;
    if (k.mux() == MuxSource::pcie) k.begin_speculation();
    const int64_t start = k.pointers().ahead;
    int64_t written = 0;
    if (batched()) {
        last_energy_j_ = 0.0;
        last_work_ns_ = 0.0;
        auto next = [&]() {
            k.speculate_token();
            ++written;
            return written < tokens && !(abort != nullptr && abort->requested);
        };
        gpu_->batcher()->decode(gpu_->timing(), start, next, abort, last_energy_j_, &last_work_ns_);
        if (written == tokens) k.end_step();
        return written;
    }
    gpu_->power().set_state(PowerState::decode);
    if (k.observed_per_token()) {
        while (written < tokens) {
            if (!wait_unless_aborted(gpu_->decode_token_ns(start + written), abort)) break;
            k.speculate_token();
            ++written;
        }
    } else {
        std::vector<double> durations(static_cast<size_t>(tokens));
        for (int64_t i = 0; i < tokens; ++i) durations[static_cast<size_t>(i)] = gpu_->decode_token_ns(start + i);
        gpu_in_flight_.begin(token_ends(durations, 0));
        written = wait_tokens(durations, 0, abort).completed;
        k.speculate_tokens(gpu_in_flight_.take_due(written));
        gpu_in_flight_.end();
    }
    if (written == tokens) k.end_step();
    gpu_->power().set_state(PowerState::idle);
    return written;
}

void DraftUnit::settle() {
    if (fpga_) fpga_->settle_draft();
    else gpu_kvmu_->speculate_tokens(gpu_in_flight_.take_due(std::numeric_limits<int64_t>::max()));
}

void DraftUnit::record_syncs(int64_t passes) {
    if (fpga_) fpga_->record_syncs(passes);
    else gpu_kvmu_->sync_tokens(passes);
}

void DraftUnit::sync_batched() {
    last_energy_j_ = 0.0;
    last_work_ns_ = 0.0;
    gpu_->batcher()->decode(gpu_->timing(), position(), [] { return false; }, nullptr, last_energy_j_,
                            &last_work_ns_);
    record_syncs(1);
}

void DraftUnit::prefill(int64_t tokens) {
    if (fpga_) {
        fpga_->prefill_local(tokens);
        return;
    }
    gpu_->prefill(tokens, gpu_kvmu_->pointers().ahead);
    last_energy_j_ = gpu_->last_energy_j();
    last_work_ns_ = gpu_->last_work_ns();
    gpu_kvmu_->sync_tokens(tokens);
}

}  // namespace cosim
