#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"
#include "trace_replay.hpp"

namespace cosim {

HostOrchestrator::HostOrchestrator(sc_core::sc_module_name name, const WorkflowOptions& options,
                                   const WorkflowDevices& devices, ActivityLog& log, RequestDispatcher& dispatcher,
                                   int slot)
    : sc_core::sc_module(name),
      prm_port("prm_port"),
      target_port("target_port"),
      helper_port("helper_port"),
      options_(options),
      d_(devices),
      log_(log),
      dispatcher_(dispatcher),
      slot_(slot),
      source_(std::make_unique<TraceReplay>()) {
    SC_HAS_PROCESS(HostOrchestrator);
    SC_THREAD(run);
    auto bind = [](auto& port, GpuProxy* gpu, PcieLink* link) {
        if (gpu == nullptr) return;
        if (link != nullptr) port.bind(link->upstream);
        else port.bind(gpu->host);
    };
    bind(prm_port, d_.prm, d_.prm_link);
    bind(target_port, d_.target, d_.target_link);
    bind(helper_port, d_.draft_on_target, d_.target_link);
}

tlm_utils::simple_initiator_socket_optional<HostOrchestrator>& HostOrchestrator::port_to(const GpuProxy& gpu) {
    if (&gpu == d_.prm) return prm_port;
    if (&gpu == d_.target) return target_port;
    if (&gpu == d_.draft_on_target) return helper_port;
    throw SimulationError(std::string(name()) + ": internal: " + gpu.name() + " is not one of this slot's GPUs");
}

uint64_t HostOrchestrator::route_to(const GpuProxy& gpu) const {
    if (&gpu == d_.prm) return d_.prm_route;
    if (&gpu == d_.target) return d_.target_route;
    return d_.helper_route;
}

bool HostOrchestrator::gpu_prefill(GpuProxy& gpu, int64_t tokens, int64_t context, AbortSignal* abort, bool score) {
    DeviceCommand c;
    c.context = context;
    c.abort = abort;
    send_command(port_to(gpu), score ? DeviceOp::gpu_score : DeviceOp::gpu_prefill, tokens, c, route_to(gpu));
    return c.ok;
}

int64_t HostOrchestrator::gpu_batch_decode(GpuProxy& gpu, int64_t context, std::function<bool()> next,
                                           AbortSignal* abort, double& energy_j, double& work_ns) {
    DeviceCommand c;
    c.context = context;
    c.abort = abort;
    c.next = std::move(next);
    send_command(port_to(gpu), DeviceOp::gpu_batch_decode, 1, c, route_to(gpu));
    energy_j += c.energy_j;
    work_ns += c.work_ns;
    return c.produced;
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
    const int64_t room = d_.target->model().context_window - context_len();
    return std::min(lookahead_refine(k, step), room);
}

// ---- bookkeeping ------------------------------------------------------------------------------

int64_t HostOrchestrator::context_len() const {
    int64_t total = problem_->prompt_tokens;
    for (const ChainStep& s : chain_) total += s.tokens;
    return total;
}

std::vector<int64_t> HostOrchestrator::chain_key() const { return chain_events(); }

std::array<double, 3> HostOrchestrator::energies() const {
    return {d_.draft->power().energy_j(), d_.prm->power().energy_j(), d_.target->power().energy_j()};
}

std::vector<int64_t> HostOrchestrator::chain_events() const {
    std::vector<int64_t> events;
    events.reserve(chain_.size());
    for (const ChainStep& s : chain_) events.push_back(s.product);
    return events;
}

int64_t HostOrchestrator::lookahead_draft(int64_t k, int32_t step) { return source_->lookahead_draft(k, step); }

int64_t HostOrchestrator::lookahead_refine(int64_t k, int32_t step) { return source_->lookahead_refine(k, step); }

// ---- the workflow -----------------------------------------------------------------------------

void HostOrchestrator::prompt_prefills() {
    // Without a prefix cache the PRM rescores the whole context at every step,
    // so prefilling the prompt early would buy nothing.
    const int64_t prompt = problem_->prompt_tokens;
    for (auto [server, gpu, role] : {std::tuple{d_.prm_server, d_.prm, Role::prm},
                                     std::tuple{d_.target_server, d_.target, Role::target}}) {
        if (role == Role::prm && !options_.prm_prefix_cache) continue;
        submit(server, [=](Ticket& t) {
            std::vector<int64_t> after;
            request(role, gpu->params().request_overhead_ns, gpu->power().params().idle_w, 0, after);
            const double start = now_ns();
            gpu_prefill(*gpu, prompt, 0);
            t.activity = log_.add(role, ActivityKind::prompt_prefill, 0, start, now_ns(), prompt, after,
                                  gpu->power().params().prefill_w);
            batched_energy(t.activity, *gpu);
        });
    }
}

void HostOrchestrator::phase1() {
    const int64_t prompt = problem_->prompt_tokens;
    const bool eager = !options_.sequential;
    DraftUnit& draft = *d_.draft;
    if (draft.on_fpga() && d_.draft_on_target) {
        // A GPU prefills the prompt for the draft model; its KV migrates to HBM.
        GpuProxy* helper = d_.draft_on_target;
        TicketPtr mig = submit(d_.target_server, [=](Ticket& t) {
            std::vector<int64_t> after;
            request(Role::target, helper->params().request_overhead_ns, helper->power().params().idle_w, 0, after);
            const double start = now_ns();
            gpu_prefill(*helper, prompt, 0);
            t.activity = log_.add(Role::target, ActivityKind::migrate, 0, start, now_ns(), prompt, after,
                                  helper->power().params().prefill_w);
            batched_energy(t.activity, *helper);
        });
        if (eager) prompt_prefills();
        await(mig);
        const auto kv_bytes = static_cast<uint64_t>(static_cast<double>(prompt) * draft.kv_bytes_per_token());
        const Delivery kv = d_.fabric->send(Endpoint::target, Endpoint::draft, kv_bytes, now_ns(), {mig->activity}, 0);
        // The FPGA's side of the last leg starts with it, so what released the leg released it too:
        // the critical path runs on through the legs before it.
        const int64_t leg_cause = log_.at(kv.activity).cause;
        submit(d_.draft_server, [=](Ticket& t) {
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
        last_command_ = kv.activity;
    } else {
        submit(d_.draft_server, [=](Ticket& t) {
            DraftUnit& unit = *d_.draft;
            std::vector<int64_t> after;
            request(Role::draft, unit.request_overhead_ns(), unit.power().params().idle_w, 0, after);
            const double start = now_ns();
            unit.prefill_prompt(prompt);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, 0, start, now_ns(), prompt, after,
                                  unit.power().params().prefill_w);
            if (unit.batched()) batched_share(t.activity, unit.last_energy_j(), unit.last_work_ns());
        });
        if (eager) prompt_prefills();
    }
    prm_cached_ = eager && options_.prm_prefix_cache ? prompt : 0;
    target_cached_ = eager ? prompt : 0;
    if (options_.step_ahead && !options_.sequential) {
        const int64_t first = problem_->first_event - 1;
        const int64_t limit = speculative_length(first, 1);
        if (limit > 0) run_ = start_run(1, limit, {});
    }
}

void HostOrchestrator::on_draft(int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    if (step != static_cast<int32_t>(chain_.size()) + 1 || e.tokens <= 0)
        throw SimulationError("trace inconsistent: draft of step " + std::to_string(step) + " after " +
                              std::to_string(chain_.size()) + " steps");
    if (specs_.empty()) {
        // Drafted now: it starts once the last command (a verdict's pointer update) has arrived.
        specs_.push_back(Spec{submit_draft(step, e.tokens, {last_settle_, last_command_}, command_arrival_units_),
                              step, e.tokens});
    }
    if (specs_.front().step != step)
        throw SimulationError("internal: the draft device holds step " + std::to_string(specs_.front().step) +
                              " where the trace drafts step " + std::to_string(step));
    TicketPtr mine = specs_.front().ticket;
    await(mine);
    if (mine->produced != e.tokens)
        throw SimulationError("internal: step " + std::to_string(step) + " drafted " +
                              std::to_string(mine->produced) + " of " + std::to_string(e.tokens) + " tokens");
    product(mine->activity, k);
    count_stall();
    specs_.pop_front();
    const double now = now_ns();
    const int64_t context = context_len();
    const Delivery tokens = d_.fabric->send(Endpoint::draft, Endpoint::prm,
                                            static_cast<uint64_t>(e.tokens * options_.token_bytes), now,
                                            {mine->activity, last_settle_}, step);
    verdict_sent_ns_ = now_ns();
    TicketPtr score = verify(context, e.tokens, tokens.arrival_units, {tokens.activity}, step);
    draft_ahead(k, step, mine->activity);
    const Delivery v = verdict(score, step);
    count_verdict();
    if (keep(k, e)) {
        chain_.push_back(ChainStep{e.tokens, k});
        command_to_draft(v.activity, step);  // the pointer update needs no wait
        d_.draft->settle();                  // a step-ahead draft's tokens done so far are in the KV cache
        d_.draft->verdict(Verdict::accept);
        settled(k, step, v.activity);
        return;
    }
    prm_cached_ = std::min(prm_cached_, context);
    const Delivery cmd = command_to_draft(v.activity, step);
    at_least_units(cmd.arrival_units);
    abort_spec();
    d_.draft->verdict(Verdict::reject);
    last_command_ = cmd.activity;
}

void HostOrchestrator::settled(int64_t k, int32_t step, int64_t cause) {
    last_settle_ = cause;
    // The host keeps a step now: the accepting verdict (or the kept refinement) is here.
    if (m().first_accept_units == kNoInstant) m().first_accept_units = now_units();
    if (!options_.step_ahead || options_.sequential) return;
    if (run_.ticket && run_.step == step + 1 && run_.key == chain_key()) return;  // started after a refinement
    stop_run();
    const int64_t limit = speculative_length(k, step + 1);
    if (limit > 0) run_ = start_run(step + 1, limit, {cause});
}

void HostOrchestrator::on_refine(int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    const int64_t tokens = e.tokens;
    if (step != static_cast<int32_t>(chain_.size()) + 1 || tokens <= 0)
        throw SimulationError("trace inconsistent: refine of step " + std::to_string(step) + " after " +
                              std::to_string(chain_.size()) + " steps");
    if (run_.ticket && run_.step == step && run_.key == chain_key()) {
        // Step-ahead refinement: the run already under way is the refinement.
        if (run_.live->limit != tokens) {
            run_.live->limit = tokens;
            run_.live->retune.notify(sc_core::SC_ZERO_TIME);
        }
        if (run_.ticket->finished && run_.live->generated < tokens) {
            // It stopped at its guessed length: it decodes on from where it was.
            run_.ticket = decode_job(run_, {run_.ticket->activity}, now_units(), false);
        }
    } else {
        stop_run();
        run_ = start_run(step, tokens, {last_command_, last_settle_});
    }
    Run run = run_;
    if (options_.shadow_sync && !options_.sequential) stream_to_draft(run, tokens, k);
    await(run.ticket);
    for (int64_t id : run.live->acts) product(id, k);
    acct_.reused(run.reused_from, run.reused_share, k);
    run_ = Run{};
    target_cached_ = run.context + tokens;
    if (!options_.shadow_sync && !options_.sequential) {
        // Vanilla: the draft device prefills the refined step locally afterwards.
        const Delivery d = d_.fabric->send(Endpoint::target, Endpoint::draft,
                                           static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                           {run.ticket->activity}, step);
        submit(d_.draft_server, [=](Ticket& t) {
            DraftUnit& draft = *d_.draft;
            const double start = now_ns();
            draft.prefill(tokens);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), tokens,
                                  {d.activity}, draft.power().params().prefill_w);
            if (draft.batched()) batched_share(t.activity, draft.last_energy_j(), draft.last_work_ns());
            product(t.activity, k);
            accept_if_written();
        }, d.arrival_units);
    }
    const int64_t context = context_len();
    if (!e.scored) {
        chain_.push_back(ChainStep{tokens, k});
        request_accept(context + tokens);
        settled(k, step, run.ticket->activity);
        return;
    }
    if (options_.target_ahead_after_refine && options_.step_ahead && !options_.sequential) {
        // The current step is complete: the target goes on to the next at once, from the
        // context that keeps its refinement, without waiting for the refinement's verdict.
        chain_.push_back(ChainStep{tokens, k});
        const int64_t limit = speculative_length(k, step + 1);
        if (limit > 0) run_ = start_run(step + 1, limit, {run.ticket->activity});
        chain_.pop_back();
    }
    const Delivery sent = d_.fabric->send(Endpoint::target, Endpoint::prm,
                                          static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                          {run.ticket->activity, last_command_}, step);
    verdict_sent_ns_ = now_ns();
    TicketPtr score = verify(context, tokens, sent.arrival_units, {sent.activity}, step);
    draft_ahead(k, step, run.ticket->activity);
    const Delivery v = verdict(score, step);
    count_verdict();
    if (keep(k, e)) {
        chain_.push_back(ChainStep{tokens, k});
        command_to_draft(v.activity, step);
        request_accept(context + tokens);
        settled(k, step, v.activity);
    } else {
        prm_cached_ = std::min(prm_cached_, context);
    }
}

