#include "sim_time.hpp"
#include "gpu_batcher.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "errors.hpp"

namespace cosim {

GpuBatcher::GpuBatcher(sc_core::sc_module_name name, const BatchingParams& params, Power& power)
    : sc_core::sc_module(name), socket("socket"), params_(params), power_(power) {
    socket.register_b_transport(this, &GpuBatcher::b_transport);
    if (params.max_batch < 1) throw ConfigError(std::string(this->name()) + ": batching.max_batch must be >= 1");
    if (params.token_budget < 1) throw ConfigError(std::string(this->name()) + ": batching.token_budget must be >= 1");
    SC_HAS_PROCESS(GpuBatcher);
    SC_THREAD(run);
}

bool GpuBatcher::join_and_wait(const ItemPtr& item, AbortSignal* abort) {
    items_.push_back(item);
    wake_.notify(sc_core::SC_ZERO_TIME);
    while (!item->finished) {
        if (abort != nullptr && abort->requested) {
            if (item->in_bulk) {
                // Its share of the iterations begun and its tokens of those ended are its own
                // now; the batcher is woken to leave it out after the one under way.
                const uint64_t now = now_units();
                for (size_t j = 0; j < bulk_.size(); ++j) {
                    if (bulk_[j].end <= now) apply(*item, j);
                    else if (j == 0 || bulk_[j].start < now) credit(*item, j);
                }
                wake_.notify(sc_core::SC_ZERO_TIME);
            }
            item->cancelled = true;  // left out of the next iteration; the one in flight ends without it
            return false;
        }
        if (abort != nullptr) sc_core::wait(item->done | abort->event);
        else sc_core::wait(item->done);
    }
    if (!item->error.empty()) throw SimulationError(item->error);
    return true;
}

bool GpuBatcher::prefill(const GpuTiming& timing, int64_t tokens, int64_t context, bool urgent, AbortSignal* abort,
                         double& energy_j, double* work_ns) {
    auto item = std::make_shared<Item>();
    item->timing = &timing;
    item->urgent = urgent;
    item->remaining = tokens;
    item->context = context;
    const bool done = join_and_wait(item, abort);
    energy_j += item->energy_j;
    if (work_ns != nullptr) *work_ns += item->work_ns;
    return done;
}

int64_t GpuBatcher::decode(const GpuTiming& timing, int64_t context, const std::function<bool()>& next,
                           AbortSignal* abort, double& energy_j, double* work_ns, int64_t certain,
                           const SpecDecoder* spec, uint64_t key) {
    auto item = std::make_shared<Item>();
    item->timing = &timing;
    item->decode = true;
    item->certain = std::max<int64_t>(1, certain);
    item->abort = abort;
    item->spec = spec;
    item->key = key;
    item->context = context;
    item->next = next;
    join_and_wait(item, abort);
    energy_j += item->energy_j;
    if (work_ns != nullptr) *work_ns += item->work_ns;
    return item->done_tokens;
}

void GpuBatcher::b_transport(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    DeviceCommand& c = command_of(trans);
    const BatchModel* model = trans.get_extension<BatchModel>();
    if (model == nullptr || model->timing == nullptr)
        throw SimulationError(std::string(name()) + ": a batched command needs its BatchModel extension");
    const int64_t n = command_count(trans);
    sync_annotated(delay);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    c.energy_j = 0.0;
    c.work_ns = 0.0;
    switch (command_op(trans)) {
        case DeviceOp::gpu_prefill:
        case DeviceOp::gpu_score:
            c.ok = prefill(*model->timing, n, c.context, c.urgent || command_op(trans) == DeviceOp::gpu_score, c.abort,
                           c.energy_j, &c.work_ns);
            c.produced = c.ok ? n : 0;
            return;
        case DeviceOp::gpu_batch_decode:
            c.produced = decode(*model->timing, c.context, c.next, c.abort, c.energy_j, &c.work_ns, n, model->spec,
                                static_cast<uint64_t>(c.request));
            c.ok = !(c.abort != nullptr && c.abort->requested);
            return;
        default: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return;
    }
}

void GpuBatcher::credit(Item& item, size_t j) const {
    if (item.credited > j) return;
    item.work_ns += bulk_[j].work_ns;
    item.credited = j + 1;
}

void GpuBatcher::apply(Item& item, size_t j) {
    credit(item, j);
    if (item.applied > j) return;
    item.applied = j + 1;
    item.energy_j += bulk_[j].share_j;
    if (item.cancelled || item.finished) return;
    item.context += 1;
    item.done_tokens += 1;
    item.certain -= 1;
    if (item.next()) return;
    if (item.certain > 0) {
        // Only an abort ends a promise early, and only from its instant on: a token whose
        // iteration ended before it was answered yes then.
        if (item.abort == nullptr || !item.abort->requested)
            throw SimulationError(std::string(name()) + ": a decode that promised " +
                                  std::to_string(item.certain + item.done_tokens) + " tokens stopped after " +
                                  std::to_string(item.done_tokens));
        if (bulk_[j].end < now_units()) return;
    }
    item.finished = true;
    item.done.notify(sc_core::SC_ZERO_TIME);
}

void GpuBatcher::advance_speculative(Item& item) {
    const int64_t kept =
        item.drafts > 0 ? accepted_drafts(item.spec->setup(), item.key, static_cast<uint64_t>(item.context),
                                          item.drafts) + 1
                        : 1;
    item.context += kept;  // the rejected drafts' positions are computed again
    item.fresh = kept;
    for (int64_t i = 0; i < kept; ++i) {
        item.done_tokens += 1;
        item.certain -= 1;
        if (!item.next()) {
            item.finished = true;
            item.done.notify(sc_core::SC_ZERO_TIME);
            return;
        }
    }
}

double GpuBatcher::passes_ns(const Passes& passes, StepWork& done) const {
    double ns = 0.0;
    for (const auto& [timing, work] : passes) {
        ns += timing->batch_ns(work);
        if (power_.params().load_model()) done += timing->work(work);
    }
    return ns;
}

int64_t GpuBatcher::promised(const Batch& batch) const {
    // Every sequence a plain decode, none waiting outside; no collectives to book on a link
    // between iterations.
    if (batch.size() != items_.size() || collectives_ != nullptr) return 1;
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const auto& entry : batch) {
        if (!entry.first->decode || entry.first->spec != nullptr) return 1;
        least = std::min(least, entry.first->certain);
    }
    return least;
}

