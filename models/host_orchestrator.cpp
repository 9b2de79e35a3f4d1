#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kTimeEpsilonNs = 1e-3;

void at_least(double ns) {
    const double now = now_ns();
    if (ns > now + kTimeEpsilonNs) sc_core::wait(duration_ns(ns - now));
}
}  // namespace

HostOrchestrator::HostOrchestrator(sc_core::sc_module_name name, const WorkflowOptions& options,
                                   const WorkflowDevices& devices, ActivityLog& log)
    : sc_core::sc_module(name), options_(options), d_(devices), log_(log) {
    SC_HAS_PROCESS(HostOrchestrator);
    SC_THREAD(run);
}

void HostOrchestrator::run() {
    try {
        int32_t index = 0;
        while (next_chunk()) {
            for (const TraceProblem& problem : chunk_.problems) run_problem(problem, index++);
        }
        // One resolution step more, so a waveform file holds the last time stamp.
        sc_core::wait(sc_core::sc_get_time_resolution());
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

bool HostOrchestrator::next_chunk() {
    wants_chunk_ = true;
    sc_core::sc_pause();  // sc_start returns at the end of this delta cycle; its caller supplies
    while (wants_chunk_) sc_core::wait(chunk_ready_);
    return !chunk_.problems.empty();
}

void HostOrchestrator::supply(TraceChunk chunk) {
    chunk_ = std::move(chunk);
    wants_chunk_ = false;
    chunk_ready_.notify(sc_core::SC_ZERO_TIME);
}

// ---- bookkeeping ------------------------------------------------------------------------------

int64_t HostOrchestrator::context_len() const {
    int64_t total = problem_->prompt_tokens;
    for (const ChainStep& s : chain_) total += s.tokens;
    return total;
}

std::vector<int64_t> HostOrchestrator::chain_key() const {
    std::vector<int64_t> key;
    key.reserve(chain_.size());
    for (const ChainStep& s : chain_) key.push_back(s.product);
    return key;
}

void HostOrchestrator::product(int64_t activity, int64_t event) {
    if (activity != kNoActivity) products_[activity] = event;
}

int64_t HostOrchestrator::lookahead_draft(int64_t k, int32_t step) const {
    for (int64_t j = k + 1; j < event_end_; ++j) {
        const TraceEvent& e = events_[static_cast<size_t>(j)];
        if (e.kind == EventKind::draft && e.step == step) return e.tokens;
    }
    return 0;
}

int64_t HostOrchestrator::lookahead_refine(int64_t k, int32_t step) const {
    // The natural length of a target run for `step` from today's context: the
    // refinement of that step the trace will ask for from the same context, if
    // any; else the step's draft length as a proxy.
    for (int64_t j = k + 1; j < event_end_; ++j) {
        const TraceEvent& e = events_[static_cast<size_t>(j)];
        if (e.kind == EventKind::refine && e.step == step) return e.tokens;
        if (e.kind == EventKind::backtrack && e.step < step) break;  // the context of `step` changes
    }
    return lookahead_draft(k, step);
}

// ---- device work ------------------------------------------------------------------------------

TicketPtr HostOrchestrator::submit_draft(int32_t step, int64_t tokens, std::vector<int64_t> deps, double ready_ns) {
    const int64_t context = context_len();
    const int64_t last_product = chain_.empty() ? -1 : chain_.back().product;
    return d_.draft_server->submit([this, step, tokens, deps, context, last_product, ready_ns](Ticket& t) {
        DraftUnit& draft = *d_.draft;
        at_least(ready_ns);
        std::vector<int64_t> after = deps;
        const int64_t gap = context - draft.position();
        if (gap > 0 && !t.abort.requested) {
            // The draft's cache lacks context the target wrote: a prefix-cache refill.
            const double start = now_ns();
            draft.prefill(gap);
            const int64_t id = log_.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), gap, after,
                                        draft.power().params().prefill_w);
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
        t.above_idle_j += above_idle_j(t.activity, draft.power().params().idle_w);
        m_.drafted_tokens += t.produced;
    });
}

HostOrchestrator::Run HostOrchestrator::start_run(int32_t step, int64_t limit, std::vector<int64_t> deps) {
    Run r;
    r.step = step;
    r.key = chain_key();
    r.context = context_len();
    r.limit = std::make_shared<int64_t>(limit);
    r.generated = std::make_shared<int64_t>(0);
    r.token = std::make_shared<sc_core::sc_event>();
    r.streaming = std::make_shared<bool>(false);
    r.schedule = std::make_shared<std::vector<uint64_t>>();
    r.scheduled_from = std::make_shared<int64_t>(0);
    r.retune = std::make_shared<sc_core::sc_event>();
    r.acts = std::make_shared<std::vector<int64_t>>();
    const int64_t window = d_.target->model().context_window;
    if (r.context + limit > window)
        throw SimulationError("problem " + std::to_string(log_.problem()) + ": the target would reach " +
                              std::to_string(r.context + limit) + " tokens at step " + std::to_string(step) +
                              ", beyond the context window of " + d_.target->model().name + " (" +
                              std::to_string(window) + ")");
    if (options_.prefetch_cache) {
        auto it = prefetch_.find(r.key);
        if (it != prefetch_.end() && it->second.step == step) {
            r.reused = std::min(it->second.tokens, limit);
            r.reused_from = it->second.activities;
            r.reused_share = static_cast<double>(r.reused) / static_cast<double>(it->second.tokens);
            prefetch_.erase(it);
        }
    }
    m_.reused_tokens += r.reused;
    // Tokens the target has not seen yet go to it first (they are at the host already).
    const int64_t unseen = std::max<int64_t>(0, r.context - target_cached_);
    Delivery in{now_ns(), kNoActivity};
    if (unseen > 0) {
        in = d_.fabric->send(Endpoint::host, Endpoint::target, static_cast<uint64_t>(unseen * options_.token_bytes),
                             now_ns(), deps, step);
        deps.push_back(in.activity);
    }
    r.ticket = decode_job(r, deps, in.arrival_ns, true);
    return r;
}

TicketPtr HostOrchestrator::decode_job(const Run& r, std::vector<int64_t> deps, double ready_ns, bool new_request) {
    const int32_t step = r.step;
    const int64_t context = r.context;
    const int64_t reused = r.reused;
    auto limit = r.limit;
    auto generated = r.generated;
    auto token = r.token;
    auto streaming = r.streaming;
    auto schedule = r.schedule;
    auto scheduled_from = r.scheduled_from;
    auto retune = r.retune;
    auto acts = r.acts;
    return d_.target_server->submit([=](Ticket& t) {
        GpuProxy& target = *d_.target;
        at_least(ready_ns);
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
            const bool done = target.prefill(fill, context + reused - fill, &t.abort);
            after = {log_.add(Role::target, ActivityKind::target_prefill, step, start, now_ns(), fill, after,
                              target.power().params().prefill_w)};
            if (!done) {
                t.activity = after.back();
                return;
            }
            target_cached_ = context;  // its own decoded tokens are added when the run is kept
            *generated = reused;
            if (reused > 0 && *streaming) token->notify(sc_core::SC_ZERO_TIME);
        } else if (new_request) {
            target_cached_ = context;
        }
        const double start = now_ns();
        int64_t decoded = 0;
        uint64_t head_start = 0;  // kernel time units already spent on the token under way
        target.power().set_state(PowerState::decode);
        while (*generated < *limit) {
            // One wait up to the limit, cut short by an abort or by the host changing the
            // limit or asking for the stream; a stream is told when each token will be done.
            std::vector<double> durations;
            for (int64_t i = *generated; i < *limit; ++i) durations.push_back(target.decode_token_ns(context + i));
            if (*streaming) {
                *schedule = token_ends(durations, head_start);
                *scheduled_from = *generated;
                token->notify(sc_core::SC_ZERO_TIME);
            }
            const TokenRun part = wait_tokens(durations, head_start, &t.abort, retune.get());
            *generated += part.completed;
            decoded += part.completed;
            head_start = part.completed == static_cast<int64_t>(durations.size()) ? 0 : part.partial_units;
            if (part.completed > 0 && *streaming) token->notify(sc_core::SC_ZERO_TIME);
            if (part.aborted) break;
        }
        target.power().set_state(PowerState::idle);
        if (now_ns() > start) {  // an abort may cut the first token short: that time was spent too
            after = {log_.add(Role::target, ActivityKind::refine, step, start, now_ns(), decoded, after,
                              target.power().params().decode_w)};
            acts->push_back(after.back());
        }
        m_.target_tokens += decoded;
        t.activity = after.empty() ? kNoActivity : after.back();
        t.produced = *generated;
        token->notify(sc_core::SC_ZERO_TIME);
    });
}

