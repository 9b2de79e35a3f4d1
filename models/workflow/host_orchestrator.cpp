#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "host_messages.hpp"
#include "live_decisions.hpp"
#include "trace_replay.hpp"

namespace cosim {

HostOrchestrator::HostOrchestrator(sc_core::sc_module_name name, const WorkflowOptions& options,
                                   const WorkflowDevices& devices, ActivityLog& log, RequestDispatcher& dispatcher,
                                   int slot)
    : sc_core::sc_module(name),
      options_(options),
      dev_(devices, log, slot),
      d_(dev_.d()),
      log_(log),
      runs_(options_, dev_, state_),
      ahead_(options_, dev_, state_, [this] { runs_.accept_if_written(); }),
      dispatcher_(dispatcher),
      slot_(slot),
      source_(std::make_unique<TraceReplay>()) {
    if (options_.lookahead)
        lookahead_ = std::make_unique<LookaheadSteps>(options_, dev_, state_, ahead_, runs_, slot);
    SC_HAS_PROCESS(HostOrchestrator);
    SC_THREAD(run);
}

void HostOrchestrator::run() {
    try {
        // The host programs the draft device's step-ahead depth before its first command.
        d_.draft->set_depth(options_.sequential ? 0 : options_.step_ahead_depth);
        Request request;
        while (dispatcher_.next(slot_, request)) {
            run_problem(request);
            request = Request{};  // the chunk's events are not held past their problem
        }
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

int64_t HostOrchestrator::speculative_length(int64_t k, int32_t step) {
    // A run ahead of the trace has the length the trace suggests, and like any generation
    // it stops at the target's context window.
    const int64_t room = d_.target->model().context_window - state_.context_len();
    return std::min(source_->lookahead_refine(k, step), room);
}

void HostOrchestrator::prompt_prefills() {
    // Without a prefix cache the PRM rescores the whole context at every step,
    // so prefilling the prompt early would buy nothing.
    const int64_t prompt = state_.problem->prompt_tokens;
    for (auto [server, gpu, role] : {std::tuple{d_.prm_server, d_.prm, Role::prm},
                                     std::tuple{d_.target_server, d_.target, Role::target}}) {
        if (role == Role::prm && !options_.prm_prefix_cache) continue;
        if (role == Role::target && lookahead_) continue;  // its first run prefills the prompt
        dev_.submit(server, [=](Ticket& t) {
            std::vector<int64_t> after;
            dev_.request(role, gpu->params().request_overhead_ns, gpu->power().params().idle_w, 0, after);
            const double start = now_ns();
            dev_.gpu_prefill(*gpu, prompt, 0);
            t.activity = log_.add(role, ActivityKind::prompt_prefill, 0, start, now_ns(), prompt, after,
                                  gpu->power().last_busy_w());
            dev_.batched_energy(t.activity, *gpu);
        });
    }
}

void HostOrchestrator::phase1() {
    const int64_t prompt = state_.problem->prompt_tokens;
    const bool eager = !options_.sequential;
    DraftUnit& draft = *d_.draft;
    if (draft.on_fpga() && d_.draft_on_target) {
        // A GPU prefills the prompt for the draft model; its KV migrates to HBM.
        GpuProxy* helper = d_.draft_on_target;
        TicketPtr mig = dev_.submit(d_.target_server, [=](Ticket& t) {
            std::vector<int64_t> after;
            dev_.request(Role::target, helper->params().request_overhead_ns, helper->power().params().idle_w, 0, after);
            const double start = now_ns();
            dev_.gpu_prefill(*helper, prompt, 0);
            t.activity = log_.add(Role::target, ActivityKind::migrate, 0, start, now_ns(), prompt, after,
                                  helper->power().last_busy_w());
            dev_.batched_energy(t.activity, *helper);
        });
        if (eager) prompt_prefills();
        await(mig);
        const auto kv_bytes = static_cast<uint64_t>(static_cast<double>(prompt) * draft.kv_bytes_per_token());
        const Delivery kv = d_.fabric->send(Endpoint::target, Endpoint::draft, kv_bytes, now_ns(), {mig->activity}, 0);
        // The FPGA's side of the last leg starts with it, so what released the leg released it too:
        // the critical path runs on through the legs before it.
        const int64_t leg_cause = log_.at(kv.activity).cause;
        dev_.submit(d_.draft_server, [=](Ticket& t) {
            // The FPGA does nothing but take in the prompt's KV: it draws its transfer power.
            const double start = now_ns();
            Power& power = d_.draft->power();
            power.set_state(PowerState::transfer);
            at_least_units(kv.arrival_units);
            power.set_state(PowerState::idle);
            t.activity = log_.add(Role::draft, ActivityKind::kv_load, 0, start, now_ns(), prompt,
                                  {kv.activity, leg_cause}, power.params().transfer_w);
            d_.draft->load(prompt);
        }, kv.start_units);
        state_.last_command = kv.activity;
    } else {
        dev_.submit(d_.draft_server, [=](Ticket& t) {
            DraftUnit& unit = *d_.draft;
            std::vector<int64_t> after;
            dev_.request(Role::draft, unit.request_overhead_ns(), unit.power().params().idle_w, 0, after);
            const double start = now_ns();
            unit.prefill_prompt(prompt);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, 0, start, now_ns(), prompt, after,
                                  unit.power().params().prefill_w);
            if (unit.batched()) dev_.batched_share(t.activity, unit.last_energy_j(), unit.last_work_ns());
        });
        if (eager) prompt_prefills();
    }
    state_.prm_cached = eager && options_.prm_prefix_cache ? prompt : 0;
    state_.target_cached = eager ? prompt : 0;
    if (lookahead_) {
        lookahead_->begin(*source_, state_.problem->first_event - 1);
    } else if (options_.step_ahead && !options_.sequential) {
        const int64_t first = state_.problem->first_event - 1;
        const int64_t limit = speculative_length(first, 1);
        if (limit > 0) runs_.run() = runs_.start(1, limit, {});
    }
}

void HostOrchestrator::on_draft(int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    if (step != static_cast<int32_t>(state_.chain.size()) + 1 || e.tokens <= 0)
        throw SimulationError("trace inconsistent: draft of step " + std::to_string(step) + " after " +
                              std::to_string(state_.chain.size()) + " steps");
    TicketPtr mine = ahead_.next(step, e.tokens);
    ahead_.collect(mine, step, e.tokens, k);
    const double now = now_ns();
    const int64_t context = state_.context_len();
    const Delivery tokens = d_.fabric->send(Endpoint::draft, Endpoint::prm,
                                            static_cast<uint64_t>(e.tokens * options_.token_bytes), now,
                                            {mine->activity, state_.last_settle}, step);
    state_.verdict_sent_ns = now_ns();
    TicketPtr score = verify(context, e.tokens, tokens.arrival_units, {tokens.activity}, step);
    ahead_.draft_ahead(*source_, k, step, mine->activity);
    const Delivery v = verdict(score, step);
    ahead_.count_verdict();
    if (keep(k, e)) {
        state_.chain.push_back(ChainStep{e.tokens, k});
        command_to_draft(v.activity, step);  // the pointer update needs no wait
        d_.draft->settle();                  // a step-ahead draft's tokens done so far are in the KV cache
        d_.draft->verdict(Verdict::accept);
        settled(k, step, v.activity);
        return;
    }
    state_.prm_cached = std::min(state_.prm_cached, context);
    // A rejected step leaves the KV cache of a target that scored it.
    if (options_.verifier_is_target) state_.target_cached = std::min(state_.target_cached, context);
    const Delivery cmd = command_to_draft(v.activity, step);
    at_least_units(cmd.arrival_units);
    ahead_.abort();
    d_.draft->verdict(Verdict::reject);
    state_.last_command = cmd.activity;
}

void HostOrchestrator::settled(int64_t k, int32_t step, int64_t cause) {
    state_.last_settle = cause;
    // The host keeps a step now: the accepting verdict (or the kept refinement) is here.
    if (dev_.m().first_accept_units == kNoInstant) dev_.m().first_accept_units = now_units();
    if (!options_.step_ahead || options_.sequential) return;
    const TargetRuns::Run& run = runs_.run();
    if (run.ticket && run.step == step + 1 && run.key == state_.chain_events()) return;  // started after a refinement
    runs_.stop();
    const int64_t limit = speculative_length(k, step + 1);
    if (limit > 0) runs_.run() = runs_.start(step + 1, limit, {cause});
}

void HostOrchestrator::on_refine(int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    const int64_t tokens = e.tokens;
    if (step != static_cast<int32_t>(state_.chain.size()) + 1 || tokens <= 0)
        throw SimulationError("trace inconsistent: refine of step " + std::to_string(step) + " after " +
                              std::to_string(state_.chain.size()) + " steps");
    TargetRuns::Run& current = runs_.run();
    if (current.ticket && current.step == step && current.key == state_.chain_events()) {
        // Step-ahead refinement: the run already under way is the refinement.
        if (current.live->limit != tokens) {
            current.live->limit = tokens;
            current.live->retune.notify(sc_core::SC_ZERO_TIME);
        }
        if (current.ticket->finished && current.live->generated < tokens) {
            // It stopped at its guessed length: it decodes on from where it was.
            current.ticket = runs_.decode_job(current, {current.ticket->activity}, now_units(), false);
        }
    } else {
        runs_.stop();
        runs_.run() = runs_.start(step, tokens, {state_.last_command, state_.last_settle});
    }
    TargetRuns::Run run = runs_.run();
    if (options_.shadow_sync && !options_.sequential) runs_.stream_to_draft(run, tokens, k);
    await(run.ticket);
    for (int64_t id : run.live->acts) dev_.product(id, k);
    dev_.accounting().reused(run.reused_from, run.reused_share, k);
    runs_.run() = TargetRuns::Run{};
    state_.target_cached = run.context + tokens;
    if (!options_.shadow_sync && !options_.sequential) {
        // Vanilla: the draft device prefills the refined step locally afterwards.
        const Delivery d = d_.fabric->send(Endpoint::target, Endpoint::draft,
                                           static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                           {run.ticket->activity}, step);
        dev_.submit(d_.draft_server, [=](Ticket& t) {
            DraftUnit& draft = *d_.draft;
            const double start = now_ns();
            draft.prefill(tokens);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), tokens,
                                  {d.activity}, draft.power().params().prefill_w);
            if (draft.batched()) dev_.batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
            dev_.product(t.activity, k);
            runs_.accept_if_written();
        }, d.arrival_units);
    }
    const int64_t context = state_.context_len();
    if (!e.scored) {
        state_.chain.push_back(ChainStep{tokens, k});
        runs_.request_accept(context + tokens);
        settled(k, step, run.ticket->activity);
        return;
    }
    if (options_.target_ahead_after_refine && options_.step_ahead && !options_.sequential) {
        // The current step is complete: the target goes on to the next at once, from the
        // context that keeps its refinement, without waiting for the refinement's verdict.
        state_.chain.push_back(ChainStep{tokens, k});
        const int64_t limit = speculative_length(k, step + 1);
        if (limit > 0) runs_.run() = runs_.start(step + 1, limit, {run.ticket->activity});
        state_.chain.pop_back();
    }
    const Delivery sent = d_.fabric->send(Endpoint::target, Endpoint::prm,
                                          static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                          {run.ticket->activity, state_.last_command}, step);
    state_.verdict_sent_ns = now_ns();
    TicketPtr score = verify(context, tokens, sent.arrival_units, {sent.activity}, step);
    ahead_.draft_ahead(*source_, k, step, run.ticket->activity);
    const Delivery v = verdict(score, step);
    ahead_.count_verdict();
    if (keep(k, e)) {
        state_.chain.push_back(ChainStep{tokens, k});
        command_to_draft(v.activity, step);
        runs_.request_accept(context + tokens);
        settled(k, step, v.activity);
    } else {
        state_.prm_cached = std::min(state_.prm_cached, context);
    }
}