void GpuBatcher::plan_bulk(const Batch& batch, double watts, int64_t promised) {
    const double size = static_cast<double>(batch.size());
    for (int64_t j = 1; j < promised; ++j) {
        double kv_bytes = 0.0;
        Passes passes;
        for (const auto& entry : batch) {
            const Item& item = *entry.first;
            kv_bytes += static_cast<double>(item.context + j + 1) * kv_per_token(item);
            passes[item.timing].push_back(BatchWork{1, item.context + j, true});
        }
        if (kv_bytes > params_.kv_budget_bytes) return;  // planned again as it fills
        StepWork done;
        const double ns = passes_ns(passes, done);
        // Its power must be the first's: the meter is set once for the whole wait.
        if (passes.begin()->first->busy_w(power_.params(), PowerState::decode, done, ns) != watts) return;
        sc_core::sc_time pass;
        try {
            pass = duration_ns(ns);
        } catch (const SimulationError&) {
            return;  // planned alone, where its error is reported
        }
        const uint64_t start = bulk_.back().end;
        bulk_.push_back(Span{start, start + pass.value(), ns, ns / size, ns * watts * kJoulesPerWattNs / size});
    }
}

void GpuBatcher::run_bulk(const Batch& batch) {
    for (const auto& entry : batch) {
        entry.first->in_bulk = true;
        entry.first->credited = 1;  // the first iteration's share, credited as it began
        entry.first->applied = 0;
    }
    const uint64_t last = bulk_.back().end;
    sc_core::wait(sc_core::sc_time::from_value(last - bulk_.front().start), wake_);
    // Woken early: the iterations ended by now run, and the one under way ends as planned
    // (the first had begun with the wait).
    const uint64_t now = now_units();
    size_t ran = 0;
    while (ran < bulk_.size() && bulk_[ran].end <= now) ++ran;
    if (ran == 0 || (ran < bulk_.size() && now > bulk_[ran].start)) ++ran;
    at_least_units(bulk_[ran - 1].end);
    const auto size = static_cast<int64_t>(batch.size());
    for (size_t j = 0; j < ran; ++j) {
        busy_ns_ += bulk_[j].ns;
        ++iterations_;
        batched_sequences_ += size;
        for (const auto& entry : batch) apply(*entry.first, j);
    }
    for (const auto& entry : batch) entry.first->in_bulk = false;
    bulk_.clear();
}

