// The host's work on the devices: the jobs it submits to each device server (drafting,
// target runs, verification, shadow-sync streams), the transfers between them, and the
// counters those jobs feed. The workflow's handlers (host_orchestrator.cpp) call these.
#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "errors.hpp"

namespace cosim {

TicketPtr HostOrchestrator::submit_draft(int32_t step, int64_t tokens, std::vector<int64_t> deps,
                                         uint64_t ready_units) {
    const int64_t context = context_len();
    const int64_t last_product = chain_.empty() ? -1 : chain_.back().product;
    return submit(d_.draft_server, [this, step, tokens, deps, context, last_product](Ticket& t) {
        DraftUnit& draft = *d_.draft;
        std::vector<int64_t> after = deps;
        const int64_t gap = context - draft.position();
        if (gap > 0 && !t.abort.requested) {
            // The draft's cache lacks context the target wrote: a prefix-cache refill.
            const double start = now_ns();
            draft.prefill(gap);
            const int64_t id = log_.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), gap, after,
                                        draft.power().params().prefill_w);
            if (draft.batched()) batched_share(id, draft.last_energy_j(), draft.last_work_ns());
            t.above_idle_j += above_idle_j(id, draft.power().params().idle_w);
            product(id, last_product);
            after = {id};
            accept_if_written();
        }
        if (!request(Role::draft, draft.request_overhead_ns(), draft.power().params().idle_w, step, after,
                     &t.abort)) {
            t.activity = after.back();
            return;
        }
        const double start = now_ns();
        t.produced = draft.draft(tokens, &t.abort);
        t.activity = log_.add(Role::draft, ActivityKind::draft, step, start, now_ns(), t.produced, after,
                              draft.power().params().decode_w);
        if (draft.batched()) batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
        t.above_idle_j += above_idle_j(t.activity, draft.power().params().idle_w);
        m().drafted_tokens += t.produced;
    }, ready_units);
}

HostOrchestrator::Run HostOrchestrator::start_run(int32_t step, int64_t limit, std::vector<int64_t> deps) {
    Run r;
    r.step = step;
    r.key = chain_key();
    r.context = context_len();
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
    m().reused_tokens += r.reused;
    // Tokens the target has not seen yet go to it first (they are at the host already).
    const int64_t unseen = std::max<int64_t>(0, r.context - target_cached_);
    Delivery in{now_ns(), kNoActivity, now_units()};
    if (unseen > 0) {
        in = d_.fabric->send(Endpoint::host, Endpoint::target, static_cast<uint64_t>(unseen * options_.token_bytes),
                             now_ns(), deps, step);
        deps.push_back(in.activity);
    }
    r.ticket = decode_job(r, deps, in.arrival_units, true);
    return r;
}

TicketPtr HostOrchestrator::decode_job(const Run& r, std::vector<int64_t> deps, uint64_t ready_units,
                                       bool new_request) {
    const int32_t step = r.step;
    const int64_t context = r.context;
    const int64_t reused = r.reused;
    auto live = r.live;
    return submit(d_.target_server, [=](Ticket& t) {
        GpuProxy& target = *d_.target;
        std::vector<int64_t> after = deps;
        if (new_request &&
            !request(Role::target, target.params().request_overhead_ns, target.power().params().idle_w, step, after,
                     &t.abort)) {
            t.activity = after.back();
            return;
        }
        // What the target lacks is read now, not at submission: an earlier run may have been
        // aborted before its prefill.
        const int64_t fill = new_request ? std::max<int64_t>(0, context - target_cached_) + reused : 0;
        if (fill > 0) {
            // Context it has not seen, and cached tokens of an earlier run: one parallel prefill.
            const double start = now_ns();
            const bool done = gpu_prefill(target, fill, context + reused - fill, &t.abort);
            after = {log_.add(Role::target, ActivityKind::target_prefill, step, start, now_ns(), fill, after,
                              target.power().params().prefill_w)};
            batched_energy(after.back(), target);
            if (!done) {
                t.activity = after.back();
                return;
            }
            target_cached_ = context;  // its own decoded tokens are added when the run is kept
            live->generated = reused;
            if (reused > 0 && live->streaming) live->token.notify(sc_core::SC_ZERO_TIME);
        } else if (new_request) {
            target_cached_ = context;
        }
        const double start = now_ns();
        double batched_j = 0.0;
        double batched_ns = 0.0;
        const int64_t decoded = target.batcher() != nullptr
                                    ? decode_batched(target, *live, context, t, batched_j, batched_ns)
                                    : decode_alone(target, *live, context, t);
        if (now_ns() > start) {  // an abort may cut the first token short: that time was spent too
            after = {log_.add(Role::target, ActivityKind::refine, step, start, now_ns(), decoded, after,
                              target.power().params().decode_w)};
            if (target.batcher() != nullptr) batched_share(after.back(), batched_j, batched_ns);
            live->acts.push_back(after.back());
        }
        m().target_tokens += decoded;
        t.activity = after.empty() ? kNoActivity : after.back();
        t.produced = live->generated;
        live->token.notify(sc_core::SC_ZERO_TIME);
    }, ready_units);
}