void HostOrchestrator::on_backtrack(int64_t, const TraceEvent& e) {
    dev_.m().backtracks += 1;
    if (state_.chain.empty()) throw SimulationError("trace inconsistent: a backtrack with no step to revert");
    runs_.stop();  // a run started ahead of the failed refinement's verdict builds on a reverted context
    const Delivery cmd = command_to_draft(state_.last_settle, e.step);
    at_least_units(cmd.arrival_units);
    // Syncs of the failed refinement and a step-ahead draft still queued are dropped
    // before anything is waited for; the job running now stops at once or within a token.
    runs_.cut_streams();
    d_.draft_server->cancel_pending(slot_);
    ahead_.abort();
    d_.draft_server->drain(slot_);
    runs_.clear_streams();
    runs_.drop_accept();
    state_.chain.pop_back();
    const int64_t position = state_.context_len();
    d_.draft->verdict(Verdict::backtrack, position);
    state_.prm_cached = std::min(state_.prm_cached, position);
    state_.target_cached = std::min(state_.target_cached, position);
    state_.last_command = cmd.activity;
}

void HostOrchestrator::run_problem(const Request& request) {
    state_.problem = request.problem;
    const auto index = static_cast<int32_t>(request.index);
    state_.request_index = request.index;
    log_.begin_problem(index);
    state_.chain.clear();
    runs_.begin();
    ahead_.begin();
    state_.last_settle = state_.last_command = kNoActivity;
    state_.command_arrival_units = 0;
    state_.prm_cached = state_.target_cached = 0;
    dev_.accounting().begin(now_units(), dev_.energies());
    ProblemMetrics& pm = dev_.m();
    pm.request = request.index;
    pm.arrival_units = request.arrival_units;
    pm.slot = slot_;
    for (int r = 0; r < 3; ++r) pm.devices[r] = d_.index[static_cast<size_t>(r)];

    const int64_t first = source_->begin(*request.chunk, *state_.problem);
    phase1();
    // Live, each event is made when it is due (after phase 1), from the policy's answers.
    for (int64_t k = first;; ++k) {
        const TraceEvent* e = source_->event(k);
        if (e == nullptr) break;
        handle(k, *e, index);
    }
    finish_problem();
}