void GpuBatcher::set_collective_link(PcieLink& link) {
    if (collectives_ != nullptr) return;  // the GPU's models share its link
    collectives_ = std::make_unique<CollectiveLink>((std::string(basename()) + "_collectives").c_str(), link);
}

double GpuBatcher::wait_with_collectives(const Passes& passes, double ns) {
    const uint64_t start = now_units();
    // Each model's pass over its tokens, where its group's collectives go on the link.
    std::vector<std::pair<const ParallelLayout*, CollectiveTraffic>> collectives;
    uint64_t link_units = 0;
    for (const auto& [timing, work] : passes) {
        const ParallelLayout& layout = timing->layout();
        if (!layout.on_pcie()) continue;
        double tokens = 0.0;
        for (const BatchWork& w : work) tokens += static_cast<double>(w.tokens);
        collectives.emplace_back(&layout, layout.traffic(tokens));
        link_units += duration_units(collectives.back().second.link_ns(layout.link()));
    }
    sc_core::wait(sc_core::sc_time::from_value(compute_units(ns, link_units)));
    uint64_t end = now_units();
    for (const auto& [layout, traffic] : collectives) {
        uint64_t waited = 0;
        end = collectives_->book(traffic, layout->link(), end, nullptr, &waited);
        collectives_->count_wait(waited);
    }
    at_least_units(end);
    return units_to_ns(now_units() - start);
}