int64_t HostOrchestrator::decode_alone(GpuProxy& target, RunState& live, int64_t context, Ticket& t) {
    DeviceCommand c;
    c.context = context;
    c.abort = &t.abort;
    c.run = &live;
    send_command(port_to(target), DeviceOp::gpu_decode_run, 0, c, route_to(target));
    return c.produced;
}

int64_t HostOrchestrator::decode_batched(GpuProxy& target, RunState& live, int64_t context, Ticket& t,
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
        gpu_batch_decode(target, context + live.generated, next, &t.abort, energy_j, work_ns);
    return decoded;
}

void HostOrchestrator::stop_run() {
    if (!run_.ticket) return;
    // Not started: it leaves the target's queue at once; under way: it stops at once.
    if (!run_.ticket->finished && !d_.target_server->withdraw(run_.ticket)) {
        run_.ticket->abort.request();
        await(run_.ticket);
    }
    for (int64_t id : run_.live->acts) product(id, -1);
    if (options_.prefetch_cache && run_.live->generated > 0)
        prefetch_[run_.key] = Cached{run_.step, run_.live->generated, run_.live->acts};
    target_cached_ = std::min(target_cached_, run_.context);  // its own tokens leave the KV cache
    run_ = Run{};
}

void HostOrchestrator::count_stall() {
    // The draft device idles from the end of its last step-ahead draft, if every step it
    // drafted ahead is finished: it may draft no further before a verdict.
    if (specs_.empty()) return;
    const Spec& last = specs_.back();
    const double now = now_ns();
    const double from = std::max(last.ticket->end_ns, stall_counted_ns_);
    if (!last.ticket->finished || last.ticket->produced == 0 || now <= from + kTimeEpsilonNs) return;
    log_.add(Role::draft, ActivityKind::stall, last.step, from, now, 0, {}, d_.draft->power().params().idle_w);
    m().stall_ns += now - from;
    stall_counted_ns_ = now;
}

void HostOrchestrator::count_verdict() {
    m().verdicts += 1;
    if (specs_.empty()) return;
    const TicketPtr& last = specs_.back().ticket;
    if (last->finished && last->produced > 0 && now_ns() > last->end_ns + kTimeEpsilonNs) m().stalled_verdicts += 1;
}

double HostOrchestrator::above_idle_j(int64_t id, double idle_w) const {
    const Activity& a = log_.at(id);
    return a.energy_j - (a.end_ns - a.start_ns) * idle_w * kJoulesPerWattNs;
}

void HostOrchestrator::abort_spec() {
    if (specs_.empty()) return;
    count_stall();
    // Those not started leave the queue; all others are told first, so that a step queued
    // behind another never starts.
    for (const Spec& s : specs_)
        if (!d_.draft_server->withdraw(s.ticket)) s.ticket->abort.request();
    for (const Spec& s : specs_) {
        await(s.ticket);
        product(s.ticket->activity, -1);
        m().discarded_step_ahead_tokens += s.ticket->produced;
        m().stepahead_waste_j += s.ticket->above_idle_j;
    }
    specs_.clear();
}

void HostOrchestrator::draft_ahead(int64_t k, int32_t step, int64_t after) {
    if (options_.sequential) return;
    while (static_cast<int32_t>(specs_.size()) < options_.step_ahead_depth) {
        const int32_t next = specs_.empty() ? step + 1 : specs_.back().step + 1;
        const int64_t tokens = lookahead_draft(k, next);
        if (tokens <= 0) return;  // the answer ends before it
        specs_.push_back(Spec{submit_draft(next, tokens, {after}), next, tokens});
    }
}

void HostOrchestrator::request_accept(int64_t end_position) {
    // Accept once the refined step is written up to `end_position`: now if it is,
    // else from the job that writes that position.
    accept_pending_ = end_position;
    for (const auto& stream : streams_) stream->settle();
    accept_if_written();
}

bool HostOrchestrator::request(Role role, double overhead_ns, double idle_w, int32_t step,
                               std::vector<int64_t>& after, AbortSignal* abort) {
    if (overhead_ns <= 0.0) return true;
    const double start = now_ns();
    const bool done = wait_unless_aborted(overhead_ns, abort);
    after = {log_.add(role, ActivityKind::request, step, start, now_ns(), 0, after, idle_w)};
    return done;
}

void HostOrchestrator::accept_if_written() {
    d_.draft->settle();
    if (accept_pending_ >= 0 && d_.draft->kvmu().pointers().curr >= accept_pending_) {
        d_.draft->verdict(Verdict::accept);
        accept_pending_ = -1;
    }
}

