#include "sim_time.hpp"
#include "step_ahead.hpp"

#include <algorithm>
#include <string>

#include "errors.hpp"

namespace cosim {

namespace {
// Mixed into a request's key for its draft's token-level draws, so that they are not its
// target's (a run's draws are keyed by the key and the round's position).
constexpr uint64_t kDraftDrawsSalt = 0x9E3779B97F4A7C15ULL;
}  // namespace

TicketPtr StepAhead::next(int32_t step, int64_t tokens) {
    if (specs_.empty()) {
        // Drafted now: it starts once the last command (a verdict's pointer update) has arrived.
        specs_.push_back(Spec{submit_draft(step, tokens, {state_.last_settle, state_.last_command},
                                           state_.command_arrival_units),
                              step, tokens});
    }
    if (specs_.front().step != step)
        throw SimulationError("internal: the draft device holds step " + std::to_string(specs_.front().step) +
                              " where the trace drafts step " + std::to_string(step));
    return specs_.front().ticket;
}

void StepAhead::taken() {
    count_stall();
    specs_.pop_front();
}

void StepAhead::collect(const TicketPtr& mine, int32_t step, int64_t tokens, int64_t k) {
    await(mine);
    if (mine->produced != tokens)
        throw SimulationError("internal: step " + std::to_string(step) + " drafted " +
                              std::to_string(mine->produced) + " of " + std::to_string(tokens) + " tokens");
    dev_.product(mine->activity, k);
    taken();
}

TicketPtr StepAhead::submit_draft(int32_t step, int64_t tokens, std::vector<int64_t> deps, uint64_t ready_units) {
    const int64_t context = state_.context_len();
    const int64_t last_product = state_.chain.empty() ? -1 : state_.chain.back().product;
    // A speculatively decoding draft GPU's draws: the request's, apart from its target's.
    const uint64_t key = static_cast<uint64_t>(state_.request_index) ^ kDraftDrawsSalt;
    return dev_.submit(dev_.d().draft_server, [this, step, tokens, deps, context, last_product, key](Ticket& t) {
        DraftUnit& draft = *dev_.d().draft;
        ActivityLog& log = dev_.log();
        std::vector<int64_t> after = deps;
        const int64_t gap = context - draft.position();
        if (gap > 0 && !t.abort.requested) {
            // The draft's cache lacks context the target wrote: a prefix-cache refill.
            const double start = now_ns();
            draft.prefill(gap);
            const int64_t id = log.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), gap, after,
                                       draft.power().params().prefill_w);
            if (draft.batched()) dev_.batched_share(id, draft.last_energy_j(), draft.last_work_ns());
            t.above_idle_j += dev_.above_idle_j(id, draft.power().params().idle_w);
            dev_.product(id, last_product);
            after = {id};
            written_();
        }
        if (!dev_.request(Role::draft, draft.request_overhead_ns(), draft.power().params().idle_w, step, after,
                          &t.abort)) {
            t.activity = after.back();
            return;
        }
        const double start = now_ns();
        t.produced = draft.draft(tokens, &t.abort, key);
        t.activity = log.add(Role::draft, ActivityKind::draft, step, start, now_ns(), t.produced, after,
                             draft.power().params().decode_w);
        if (draft.batched()) dev_.batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
        t.above_idle_j += dev_.above_idle_j(t.activity, draft.power().params().idle_w);
        dev_.m().drafted_tokens += t.produced;
    }, ready_units);
}

void StepAhead::count_stall() {
    // The draft device idles from the end of its last step-ahead draft, if every step it
    // drafted ahead is finished: it may draft no further before a verdict.
    if (specs_.empty()) return;
    const Spec& last = specs_.back();
    const double now = now_ns();
    const double from = std::max(last.ticket->end_ns, stall_counted_ns_);
    if (!last.ticket->finished || last.ticket->produced == 0 || now <= from + kTimeEpsilonNs) return;
    dev_.log().add(Role::draft, ActivityKind::stall, last.step, from, now, 0, {},
                   dev_.d().draft->power().params().idle_w);
    dev_.m().stall_ns += now - from;
    stall_counted_ns_ = now;
}

void StepAhead::count_verdict() {
    dev_.m().verdicts += 1;
    if (specs_.empty()) return;
    const TicketPtr& last = specs_.back().ticket;
    if (last->finished && last->produced > 0 && now_ns() > last->end_ns + kTimeEpsilonNs)
        dev_.m().stalled_verdicts += 1;
}

void StepAhead::abort() {
    if (specs_.empty()) return;
    count_stall();
    // Those not started leave the queue; all others are told first, so that a step queued
    // behind another never starts.
    DeviceServer& server = *dev_.d().draft_server;
    for (const Spec& s : specs_)
        if (!server.withdraw(s.ticket)) s.ticket->abort.request();
    for (const Spec& s : specs_) {
        await(s.ticket);
        dev_.product(s.ticket->activity, -1);
        dev_.m().discarded_step_ahead_tokens += s.ticket->produced;
        dev_.m().stepahead_waste_j += s.ticket->above_idle_j;
    }
    specs_.clear();
}

void StepAhead::draft_ahead(EventSource& source, int64_t k, int32_t step, int64_t after) {
    if (options_.sequential) return;
    while (static_cast<int32_t>(specs_.size()) < options_.step_ahead_depth) {
        const int32_t next = specs_.empty() ? step + 1 : specs_.back().step + 1;
        const int64_t tokens = source.lookahead_draft(k, next);
        if (tokens <= 0) return;  // the answer ends before it
        specs_.push_back(Spec{submit_draft(next, tokens, {after}), next, tokens});
    }
}

}  // namespace cosim