void HostOrchestrator::stop_run() {
    if (!run_.ticket) return;
    if (!run_.ticket->finished) {
        run_.ticket->abort.request();
        await(run_.ticket);
    }
    for (int64_t id : *run_.acts) product(id, -1);
    if (options_.prefetch_cache && *run_.generated > 0)
        prefetch_[run_.key] = Cached{run_.step, *run_.generated, *run_.acts};
    target_cached_ = std::min(target_cached_, run_.context);  // its own tokens leave the KV cache
    run_ = Run{};
}

void HostOrchestrator::count_stall(const TicketPtr& draft, int32_t step) {
    // The draft device held a finished step since `end_ns`, waiting for a verdict.
    const double now = now_ns();
    if (!draft->finished || draft->produced == 0 || now <= draft->end_ns + kTimeEpsilonNs) return;
    log_.add(Role::draft, ActivityKind::stall, step, draft->end_ns, now, 0, {}, d_.draft->power().params().idle_w);
    m_.stall_ns += now - draft->end_ns;
}

void HostOrchestrator::count_verdict() {
    m_.verdicts += 1;
    if (spec_ && spec_->finished && spec_->produced > 0 && now_ns() > spec_->end_ns + kTimeEpsilonNs)
        m_.stalled_verdicts += 1;
}

