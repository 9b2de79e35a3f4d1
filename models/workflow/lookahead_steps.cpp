#include "sim_time.hpp"
#include "lookahead_steps.hpp"

#include <algorithm>
#include <string>

#include "errors.hpp"
#include "host_messages.hpp"

namespace cosim {

DeviceServer* LookaheadSteps::lane(int32_t step) const {
    const auto& lanes = dev_.d().target_lanes;
    return lanes[static_cast<size_t>(step) % lanes.size()];
}

LookaheadSteps::Run* LookaheadSteps::run_of(int32_t step) {
    for (Run& r : runs_)
        if (r.step == step) return &r;
    return nullptr;
}

void LookaheadSteps::begin(EventSource& source, int64_t before_first) {
    runs_.clear();
    const int64_t prompt = state_.problem->prompt_tokens;
    start(source, before_first, 1, prompt, nullptr, 0, prompt);
}

void LookaheadSteps::start(EventSource& source, int64_t k, int32_t step, int64_t context, const TicketPtr& base,
                           int64_t base_tokens, int64_t fill) {
    // Like any generation, a run stops at the target's context window.
    const int64_t room = dev_.d().target->model().context_window - context;
    const int64_t limit = std::min(source.lookahead_refine(k, step), room);
    if (limit <= 0) return;  // the answer ends before it
    Run r;
    r.step = step;
    r.context = context;
    r.live = std::make_shared<TargetRuns::RunState>();
    r.live->limit = limit;
    auto live = r.live;
    const auto bytes = static_cast<uint64_t>(base_tokens * options_.token_bytes);
    r.ticket = dev_.submit(lane(step), [=](Ticket& t) {
        GpuProxy& target = *dev_.d().target;
        ActivityLog& log = dev_.log();
        std::vector<int64_t> after;
        if (base) {
            // It builds on a drafted step: it starts once that draft is written and its
            // tokens have crossed to the target.
            await(base);
            if (t.abort.requested || base->produced < base_tokens) return;
            const Delivery in = dev_.d().fabric->send(Endpoint::draft, Endpoint::target, bytes, now_ns(),
                                                      {base->activity}, step);
            at_least_units(in.arrival_units);
            after = {in.activity};
        }
        if (!dev_.request(Role::target, target.params().request_overhead_ns, target.power().params().idle_w, step,
                          after, &t.abort)) {
            t.activity = after.empty() ? kNoActivity : after.back();
            return;
        }
        if (fill > 0) {
            // What its context adds to the target's prefix cache: the prompt, or the draft it builds on.
            const double start = now_ns();
            const bool done = dev_.gpu_prefill(target, fill, context - fill, &t.abort);
            after = {log.add(Role::target, ActivityKind::target_prefill, step, start, now_ns(), fill, after,
                             target.power().last_busy_w())};
            dev_.batched_energy(after.back(), target);
            if (!done) {
                t.activity = after.back();
                return;
            }
        }
        decode(*live, context, step, t, std::move(after));
    });
    runs_.push_back(std::move(r));
}

void LookaheadSteps::decode(TargetRuns::RunState& live, int64_t context, int32_t step, Ticket& t,
                            std::vector<int64_t> after) {
    GpuProxy& target = *dev_.d().target;
    const double start = now_ns();
    double energy_j = 0.0;
    double work_ns = 0.0;
    int64_t decoded = 0;
    auto next = [&]() {
        ++live.generated;
        ++decoded;
        return live.generated < live.limit && !t.abort.requested;
    };
    // Nobody changes a run's length under it: its tokens are certain unless it is stopped.
    // Decoding speculatively, its draws are keyed by the request and each pass's position.
    while (live.generated < live.limit && !t.abort.requested)
        dev_.gpu_batch_decode(target, context + live.generated, next, &t.abort, energy_j, work_ns,
                              live.limit - live.generated, static_cast<uint64_t>(state_.request_index));
    if (now_ns() > start) {  // an abort may cut the first token short: that time was spent too
        after = {dev_.log().add(Role::target, ActivityKind::refine, step, start, now_ns(), decoded, after,
                                target.power().last_busy_w())};
        dev_.batched_share(after.back(), energy_j, work_ns);
        live.acts.push_back(after.back());
    }
    dev_.m().target_tokens += decoded;
    t.activity = after.empty() ? kNoActivity : after.back();
    t.produced = live.generated;
}

void LookaheadSteps::start_after_drafts(EventSource& source, int64_t k) {
    int64_t context = state_.context_len();
    for (const Run& r : runs_) context = std::max(context, r.context);
    for (const StepAhead::Spec& s : ahead_.queued()) {
        if (run_of(s.step + 1) != nullptr) continue;
        const Run* before = run_of(s.step);
        const int64_t at = (before != nullptr ? before->context : context) + s.tokens;
        start(source, k, s.step + 1, at, s.ticket, s.tokens, s.tokens);
    }
}

void LookaheadSteps::on_draft(EventSource& source, int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    if (step != static_cast<int32_t>(state_.chain.size()) + 1 || e.tokens <= 0)
        throw SimulationError("trace inconsistent: draft of step " + std::to_string(step) + " after " +
                              std::to_string(state_.chain.size()) + " steps");
    const int64_t context = state_.context_len();
    if (run_of(step) == nullptr) start(source, k, step, context, nullptr, 0, 0);
    TicketPtr mine = ahead_.next(step, e.tokens);
    if (run_of(step + 1) == nullptr) start(source, k, step + 1, context + e.tokens, mine, e.tokens, e.tokens);
    ahead_.collect(mine, step, e.tokens, k);
    const Delivery drafted = dev_.d().fabric->send(Endpoint::draft, Endpoint::prm,
                                                   static_cast<uint64_t>(e.tokens * options_.token_bytes), now_ns(),
                                                   {mine->activity, state_.last_settle}, step);
    ahead_.draft_ahead(source, k, step, mine->activity);
    start_after_drafts(source, k);
    Run* own = run_of(step);
    if (own == nullptr)
        throw SimulationError("internal: the target has no run of step " + std::to_string(step) + " to compare");
    await(own->ticket);
    // The judge compares the two versions of the step: a prompt holding both, one answer token.
    const int64_t written = own->live->generated;
    const Delivery theirs = dev_.d().fabric->send(Endpoint::target, Endpoint::prm,
                                                  static_cast<uint64_t>(written * options_.token_bytes), now_ns(),
                                                  {own->ticket->activity}, step);
    state_.verdict_sent_ns = now_ns();
    const int64_t fill = options_.equivalence_prompt_tokens + e.tokens + written;
    const std::vector<int64_t> deps{drafted.activity, theirs.activity};
    TicketPtr judged = dev_.submit(dev_.d().prm_server, [this, fill, deps, step](Ticket& t) {
        GpuProxy& judge = *dev_.d().prm;
        std::vector<int64_t> after = deps;
        dev_.request(Role::prm, judge.params().request_overhead_ns, judge.power().params().idle_w, step, after);
        const double start = now_ns();
        dev_.gpu_prefill(judge, fill, 0, nullptr, true);
        t.activity = dev_.log().add(Role::prm, ActivityKind::verify, step, start, now_ns(), fill, after,
                                    judge.power().last_busy_w());
        dev_.batched_energy(t.activity, judge);
    }, std::max(drafted.arrival_units, theirs.arrival_units));
    const Delivery v = verdict_at_host(dev_, state_, options_, judged, step);
    ahead_.count_verdict();
    if (source.keep(k, e)) {
        state_.chain.push_back(ChainStep{e.tokens, k});
        command_to_draft(dev_, state_, options_, v.activity, step);
        dev_.d().draft->settle();
        dev_.d().draft->verdict(Verdict::accept);
        if (dev_.m().first_accept_units == kNoInstant) dev_.m().first_accept_units = now_units();
        // The target's version is not needed: the run built on the kept draft goes on.
        for (int64_t id : own->live->acts) dev_.product(id, -1);
        forget(step);
        return;
    }
    // Different: every draft after this step, and every run built on one, is dropped; the
    // runs are told at once.
    halt_after(step);
    const Delivery cmd = command_to_draft(dev_, state_, options_, v.activity, step);
    at_least_units(cmd.arrival_units);
    ahead_.abort();
    dev_.d().draft->verdict(Verdict::reject);
    drop_after(step);
}

void LookaheadSteps::on_refine(EventSource& source, int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    Run* own = run_of(step);
    if (step != static_cast<int32_t>(state_.chain.size()) + 1 || e.tokens <= 0 || own == nullptr)
        throw SimulationError("trace inconsistent: the target's step " + std::to_string(step) + " after " +
                              std::to_string(state_.chain.size()) + " steps, with no drafted step judged different");
    const int64_t context = state_.context_len();
    if (own->live->generated < e.tokens) {
        // A live policy asked for a longer step than the run guessed: the target writes on.
        own->live->limit = e.tokens;
        auto live = own->live;
        std::vector<int64_t> after;
        if (own->ticket->activity != kNoActivity) after.push_back(own->ticket->activity);
        own->ticket = dev_.submit(lane(step), [this, live, context, step, after](Ticket& t) {
            decode(*live, context, step, t, after);
        });
        await(own->ticket);
    }
    for (int64_t id : own->live->acts) dev_.product(id, k);
    state_.chain.push_back(ChainStep{e.tokens, k});
    if (dev_.m().first_accept_units == kNoInstant) dev_.m().first_accept_units = now_units();
    // The draft device prefills the target's step (its tokens cross first) before drafting on.
    const Delivery sent = dev_.d().fabric->send(Endpoint::target, Endpoint::draft,
                                                static_cast<uint64_t>(e.tokens * options_.token_bytes), now_ns(),
                                                {own->ticket->activity, state_.last_command}, step);
    state_.last_command = sent.activity;
    state_.command_arrival_units = std::max(state_.command_arrival_units, sent.arrival_units);
    refined_.request_accept(context + e.tokens);
    forget(step);
    // The target goes on at once from its own step, which its prefix cache holds.
    start(source, k, step + 1, context + e.tokens, nullptr, 0, 0);
}

void LookaheadSteps::forget(int32_t step) {
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(), [step](const Run& r) { return r.step == step; }),
                runs_.end());
}

void LookaheadSteps::halt_after(int32_t step) {
    // Not started: it leaves its lane at once; under way: it stops within a token.
    for (Run& r : runs_)
        if (r.step > step && !r.ticket->finished && !lane(r.step)->withdraw(r.ticket)) r.ticket->abort.request();
}

void LookaheadSteps::drop_after(int32_t step) {
    // Told first, so that none waits for another; then each has stopped before it is counted.
    halt_after(step);
    for (Run& r : runs_) {
        if (r.step <= step) continue;
        await(r.ticket);
        for (int64_t id : r.live->acts) dev_.product(id, -1);
    }
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(), [step](const Run& r) { return r.step > step; }),
                runs_.end());
}

void LookaheadSteps::stop() { drop_after(0); }

void LookaheadSteps::drain() {
    for (DeviceServer* lane : dev_.d().target_lanes) lane->drain(slot_);
}

}  // namespace cosim