void HostOrchestrator::on_backtrack(int64_t, const TraceEvent& e) {
    m().backtracks += 1;
    if (chain_.empty()) throw SimulationError("trace inconsistent: a backtrack with no step to revert");
    stop_run();  // a run started ahead of the failed refinement's verdict builds on a reverted context
    const Delivery cmd = command_to_draft(last_settle_, e.step);
    at_least_units(cmd.arrival_units);
    // Syncs of the failed refinement and a step-ahead draft still queued are dropped
    // before anything is waited for; the job running now stops at once or within a token.
    cut_streams();
    d_.draft_server->cancel_pending(slot_);
    abort_spec();
    d_.draft_server->drain(slot_);
    streams_.clear();
    accept_pending_ = -1;
    chain_.pop_back();
    const int64_t position = context_len();
    d_.draft->verdict(Verdict::backtrack, position);
    prm_cached_ = std::min(prm_cached_, position);
    target_cached_ = std::min(target_cached_, position);
    last_command_ = cmd.activity;
}

void HostOrchestrator::run_problem(const Request& request) {
    problem_ = request.problem;
    const auto index = static_cast<int32_t>(request.index);
    request_index_ = request.index;
    log_.begin_problem(index);
    chain_.clear();
    prefetch_.clear();
    specs_.clear();
    stall_counted_ns_ = 0.0;
    run_ = Run{};
    accept_pending_ = -1;
    last_settle_ = last_command_ = kNoActivity;
    command_arrival_units_ = 0;
    prm_cached_ = target_cached_ = 0;
    acct_.begin(now_units(), energies());
    ProblemMetrics& pm = m();
    pm.request = request.index;
    pm.arrival_units = request.arrival_units;
    pm.slot = slot_;
    for (int r = 0; r < 3; ++r) pm.devices[r] = d_.index[static_cast<size_t>(r)];

    const int64_t first = source_->begin(*request.chunk, *problem_);
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
    cut_streams();
    d_.draft_server->cancel_pending(slot_);
    abort_spec();
    stop_run();
    ProblemMetrics done = acct_.finish(log_, end, chain_events(), last_settle_, energies(), d_.shared);
    // Work already running when the answer settled finishes (and is logged) before the next
    // problem; the request's row is complete, and its slot free, once it has.
    d_.draft_server->drain(slot_);
    d_.prm_server->drain(slot_);
    d_.target_server->drain(slot_);
    streams_.clear();
    ProblemAccounting::add_work(log_, done);
    dispatcher_.finished(done);
    if (options_.keep_activities) {
        std::vector<Activity>& kept = dispatcher_.kept();
        kept.insert(kept.end(), log_.activities().begin(), log_.activities().end());
    }
}

}  // namespace cosim