double HostOrchestrator::above_idle_j(int64_t id, double idle_w) const {
    const Activity& a = log_.at(id);
    return a.energy_j - (a.end_ns - a.start_ns) * idle_w * kJoulesPerWattNs;
}

void HostOrchestrator::abort_spec() {
    if (!spec_) return;
    count_stall(spec_, spec_step_);
    spec_->abort.request();
    await(spec_);
    product(spec_->activity, -1);
    m_.discarded_step_ahead_tokens += spec_->produced;
    m_.stepahead_waste_j += spec_->above_idle_j;
    spec_ = nullptr;
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
    Kvmu& kvmu = d_.draft->kvmu();
    if (accept_pending_ >= 0 && kvmu.pointers().curr >= accept_pending_) {
        kvmu.accept();
        accept_pending_ = -1;
    }
}

void HostOrchestrator::cut_streams() {
    for (const auto& stream : streams_) stream->cut();
}

void HostOrchestrator::stream_to_draft(Run& run, int64_t tokens, int64_t product_event) {
    *run.streaming = true;
    run.retune->notify(sc_core::SC_ZERO_TIME);
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                  [](const std::shared_ptr<SyncStream>& s) { return s->finished(); }),
                   streams_.end());
    auto stream = std::make_shared<SyncStream>(
        *d_.draft, log_, run.step,
        [this, product_event](int64_t id) {
            product(id, product_event);
            accept_if_written();
        },
        on_sync_summary_);
    streams_.push_back(stream);
    const bool per_pass = d_.draft->kvmu().observed_per_token();
    d_.draft_server->submit([stream, per_pass](Ticket&) { stream->run(per_pass); });
    int64_t streamed = 0;  // tokens whose transfer is posted
    for (;;) {
        const int64_t available = std::min(*run.generated, tokens);
        if (available > streamed) {
            // Decoded and not yet sent (cached tokens of an earlier run): one transfer now.
            // The last tokens leave once the run is logged, so the critical path can name it.
            if (available == tokens) await(run.ticket);
            const int64_t produced_by = run.acts->empty() ? run.ticket->activity : run.acts->back();
            const int64_t burst = available - streamed;
            const Delivery d = d_.fabric->send_fine(
                Endpoint::target, Endpoint::draft, static_cast<uint64_t>(burst * options_.token_bytes), now_ns(),
                {produced_by, last_command_}, run.step);
            for (int64_t j = 0; j < burst; ++j) stream->push(d.arrival_units, d.activity);
            streamed = available;
        }
        // Tokens the target will decode on its published schedule, all but the last: each
        // leaves the moment it is decoded, so its transfer can be posted now.
        const int64_t from = *run.scheduled_from;
        const auto& ends = *run.schedule;
        while (streamed + 1 < tokens && streamed >= from && streamed - from < static_cast<int64_t>(ends.size())) {
            const int64_t produced_by = run.acts->empty() ? run.ticket->activity : run.acts->back();
            const Delivery d = d_.fabric->send_fine_at(Endpoint::target, Endpoint::draft,
                                                       static_cast<uint64_t>(options_.token_bytes),
                                                       ends[static_cast<size_t>(streamed - from)],
                                                       {produced_by, last_command_}, run.step);
            stream->push(d.arrival_units, d.activity);
            ++streamed;
        }
        if (streamed >= tokens || run.ticket->finished) break;
        sc_core::wait(*run.token | run.ticket->done);
    }
    stream->close();
}