void HostOrchestrator::handle(int64_t k, const TraceEvent& e, int32_t index) {
    if (on_step_) on_step_(index, e.step);
    if (lookahead_) {
        if (e.kind == EventKind::backtrack)
            throw SimulationError("trace inconsistent: Lookahead Reasoning never backtracks (a forward-only trace)");
        if (e.kind == EventKind::draft) lookahead_->on_draft(*source_, k, e);
        else lookahead_->on_refine(*source_, k, e);
        return;
    }
    switch (e.kind) {
        case EventKind::draft: on_draft(k, e); break;
        case EventKind::refine: on_refine(k, e); break;
        case EventKind::backtrack: on_backtrack(k, e); break;
    }
}

void HostOrchestrator::finish_problem() {
    const uint64_t end = now_units();
    // Work left over once the answer is settled (trailing shadow syncs, a step-ahead
    // run) is dropped; aborts take effect at this same instant.
    runs_.cut_streams();
    d_.draft_server->cancel_pending(slot_);
    ahead_.abort();
    runs_.stop();
    if (lookahead_) lookahead_->stop();
    ProblemMetrics done = dev_.accounting().finish(log_, end, state_.chain_events(), state_.last_settle,
                                                   dev_.energies(), d_.shared);
    // Work already running when the answer settled finishes (and is logged) before the next
    // problem; the request's row is complete, and its slot free, once it has.
    d_.draft_server->drain(slot_);
    d_.prm_server->drain(slot_);
    d_.target_server->drain(slot_);
    if (lookahead_) lookahead_->drain();
    runs_.clear_streams();
    ProblemAccounting::add_work(log_, done);
    dispatcher_.finished(done);
    if (options_.keep_activities) {
        std::vector<Activity>& kept = dispatcher_.kept();
        kept.insert(kept.end(), log_.activities().begin(), log_.activities().end());
    }
}

