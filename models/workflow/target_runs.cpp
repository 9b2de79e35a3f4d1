#include "sim_time.hpp"
#include "target_runs.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "errors.hpp"

namespace cosim {

TargetRuns::Run TargetRuns::start(int32_t step, int64_t limit, std::vector<int64_t> deps) {
    Run r;
    r.step = step;
    r.key = state_.chain_events();
    r.context = state_.context_len();
    r.live = std::make_shared<RunState>();
    r.live->limit = limit;
    if (options_.prefetch_cache) {
        auto it = prefetch_.find(r.key);
        if (it != prefetch_.end() && it->second.step == step) {
            r.reused = std::min(it->second.tokens, limit);
            r.reused_from = it->second.activities;
            r.reused_share = static_cast<double>(r.reused) / static_cast<double>(it->second.tokens);
            prefetch_.erase(it);
        }
    }
    dev_.m().reused_tokens += r.reused;
    // Tokens the target has not seen yet go to it first (they are at the host already).
    const int64_t unseen = std::max<int64_t>(0, r.context - state_.target_cached);
    Delivery in{now_ns(), kNoActivity, now_units()};
    if (unseen > 0) {
        in = dev_.d().fabric->send(Endpoint::host, Endpoint::target,
                                   static_cast<uint64_t>(unseen * options_.token_bytes), now_ns(), deps, step);
        deps.push_back(in.activity);
    }
    r.ticket = decode_job(r, deps, in.arrival_units, true);
    return r;
}

TicketPtr TargetRuns::decode_job(const Run& r, std::vector<int64_t> deps, uint64_t ready_units,
                                       bool new_request) {
    const int32_t step = r.step;
    const int64_t context = r.context;
    const int64_t reused = r.reused;
    auto live = r.live;
    return dev_.submit(dev_.d().target_server, [=](Ticket& t) {
        GpuProxy& target = *dev_.d().target;
        std::vector<int64_t> after = deps;
        if (new_request &&
            !dev_.request(Role::target, target.params().request_overhead_ns, target.power().params().idle_w, step,
                          after, &t.abort)) {
            t.activity = after.back();
            return;
        }
        // What the target lacks is read now, not at submission: an earlier run may have been
        // aborted before its prefill.
        const int64_t fill = new_request ? std::max<int64_t>(0, context - state_.target_cached) + reused : 0;
        if (fill > 0) {
            // Context it has not seen, and cached tokens of an earlier run: one parallel prefill.
            const double start = now_ns();
            const bool done = dev_.gpu_prefill(target, fill, context + reused - fill, &t.abort);
            after = {dev_.log().add(Role::target, ActivityKind::target_prefill, step, start, now_ns(), fill, after,
                              target.power().last_busy_w())};
            dev_.batched_energy(after.back(), target);
            if (!done) {
                t.activity = after.back();
                return;
            }
            state_.target_cached = context;  // its own decoded tokens are added when the run is kept
            live->generated = reused;
            if (reused > 0 && live->streaming) live->token.notify(sc_core::SC_ZERO_TIME);
        } else if (new_request) {
            state_.target_cached = context;
        }
        const double start = now_ns();
        double batched_j = 0.0;
        double batched_ns = 0.0;
        const int64_t decoded = target.batcher() != nullptr
                                    ? decode_batched(target, *live, context, t, batched_j, batched_ns)
                                    : dev_.decode_alone(target, *live, context, t, state_.request_index);
        if (now_ns() > start) {  // an abort may cut the first token short: that time was spent too
            after = {dev_.log().add(Role::target, ActivityKind::refine, step, start, now_ns(), decoded, after,
                              target.power().last_busy_w())};
            if (target.batcher() != nullptr) dev_.batched_share(after.back(), batched_j, batched_ns);
            live->acts.push_back(after.back());
        }
        dev_.m().target_tokens += decoded;
        t.activity = after.empty() ? kNoActivity : after.back();
        t.produced = live->generated;
        live->token.notify(sc_core::SC_ZERO_TIME);
    }, ready_units);
}

int64_t TargetRuns::decode_batched(GpuProxy& target, RunState& live, int64_t context, Ticket& t,
                                         double& energy_j, double& work_ns) {
    // A sequence in the GPU's running batch: a token per iteration, each recorded (and
    // streamed) as its iteration ends, until the limit as it stands then, or an abort.
    // No schedule is published: when a token ends depends on who else is in the batch.
    int64_t decoded = 0;
    auto next = [&]() {
        ++live.generated;
        ++decoded;
        if (live.streaming) live.token.notify(sc_core::SC_ZERO_TIME);
        return live.generated < live.limit && !t.abort.requested;
    };
    while (live.generated < live.limit && !t.abort.requested)
        dev_.gpu_batch_decode(target, context + live.generated, next, &t.abort, energy_j, work_ns);
    return decoded;
}

void TargetRuns::stop() {
    if (!run_.ticket) return;
    // Not started: it leaves the target's queue at once; under way: it stops at once.
    if (!run_.ticket->finished && !dev_.d().target_server->withdraw(run_.ticket)) {
        run_.ticket->abort.request();
        await(run_.ticket);
    }
    for (int64_t id : run_.live->acts) dev_.product(id, -1);
    if (options_.prefetch_cache && run_.live->generated > 0)
        prefetch_[run_.key] = Cached{run_.step, run_.live->generated, run_.live->acts};
    state_.target_cached = std::min(state_.target_cached, run_.context);  // its own tokens leave the KV cache
    run_ = Run{};
}

void TargetRuns::request_accept(int64_t end_position) {
    // Accept once the refined step is written up to `end_position`: now if it is,
    // else from the job that writes that position.
    accept_pending_ = end_position;
    for (const auto& stream : streams_) stream->settle();
    accept_if_written();
}

void TargetRuns::accept_if_written() {
    dev_.d().draft->settle();
    if (accept_pending_ >= 0 && dev_.d().draft->kvmu().pointers().curr >= accept_pending_) {
        dev_.d().draft->verdict(Verdict::accept);
        accept_pending_ = -1;
    }
}

void TargetRuns::cut_streams() {
    for (const auto& stream : streams_) stream->cut();
}

void TargetRuns::stream_to_draft(Run& run, int64_t tokens, int64_t product_event) {
    run.live->streaming = true;
    run.live->retune.notify(sc_core::SC_ZERO_TIME);
    std::shared_ptr<SyncStream> stream;
    std::function<void(uint64_t, int64_t)> push;
    if (dev_.d().shared) {
        // A device other requests use: each pass is a job of its own, ready when its token
        // arrives, so the device serves others while this stream waits for the target.
        push = [this, &run, product_event](uint64_t arrival_units, int64_t leg) {
            const int32_t step = run.step;
            dev_.submit(dev_.d().draft_server, [this, leg, step, product_event](Ticket& t) {
                DraftUnit& draft = *dev_.d().draft;
                Power& power = draft.power();
                const double start = now_ns();
                if (draft.batched()) {
                    draft.sync_batched();  // a batching GPU runs it in its iterations, beside others' work
                } else {
                    power.set_state(PowerState::decode);
                    sc_core::wait(duration_ns(draft.token_ns(draft.position())));
                    power.set_state(PowerState::idle);
                    draft.record_syncs(1);
                }
                t.activity = dev_.log().add(Role::draft, ActivityKind::sync, step, start, now_ns(), 1, {leg},
                                      power.params().decode_w);
                if (draft.batched()) dev_.batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
                dev_.product(t.activity, product_event);
                accept_if_written();
            }, arrival_units);
        };
    } else {
        streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                      [](const std::shared_ptr<SyncStream>& s) { return s->finished(); }),
                       streams_.end());
        stream = std::make_shared<SyncStream>(
            *dev_.d().draft, dev_.log(), run.step,
            [this, product_event](int64_t id) {
                dev_.product(id, product_event);
                accept_if_written();
            },
            on_sync_summary_);
        streams_.push_back(stream);
        const bool per_pass = dev_.d().draft->kvmu().observed_per_token();
        dev_.submit(dev_.d().draft_server, [stream, per_pass](Ticket&) { stream->run(per_pass); });
        push = [stream](uint64_t arrival_units, int64_t leg) { stream->push(arrival_units, leg); };
    }
    int64_t streamed = 0;  // tokens whose transfer is posted
    for (;;) {
        const int64_t available = std::min(run.live->generated, tokens);
        if (available > streamed) {
            // Decoded and not yet sent (cached tokens of an earlier run): one transfer now.
            // The last tokens leave once the run is logged, so the critical path can name it.
            if (available == tokens) await(run.ticket);
            const int64_t produced_by = run.live->acts.empty() ? run.ticket->activity : run.live->acts.back();
            const int64_t burst = available - streamed;
            const Delivery d = dev_.d().fabric->send_fine(
                Endpoint::target, Endpoint::draft, static_cast<uint64_t>(burst * options_.token_bytes), now_ns(),
                {produced_by, state_.last_command}, run.step);
            for (int64_t j = 0; j < burst; ++j) push(d.arrival_units, d.activity);
            streamed = available;
        }
        // Tokens the target will decode on its published schedule, all but the last: each
        // leaves the moment it is decoded, so its transfer can be posted now.
        const int64_t from = run.live->scheduled_from;
        const auto& ends = run.live->schedule;
        while (streamed + 1 < tokens && streamed >= from && streamed - from < static_cast<int64_t>(ends.size())) {
            const int64_t produced_by = run.live->acts.empty() ? run.ticket->activity : run.live->acts.back();
            const Delivery d = dev_.d().fabric->send_fine_at(Endpoint::target, Endpoint::draft,
                                                       static_cast<uint64_t>(options_.token_bytes),
                                                       ends[static_cast<size_t>(streamed - from)],
                                                       {produced_by, state_.last_command}, run.step);
            push(d.arrival_units, d.activity);
            ++streamed;
        }
        if (streamed >= tokens || run.ticket->finished) break;
        sc_core::wait(run.live->token | run.ticket->done);
    }
    if (stream) stream->close();
}

}  // namespace cosim