TicketPtr HostOrchestrator::verify(int64_t context, int64_t tokens, double ready_ns, std::vector<int64_t> deps,
                                   int32_t step) {
    int64_t fill = context + tokens;
    int64_t at = 0;
    if (options_.prm_prefix_cache) {
        fill = context - prm_cached_ + tokens;
        at = prm_cached_;
    }
    prm_cached_ = context + tokens;
    return d_.prm_server->submit([=](Ticket& t) {
        GpuProxy& prm = *d_.prm;
        at_least(ready_ns);
        std::vector<int64_t> after = deps;
        request(Role::prm, prm.params().request_overhead_ns, prm.power().params().idle_w, step, after);
        const double start = now_ns();
        prm.prefill(fill, at);
        t.activity = log_.add(Role::prm, ActivityKind::verify, step, start, now_ns(), fill, after,
                              prm.power().params().prefill_w);
    });
}

Delivery HostOrchestrator::verdict(const TicketPtr& scored, int32_t step) {
    await(scored);
    const Delivery v = d_.fabric->send_fine(Endpoint::prm, Endpoint::host,
                                            static_cast<uint64_t>(options_.control_bytes), scored->end_ns,
                                            {scored->activity}, step);
    at_least(v.arrival_ns);
    last_settle_ = v.activity;
    return v;
}

Delivery HostOrchestrator::command_to_draft(int64_t cause, int32_t step) {
    const Delivery d = d_.fabric->send_fine(Endpoint::host, Endpoint::draft,
                                            static_cast<uint64_t>(options_.control_bytes), now_ns(), {cause}, step);
    command_arrival_ns_ = d.arrival_ns;
    last_command_ = d.activity;
    return d;
}

// ---- the workflow -----------------------------------------------------------------------------

