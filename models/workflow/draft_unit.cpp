#include "sim_time.hpp"
#include "draft_unit.hpp"

#include <limits>
#include <vector>

namespace cosim {

DraftUnit::DraftUnit(sc_core::sc_module_name name, FpgaDraftAccelerator& fpga, PcieLink* link, uint64_t route)
    : sc_core::sc_module(name), port("port"), route_(route), fpga_(&fpga), latency_(&fpga.timing()) {
    if (link != nullptr) port.bind(link->upstream);
    else port.bind(fpga.host);
}

DraftUnit::DraftUnit(sc_core::sc_module_name name, GpuProxy& gpu, PcieLink* link, uint64_t route)
    : sc_core::sc_module(name),
      port("port"),
      route_(route),
      gpu_(&gpu),
      latency_(&gpu.timing().latency()),
      gpu_kvmu_(std::make_unique<KvmuModel>(gpu.name(), gpu.model().context_window)) {
    if (link != nullptr) port.bind(link->upstream);
    else port.bind(gpu.host);
}

void DraftUnit::verdict(Verdict verdict, int64_t position) {
    if (fpga_) {
        DeviceCommand c;
        c.verdict = verdict;
        send(DeviceOp::verdict, position, c);
        return;
    }
    if (verdict == Verdict::accept) gpu_kvmu_->accept();
    else if (verdict == Verdict::reject) gpu_kvmu_->rollback();
    else gpu_kvmu_->initialize(position);
}

void DraftUnit::set_depth(int32_t depth) {
    if (fpga_) send(DeviceOp::set_depth, depth);
    else gpu_kvmu_->set_depth(depth);
}

void DraftUnit::gpu_batch_decode(int64_t context, std::function<bool()> next, AbortSignal* abort) {
    DeviceCommand c;
    c.context = context;
    c.abort = abort;
    c.next = std::move(next);
    send(DeviceOp::gpu_batch_decode, 1, c);
    last_energy_j_ += c.energy_j;
    last_work_ns_ += c.work_ns;
}

void DraftUnit::gpu_prefill(int64_t tokens, int64_t context) {
    DeviceCommand c;
    c.context = context;
    send(DeviceOp::gpu_prefill, tokens, c);
    last_energy_j_ = c.energy_j;
    last_work_ns_ = c.work_ns;
}

Power& DraftUnit::power() { return fpga_ ? fpga_->power() : gpu_->power(); }

double DraftUnit::token_ns(int64_t context) const {
    return latency_->decode_token_ns(context);
}

double DraftUnit::prefill_ns(int64_t tokens, int64_t context) const {
    return latency_->prefill_ns(tokens, context);
}

double DraftUnit::kv_bytes_per_token() const {
    return fpga_ ? fpga_->kv_bytes_per_token() : gpu_->kv_bytes_per_token();
}

double DraftUnit::request_overhead_ns() const { return gpu_ ? gpu_->params().request_overhead_ns : 0.0; }

void DraftUnit::load(int64_t tokens) {
    if (fpga_) {
        send(DeviceOp::load_context, tokens);
        return;
    }
    gpu_kvmu_->clear();
    gpu_kvmu_->initialize(tokens);
}

void DraftUnit::prefill_prompt(int64_t tokens) {
    if (batched()) {
        gpu_prefill(tokens, 0);
        load(tokens);
        return;
    }
    Power& meter = power();
    meter.set_state(PowerState::prefill);
    sc_core::wait(duration_ns(prefill_ns(tokens, 0)));
    meter.set_state(PowerState::idle);
    load(tokens);
}

int64_t DraftUnit::draft(int64_t tokens, AbortSignal* abort, uint64_t key) {
    if (fpga_) {
        DeviceCommand c;
        c.abort = abort;
        send(DeviceOp::draft_step, tokens, c);
        return c.produced;
    }
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
        gpu_batch_decode(start, next, abort);
        if (written == tokens) k.end_step();
        return written;
    }
    gpu_->power().set_state(PowerState::decode);
    // Each token's time: a plain decode's, or speculatively a round's on its first token and
    // none on the others, which end with it at its verification.
    std::vector<double> durations(static_cast<size_t>(tokens));
    if (const SpecDecoder* spec = gpu_->speculation()) {
        SpecDecoder::Run plan = spec->run(start, 0, tokens, key);
        durations = std::move(plan.durations);
        if (plan.ns > 0.0)
            gpu_->power().set_state(PowerState::decode, gpu_->timing().busy_w(gpu_->power().params(),
                                                                               PowerState::decode, plan.work, plan.ns));
    } else {
        for (int64_t i = 0; i < tokens; ++i) durations[static_cast<size_t>(i)] = gpu_->decode_token_ns(start + i);
    }
    if (k.observed_per_token()) {
        while (written < tokens) {
            const double ns = durations[static_cast<size_t>(written)];
            if (ns > 0.0 && !wait_unless_aborted(ns, abort)) break;
            k.speculate_token();
            ++written;
        }
    } else {
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
    if (fpga_) send(DeviceOp::settle, 0);
    else gpu_kvmu_->speculate_tokens(gpu_in_flight_.take_due(std::numeric_limits<int64_t>::max()));
}

void DraftUnit::record_syncs(int64_t passes) {
    if (fpga_) send(DeviceOp::sync_tokens, passes);
    else gpu_kvmu_->sync_tokens(passes);
}

void DraftUnit::sync_batched() {
    last_energy_j_ = 0.0;
    last_work_ns_ = 0.0;
    gpu_batch_decode(position(), [] { return false; }, nullptr);
    record_syncs(1);
}

void DraftUnit::prefill(int64_t tokens) {
    if (fpga_) {
        send(DeviceOp::prefill, tokens);
        return;
    }
    gpu_prefill(tokens, gpu_kvmu_->pointers().ahead);
    gpu_kvmu_->sync_tokens(tokens);
}

}  // namespace cosim