TicketPtr HostOrchestrator::verify(int64_t context, int64_t tokens, uint64_t ready_units, std::vector<int64_t> deps,
                                   int32_t step) {
    int64_t fill = context + tokens;
    int64_t at = 0;
    Role role = Role::prm;
    if (options_.verifier_is_target) {
        // SpecReason: the target prefills what it has not seen, the step and the scoring
        // prompt, and reads its score token from the last position. The step stays in its
        // KV cache (a kept step needs no catch-up); the prompt's KV is dropped.
        at = std::min(state_.target_cached, context + tokens);
        fill = context + tokens - at + options_.judge_prompt_tokens;
        state_.target_cached = context + tokens;
        role = Role::target;
    } else if (options_.prm_prefix_cache) {
        fill = context - state_.prm_cached + tokens;
        at = state_.prm_cached;
    }
    state_.prm_cached = context + tokens;
    return dev_.submit(d_.prm_server, [=](Ticket& t) {
        GpuProxy& prm = *d_.prm;
        std::vector<int64_t> after = deps;
        dev_.request(role, prm.params().request_overhead_ns, prm.power().params().idle_w, step, after);
        const double start = now_ns();
        dev_.gpu_prefill(prm, fill, at, nullptr, true);
        t.activity = log_.add(role, ActivityKind::verify, step, start, now_ns(), fill, after,
                              prm.power().last_busy_w());
        dev_.batched_energy(t.activity, prm);
    }, ready_units);
}

Delivery HostOrchestrator::verdict(const TicketPtr& scored, int32_t step) {
    return verdict_at_host(dev_, state_, options_, scored, step);
}

Delivery HostOrchestrator::command_to_draft(int64_t cause, int32_t step) {
    return cosim::command_to_draft(dev_, state_, options_, cause, step);
}

void HostOrchestrator::fill(Decision& d, DecisionKind kind, int32_t step) const {
    d.kind = kind;
    d.slot = slot_;
    d.request = state_.request_index;
    d.step = step;
    d.time_ns = now_ns();
    d.chain.clear();
    for (const ChainStep& s : state_.chain) d.chain.push_back(s.tokens);
    d.backtracks = dev_.accounting().metrics_view().backtracks;
    d.kvmu = d_.draft->kvmu().pointers();
    d.states = {d_.draft->power().state(), d_.prm->power().state(), d_.target->power().state()};
}

void HostOrchestrator::set_decisions(DecisionBroker* broker, int32_t max_backtracks, bool scored_refinements) {
    HostState host;
    host.describe = [this](Decision& d, DecisionKind kind, int32_t step) { fill(d, kind, step); };
    host.steps_kept = [this] { return static_cast<int32_t>(state_.chain.size()); };
    host.drafted_ahead = [this](int32_t step) -> int64_t {
        return ahead_.drafted(step);
    };
    host.verdict_waited_ns = [this] { return now_ns() - state_.verdict_sent_ns; };
    source_ = std::make_unique<LiveDecisions>(*broker, max_backtracks, scored_refinements, std::move(host));
}
}  // namespace cosim