void HostOrchestrator::prompt_prefills() {
    // Without a prefix cache the PRM rescores the whole context at every step,
    // so prefilling the prompt early would buy nothing.
    const int64_t prompt = problem_->prompt_tokens;
    for (auto [server, gpu, role] : {std::tuple{d_.prm_server, d_.prm, Role::prm},
                                     std::tuple{d_.target_server, d_.target, Role::target}}) {
        if (role == Role::prm && !options_.prm_prefix_cache) continue;
        server->submit([=](Ticket& t) {
            std::vector<int64_t> after;
            request(role, gpu->params().request_overhead_ns, gpu->power().params().idle_w, 0, after);
            const double start = now_ns();
            gpu->prefill(prompt, 0);
            t.activity = log_.add(role, ActivityKind::prompt_prefill, 0, start, now_ns(), prompt, after,
                                  gpu->power().params().prefill_w);
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
        TicketPtr mig = d_.target_server->submit([=](Ticket& t) {
            std::vector<int64_t> after;
            request(Role::target, helper->params().request_overhead_ns, helper->power().params().idle_w, 0, after);
            const double start = now_ns();
            helper->prefill(prompt, 0);
            t.activity = log_.add(Role::target, ActivityKind::migrate, 0, start, now_ns(), prompt, after,
                                  helper->power().params().prefill_w);
        });
        if (eager) prompt_prefills();
        await(mig);
        const auto kv_bytes = static_cast<uint64_t>(static_cast<double>(prompt) * draft.kv_bytes_per_token());
        const Delivery kv = d_.fabric->send(Endpoint::target, Endpoint::draft, kv_bytes, now_ns(), {mig->activity}, 0);
        const double leg_start = log_.at(kv.activity).start_ns;
        // The FPGA's side of the last leg starts with it, so what released the leg released it too:
        // the critical path runs on through the legs before it.
        const int64_t leg_cause = log_.at(kv.activity).cause;
        d_.draft_server->submit([=](Ticket& t) {
            // The FPGA does nothing but take in the prompt's KV: it draws its transfer power.
            at_least(leg_start);
            Power& power = d_.draft->power();
            power.set_state(PowerState::transfer);
            at_least(kv.arrival_ns);
            power.set_state(PowerState::idle);
            t.activity = log_.add(Role::draft, ActivityKind::kv_load, 0, leg_start, now_ns(), prompt,
                                  {kv.activity, leg_cause}, power.params().transfer_w);
            d_.draft->load(prompt);
        });
        last_command_ = kv.activity;
    } else {
        d_.draft_server->submit([=](Ticket& t) {
            DraftUnit& unit = *d_.draft;
            std::vector<int64_t> after;
            request(Role::draft, unit.request_overhead_ns(), unit.power().params().idle_w, 0, after);
            const double start = now_ns();
            unit.prefill_prompt(prompt);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, 0, start, now_ns(), prompt, after,
                                  unit.power().params().prefill_w);
        });
        if (eager) prompt_prefills();
    }
    prm_cached_ = eager && options_.prm_prefix_cache ? prompt : 0;
    target_cached_ = eager ? prompt : 0;
    if (options_.step_ahead_refine && !options_.sequential) {
        const int64_t first = problem_->first_event - 1;
        const int64_t limit = lookahead_refine(first, 1);
        if (limit > 0) run_ = start_run(1, limit, {});
    }
}

void HostOrchestrator::on_draft(int64_t k, const TraceEvent& e) {
    const int32_t step = e.step;
    if (step != static_cast<int32_t>(chain_.size()) + 1 || e.tokens <= 0)
        throw SimulationError("trace inconsistent: draft of step " + std::to_string(step) + " after " +
                              std::to_string(chain_.size()) + " steps");
    if (!spec_) {
        // Drafted now: it starts once the last command (a verdict's pointer update) has arrived.
        spec_ = submit_draft(step, e.tokens, {last_settle_, last_command_}, command_arrival_ns_);
        spec_step_ = step;
    }
    if (spec_step_ != step)
        throw SimulationError("internal: the draft device holds step " + std::to_string(spec_step_) +
                              " where the trace drafts step " + std::to_string(step));
    TicketPtr mine = spec_;
    spec_ = nullptr;
    await(mine);
    if (mine->produced != e.tokens)
        throw SimulationError("internal: step " + std::to_string(step) + " drafted " +
                              std::to_string(mine->produced) + " of " + std::to_string(e.tokens) + " tokens");
    product(mine->activity, k);
    count_stall(mine, step);
    const double now = now_ns();
    const int64_t context = context_len();
    const Delivery tokens = d_.fabric->send(Endpoint::draft, Endpoint::prm,
                                            static_cast<uint64_t>(e.tokens * options_.token_bytes), now,
                                            {mine->activity, last_settle_}, step);
    TicketPtr score = verify(context, e.tokens, tokens.arrival_ns, {tokens.activity}, step);
    if (options_.step_ahead_draft && !options_.sequential) {
        const int64_t ahead = lookahead_draft(k, step + 1);
        if (ahead > 0) {
            spec_ = submit_draft(step + 1, ahead, {mine->activity});
            spec_step_ = step + 1;
        }
    }
    const Delivery v = verdict(score, step);
    count_verdict();
    if (e.accepted) {
        chain_.push_back(ChainStep{e.tokens, k});
        command_to_draft(v.activity, step);  // the pointer update needs no wait
        d_.draft->settle();                  // a step-ahead draft's tokens done so far are in the KV cache
        d_.draft->kvmu().accept();
        settled(k, step, v.activity);
        return;
    }
    prm_cached_ = std::min(prm_cached_, context);
    const Delivery cmd = command_to_draft(v.activity, step);
    at_least(cmd.arrival_ns);
    abort_spec();
    d_.draft->kvmu().rollback();
    last_command_ = cmd.activity;
}

void HostOrchestrator::settled(int64_t k, int32_t step, int64_t cause) {
    last_settle_ = cause;
    if (!options_.step_ahead_refine || options_.sequential) return;
    if (run_.ticket && run_.step == step + 1 && run_.key == chain_key()) return;  // started after a refinement
    stop_run();
    const int64_t limit = lookahead_refine(k, step + 1);
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
        if (*run_.limit != tokens) {
            *run_.limit = tokens;
            run_.retune->notify(sc_core::SC_ZERO_TIME);
        }
        if (run_.ticket->finished && *run_.generated < tokens) {
            // It stopped at its guessed length: it decodes on from where it was.
            run_.ticket = decode_job(run_, {run_.ticket->activity}, now_ns(), false);
        }
    } else {
        stop_run();
        run_ = start_run(step, tokens, {last_command_, last_settle_});
    }
    Run run = run_;
    if (options_.shadow_sync && !options_.sequential) stream_to_draft(run, tokens, k);
    await(run.ticket);
    for (int64_t id : *run.acts) product(id, k);
    for (int64_t id : run.reused_from) partial_use_[id] = Reuse{run.reused_share, k};
    run_ = Run{};
    target_cached_ = run.context + tokens;
    if (!options_.shadow_sync && !options_.sequential) {
        // Vanilla: the draft device prefills the refined step locally afterwards.
        const Delivery d = d_.fabric->send(Endpoint::target, Endpoint::draft,
                                           static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                           {run.ticket->activity}, step);
        d_.draft_server->submit([=](Ticket& t) {
            DraftUnit& draft = *d_.draft;
            at_least(d.arrival_ns);
            const double start = now_ns();
            draft.prefill(tokens);
            t.activity = log_.add(Role::draft, ActivityKind::draft_prefill, step, start, now_ns(), tokens,
                                  {d.activity}, draft.power().params().prefill_w);
            product(t.activity, k);
            accept_if_written();
        });
    }
    const int64_t context = context_len();
    if (!e.scored) {
        chain_.push_back(ChainStep{tokens, k});
        request_accept(context + tokens);
        settled(k, step, run.ticket->activity);
        return;
    }
    if (options_.target_ahead_after_refine && options_.step_ahead_refine && !options_.sequential) {
        // The current step is complete: the target goes on to the next at once, from the
        // context that keeps its refinement, without waiting for the refinement's verdict.
        chain_.push_back(ChainStep{tokens, k});
        const int64_t limit = lookahead_refine(k, step + 1);
        if (limit > 0) run_ = start_run(step + 1, limit, {run.ticket->activity});
        chain_.pop_back();
    }
    const Delivery sent = d_.fabric->send(Endpoint::target, Endpoint::prm,
                                          static_cast<uint64_t>(tokens * options_.token_bytes), now_ns(),
                                          {run.ticket->activity, last_command_}, step);
    TicketPtr score = verify(context, tokens, sent.arrival_ns, {sent.activity}, step);
    if (options_.step_ahead_draft && !options_.sequential) {
        const int64_t ahead = lookahead_draft(k, step + 1);
        if (ahead > 0) {
            spec_ = submit_draft(step + 1, ahead, {run.ticket->activity});
            spec_step_ = step + 1;
        }
    }
    const Delivery v = verdict(score, step);
    count_verdict();
    if (e.accepted) {
        chain_.push_back(ChainStep{tokens, k});
        command_to_draft(v.activity, step);
        request_accept(context + tokens);
        settled(k, step, v.activity);
    } else {
        prm_cached_ = std::min(prm_cached_, context);
    }
}