void GpuBatcher::run() {
    Batch batch;
    for (;;) {
        items_.erase(std::remove_if(items_.begin(), items_.end(),
                                    [](const ItemPtr& i) { return i->cancelled || i->finished; }),
                     items_.end());
        if (items_.empty()) {
            power_.set_state(PowerState::idle);
            while (items_.empty()) sc_core::wait(wake_);
            continue;
        }
        // This iteration's batch: urgent work first if asked, then arrival order.
        std::vector<ItemPtr> order(items_.begin(), items_.end());
        if (params_.verify_first)
            std::stable_partition(order.begin(), order.end(), [](const ItemPtr& i) { return i->urgent; });
        batch.clear();
        int64_t budget = params_.token_budget;
        double kv_bytes = 0.0;
        bool prefilling = false;
        for (const ItemPtr& item : order) {
            if (static_cast<int>(batch.size()) >= params_.max_batch || budget <= 0) break;
            // A speculative decode verifies its drafts: no draft past the last token it will take.
            item->drafts = item->spec == nullptr ? 0
                                                 : std::max<int64_t>(0, std::min(item->spec->setup().draft_tokens,
                                                                                 item->certain - 1));
            const int64_t tokens = item->decode ? 1 + item->drafts : std::min(item->remaining, budget);
            const double kv = static_cast<double>(item->context + tokens) * kv_per_token(*item);
            if (kv > params_.kv_budget_bytes) {
                // It would never fit: its caller fails (on its own thread, which reports it).
                item->error = std::string(name()) + ": one sequence's KV cache (" +
                              std::to_string(item->context + tokens) + " tokens, " + std::to_string(kv / 1e9) +
                              " GB) exceeds the GPU's KV memory (" + std::to_string(params_.kv_budget_bytes / 1e9) +
                              " GB: batching.gpu_memory_utilization of its memory less the weights)";
                item->finished = true;
                item->done.notify(sc_core::SC_ZERO_TIME);
                continue;
            }
            if (kv_bytes + kv > params_.kv_budget_bytes) {
                ++kv_limited_;
                break;  // in order: later work waits for KV space too
            }
            kv_bytes += kv;
            batch.emplace_back(item, tokens);
            budget -= tokens;
            prefilling = prefilling || !item->decode;
        }
        if (batch.empty()) continue;  // only work that can never run was waiting
        // One forward pass per model in the batch.
        Passes passes;
        std::vector<SpecDecoder::Proposal> proposals;
        const SpecDecoder* proposer = nullptr;
        for (const auto& [item, tokens] : batch) {
            passes[item->timing].push_back(
                BatchWork{tokens, item->context, item->decode && item->drafts == 0, item->drafts > 0});
            if (item->drafts > 0) {
                proposals.push_back(SpecDecoder::Proposal{item->fresh, item->context - item->fresh, item->drafts});
                proposer = item->spec;
            }
        }
        double ns = 0.0;
        StepWork done;
        if (proposer != nullptr) {
            // The proposers' passes for this iteration's drafts come before its pass.
            const SpecDecoder::Decode proposed = proposer->propose_batch(proposals);
            ns += proposed.ns;
            if (power_.params().load_model()) done += proposed.work;
        }
        ns += passes_ns(passes, done);
        const PowerState state = prefilling ? PowerState::prefill : PowerState::decode;
        // The models on one GPU share its peaks: their passes' work over the iteration's time.
        const double watts = passes.begin()->first->busy_w(power_.params(), state, done, ns);
        power_.set_state(state, watts);
        sc_core::sc_time pass;
        try {
            pass = duration_ns(ns);
        } catch (const SimulationError& e) {
            // A pass too long for the kernel's clock fails its sequences on their callers'
            // threads, which report it; thrown here it would escape this SystemC process.
            for (const auto& entry : batch) {
                entry.first->error = e.what();
                entry.first->finished = true;
                entry.first->done.notify(sc_core::SC_ZERO_TIME);
            }
            continue;
        }
        if (collectives_ != nullptr) ns = wait_with_collectives(passes, ns);
        for (const auto& entry : batch) entry.first->work_ns += ns / static_cast<double>(batch.size());
        if (const int64_t promise = promised(batch); promise > 1) {
            bulk_.assign(1, Span{now_units(), now_units() + pass.value(), ns, ns / static_cast<double>(batch.size()),
                                 ns * watts * kJoulesPerWattNs / static_cast<double>(batch.size())});
            plan_bulk(batch, watts, promise);
            if (bulk_.size() > 1) {
                run_bulk(batch);
                items_.erase(std::remove_if(items_.begin(), items_.end(),
                                            [](const ItemPtr& i) { return i->finished; }),
                             items_.end());
                continue;
            }
            bulk_.clear();
        }
        if (collectives_ == nullptr) sc_core::wait(pass);
        busy_ns_ += ns;
        ++iterations_;
        batched_sequences_ += static_cast<int64_t>(batch.size());
        const double share = ns * watts * kJoulesPerWattNs / static_cast<double>(batch.size());
        for (const auto& [item, tokens] : batch) {
            item->energy_j += share;
            if (item->cancelled) continue;
            if (item->spec != nullptr) {
                advance_speculative(*item);
                continue;
            }
            item->context += tokens;
            item->done_tokens += tokens;
            bool more = false;
            if (item->decode) {
                --item->certain;
                more = item->next();
            }
            else more = (item->remaining -= tokens) > 0;
            if (!more) {
                item->finished = true;
                item->done.notify(sc_core::SC_ZERO_TIME);
            }
        }
        items_.erase(std::remove_if(items_.begin(), items_.end(), [](const ItemPtr& i) { return i->finished; }),
                     items_.end());
    }
}

}  // namespace cosim