void HostOrchestrator::cut_streams() {
    for (const auto& stream : streams_) stream->cut();
}

void HostOrchestrator::stream_to_draft(Run& run, int64_t tokens, int64_t product_event) {
    run.live->streaming = true;
    run.live->retune.notify(sc_core::SC_ZERO_TIME);
    std::shared_ptr<SyncStream> stream;
    std::function<void(uint64_t, int64_t)> push;
    if (d_.shared) {
        // A device other requests use: each pass is a job of its own, ready when its token
        // arrives, so the device serves others while this stream waits for the target.
        push = [this, &run, product_event](uint64_t arrival_units, int64_t leg) {
            const int32_t step = run.step;
            submit(d_.draft_server, [this, leg, step, product_event](Ticket& t) {
                DraftUnit& draft = *d_.draft;
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
                t.activity = log_.add(Role::draft, ActivityKind::sync, step, start, now_ns(), 1, {leg},
                                      power.params().decode_w);
                if (draft.batched()) batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
                product(t.activity, product_event);
                accept_if_written();
            }, arrival_units);
        };
    } else {
        streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                      [](const std::shared_ptr<SyncStream>& s) { return s->finished(); }),
                       streams_.end());
        stream = std::make_shared<SyncStream>(
            *d_.draft, log_, run.step,
            [this, product_event](int64_t id) {
                product(id, product_event);
                accept_if_written();
            },
            on_sync_summary_);
        streams_.push_back(stream);
        const bool per_pass = d_.draft->kvmu().observed_per_token();
        submit(d_.draft_server, [stream, per_pass](Ticket&) { stream->run(per_pass); });
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
            const Delivery d = d_.fabric->send_fine(
                Endpoint::target, Endpoint::draft, static_cast<uint64_t>(burst * options_.token_bytes), now_ns(),
                {produced_by, last_command_}, run.step);
            for (int64_t j = 0; j < burst; ++j) push(d.arrival_units, d.activity);
            streamed = available;
        }
        // Tokens the target will decode on its published schedule, all but the last: each
        // leaves the moment it is decoded, so its transfer can be posted now.
        const int64_t from = run.live->scheduled_from;
        const auto& ends = run.live->schedule;
        while (streamed + 1 < tokens && streamed >= from && streamed - from < static_cast<int64_t>(ends.size())) {
            const int64_t produced_by = run.live->acts.empty() ? run.ticket->activity : run.live->acts.back();
            const Delivery d = d_.fabric->send_fine_at(Endpoint::target, Endpoint::draft,
                                                       static_cast<uint64_t>(options_.token_bytes),
                                                       ends[static_cast<size_t>(streamed - from)],
                                                       {produced_by, last_command_}, run.step);
            push(d.arrival_units, d.activity);
            ++streamed;
        }
        if (streamed >= tokens || run.ticket->finished) break;
        sc_core::wait(run.live->token | run.ticket->done);
    }
    if (stream) stream->close();
}

TicketPtr HostOrchestrator::verify(int64_t context, int64_t tokens, uint64_t ready_units, std::vector<int64_t> deps,
                                   int32_t step) {
    int64_t fill = context + tokens;
    int64_t at = 0;
    if (options_.prm_prefix_cache) {
        fill = context - prm_cached_ + tokens;
        at = prm_cached_;
    }
    prm_cached_ = context + tokens;
    return submit(d_.prm_server, [=](Ticket& t) {
        GpuProxy& prm = *d_.prm;
        std::vector<int64_t> after = deps;
        request(Role::prm, prm.params().request_overhead_ns, prm.power().params().idle_w, step, after);
        const double start = now_ns();
        gpu_prefill(prm, fill, at, nullptr, true);
        t.activity = log_.add(Role::prm, ActivityKind::verify, step, start, now_ns(), fill, after,
                              prm.power().params().prefill_w);
        batched_energy(t.activity, prm);
    }, ready_units);
}

Delivery HostOrchestrator::verdict(const TicketPtr& scored, int32_t step) {
    await(scored);
    const Delivery v = d_.fabric->send_fine_at(Endpoint::prm, Endpoint::host,
                                               static_cast<uint64_t>(options_.control_bytes), scored->end_units,
                                               {scored->activity}, step);
    at_least_units(v.arrival_units);
    last_settle_ = v.activity;
    return v;
}

Delivery HostOrchestrator::command_to_draft(int64_t cause, int32_t step) {
    const Delivery d = d_.fabric->send_fine(Endpoint::host, Endpoint::draft,
                                            static_cast<uint64_t>(options_.control_bytes), now_ns(), {cause}, step);
    command_arrival_units_ = d.arrival_units;
    last_command_ = d.activity;
    return d;
}

}  // namespace cosim