void HostOrchestrator::on_backtrack(int64_t, const TraceEvent& e) {
    m_.backtracks += 1;
    if (chain_.empty()) throw SimulationError("trace inconsistent: a backtrack with no step to revert");
    stop_run();  // a run started ahead of the failed refinement's verdict builds on a reverted context
    const Delivery cmd = command_to_draft(last_settle_, e.step);
    at_least(cmd.arrival_ns);
    // Syncs of the failed refinement and a step-ahead draft still queued are dropped
    // before anything is waited for; the job running now stops at once or within a token.
    cut_streams();
    d_.draft_server->cancel_pending();
    if (spec_) spec_->abort.request();
    abort_spec();
    d_.draft_server->drain();
    streams_.clear();
    accept_pending_ = -1;
    chain_.pop_back();
    const int64_t position = context_len();
    d_.draft->kvmu().initialize(position);
    prm_cached_ = std::min(prm_cached_, position);
    target_cached_ = std::min(target_cached_, position);
    last_command_ = cmd.activity;
}

void HostOrchestrator::run_problem(const TraceProblem& problem, int32_t index) {
    problem_ = &problem;
    event_end_ = problem_->first_event + problem_->events;
    log_.begin_problem(index);
    chain_.clear();
    prefetch_.clear();
    products_.clear();
    partial_use_.clear();
    spec_ = nullptr;
    run_ = Run{};
    accept_pending_ = -1;
    last_settle_ = last_command_ = kNoActivity;
    command_arrival_ns_ = 0.0;
    m_ = ProblemMetrics{};
    m_.start_ns = now_ns();
    GpuProxy* gpus[2] = {d_.prm, d_.target};
    energy_start_[0] = d_.draft->power().energy_j();
    for (int i = 0; i < 2; ++i) energy_start_[i + 1] = gpus[i]->power().energy_j();

    phase1();
    for (int64_t k = problem_->first_event; k < event_end_; ++k) {
        const TraceEvent& e = events_[static_cast<size_t>(k)];
        if (on_step_) on_step_(index, e.step);
        switch (e.kind) {
            case EventKind::draft: on_draft(k, e); break;
            case EventKind::refine: on_refine(k, e); break;
            case EventKind::backtrack: on_backtrack(k, e); break;
        }
    }
    finish_problem();
}

void HostOrchestrator::finish_problem() {
    const double end = now_ns();
    m_.end_ns = end;
    // Work left over once the answer is settled (trailing shadow syncs, a step-ahead
    // run) is dropped; aborts take effect at this same instant.
    cut_streams();
    d_.draft_server->cancel_pending();
    abort_spec();
    stop_run();
    m_.energy_j[0] = d_.draft->power().energy_j() - energy_start_[0];
    m_.energy_j[1] = d_.prm->power().energy_j() - energy_start_[1];
    m_.energy_j[2] = d_.target->power().energy_j() - energy_start_[2];
    m_.steps = static_cast<int32_t>(chain_.size());
    for (const ChainStep& s : chain_) m_.final_tokens += s.tokens;
    m_.generated_tokens = m_.drafted_tokens + m_.target_tokens;

    std::set<int64_t> final_products;
    for (const ChainStep& s : chain_) final_products.insert(s.product);
    for (const auto& [id, event] : products_) {
        double useful = final_products.count(event) ? 1.0 : 0.0;
        auto reuse = partial_use_.find(id);
        if (reuse != partial_use_.end() && final_products.count(reuse->second.consumer))
            useful = std::max(useful, reuse->second.share);
        if (useful < 1.0) log_.mark_wasted(id, 1.0 - useful);
    }
    // Shadow-sync passes are logged pass by pass (watched) or a batch at a time, so where
    // they fall among the other activities differs; each kind is summed apart, in its own
    // order (which does not differ), so the totals agree to the last bit either way.
    double busy_sync_ns = 0.0;
    double offchain_sync_j = 0.0;
    for (const Activity& a : log_.activities()) {
        if (a.end_ns > end + kTimeEpsilonNs) continue;
        const double duration = a.end_ns - a.start_ns;
        if (a.kind == ActivityKind::sync) {
            busy_sync_ns += duration;
            offchain_sync_j += a.energy_j * a.wasted_share;
            continue;
        }
        if (a.role == Role::draft && a.kind != ActivityKind::stall) m_.busy_ns[0] += duration;
        if (a.role == Role::prm) m_.busy_ns[1] += duration;
        if (a.role == Role::target) m_.busy_ns[2] += duration;
        m_.offchain_energy_j += a.energy_j * a.wasted_share;
    }
    m_.busy_ns[0] += busy_sync_ns;
    m_.offchain_energy_j += offchain_sync_j;
    for (int64_t id : log_.critical_path(last_settle_)) {
        const Activity& a = log_.at(id);
        if (is_pcie_time(a.kind)) m_.comm_critical_ns += a.end_ns - a.start_ns;
    }
    metrics_.push_back(m_);
    // Work already running when the answer settled finishes (and is logged) before the next problem.
    d_.draft_server->drain();
    d_.prm_server->drain();
    d_.target_server->drain();
    streams_.clear();
    if (options_.keep_activities) kept_.insert(kept_.end(), log_.activities().begin(), log_.activities().end());
}

}  // namespace cosim
