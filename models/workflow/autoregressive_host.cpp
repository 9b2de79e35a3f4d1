#include "sim_time.hpp"
#include "autoregressive_host.hpp"

#include <algorithm>
#include <tuple>
#include <string>

#include "device_command.hpp"
#include "errors.hpp"

namespace cosim {

AutoregressiveHost::AutoregressiveHost(sc_core::sc_module_name name, RequestDispatcher& dispatcher, int slot,
                                       const AutoregressiveGpu& gpu, int64_t shared_prefix_tokens,
                                       std::vector<ServedRequest>& done)
    : sc_core::sc_module(name), gpu_port("gpu_port"), dispatcher_(dispatcher), slot_(slot), gpu_(gpu),
      shared_prefix_(shared_prefix_tokens), done_(done) {
    SC_HAS_PROCESS(AutoregressiveHost);
    SC_THREAD(run);
    if (gpu_.engine == nullptr && gpu_.gpu != nullptr) gpu_port.bind(gpu_.gpu->host);
}

void AutoregressiveHost::run() {
    try {
        Request request;
        while (dispatcher_.next(slot_, request)) {
            serve(request);
            request = Request{};
        }
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

void AutoregressiveHost::serve(const Request& request) {
    const TraceProblem& p = *request.problem;
    ServedRequest r;
    r.request = request.index;
    r.arrival_units = request.arrival_units;
    r.start_units = now_units();
    r.slot = slot_;
    r.target_device = gpu_.index;
    r.prompt_tokens = p.prompt_tokens;
    r.output_tokens = p.output_tokens;
    if (r.output_tokens == 0 && broker_ != nullptr) {
        // Live: the policy says how long the output is, as it would the trace's one step.
        Decision d;
        describe(d, DecisionKind::draft, r);
        broker_->ask(d);
        r.output_tokens = d.answer_tokens;
    }
    const std::string which = "request " + std::to_string(request.index);
    if (r.output_tokens < 1) throw SimulationError(which + ": an output of at least one token");
    if (r.prompt_tokens + r.output_tokens > gpu_.context_window)
        throw SimulationError(which + ": " + std::to_string(r.prompt_tokens) + " prompt and " +
                              std::to_string(r.output_tokens) + " output tokens exceed the target's window of " +
                              std::to_string(gpu_.context_window));
    if (gpu_.engine == nullptr) {
        alone(r, request);
    } else {
        if (p.passes > 0) throw ConfigError(which + ": a recorded draft_schedule applies to a request served alone");
        if (gpu_.request_overhead_ns > 0.0) sc_core::wait(duration_ns(gpu_.request_overhead_ns));
        r.overhead_end_units = now_units();
        VllmEngine* engine = gpu_.engine;
        if (gpu_.balancer != nullptr) std::tie(engine, r.target_device) = gpu_.balancer->choose(request.index);
        const VllmEngine::Outcome out = engine->generate(
            SeqSpec{r.prompt_tokens, r.output_tokens, std::min(shared_prefix_, r.prompt_tokens), request.index});
        r.first_token_units = out.first_token_units;
        r.end_units = out.end_units;
        r.energy_j = out.energy_j;
        r.busy_ns = out.busy_ns;
        r.work_ns = out.work_ns;
        r.preemptions = out.preemptions;
        r.recomputed_tokens = out.recomputed_tokens;
        r.cached_prompt_tokens = out.cached_prompt_tokens;
        r.verify_passes = out.passes;
        r.drafted_tokens = out.drafted;
        r.accepted_tokens = out.kept;
        r.draft_energy_j = out.draft_energy_j;
        r.draft_busy_ns = out.draft_busy_ns;
    }
    done_.push_back(r);
}

void AutoregressiveHost::describe(Decision& d, DecisionKind kind, const ServedRequest& r) const {
    d.kind = kind;
    d.slot = slot_;
    d.request = r.request;
    d.step = 1;
    d.time_ns = now_ns();
    d.states = {gpu_.draft_power != nullptr ? gpu_.draft_power->state() : PowerState::idle, PowerState::idle,
                gpu_.gpu->power().state()};
}

void AutoregressiveHost::alone(ServedRequest& r, const Request& request) {
    const TraceProblem& p = *request.problem;
    if (p.passes > 0 && gpu_.gpu->speculation() == nullptr)
        throw ConfigError("request " + std::to_string(r.request) +
                          ": a recorded draft_schedule needs token-level speculation");
    // Each pass's drafts: the recorded schedule's while it lasts, then the policy's (live) or
    // the scenario's.
    DraftChooser choose = [&](const PassChoice& q) -> int64_t {
        if (q.pass < p.passes) return request.chunk->schedule[static_cast<size_t>(p.first_pass + q.pass)];
        if (!ask_drafts_ || broker_ == nullptr) return q.proposed;
        Decision d;
        describe(d, DecisionKind::speculate, r);
        d.step = static_cast<int32_t>(q.pass + 1);
        d.tokens = q.produced;
        d.proposed = q.proposed;
        d.most = q.most;
        d.output = q.output;
        d.last_drafts = q.last_drafts;
        d.last_accepted = q.last_accepted;
        broker_->ask(d);
        return d.answer_tokens;
    };
    const bool chooses = p.passes > 0 || (ask_drafts_ && broker_ != nullptr);
    const TicketPtr ticket = gpu_.server->submit(
        [&](Ticket&) {
            // One command: the overhead, the prefill, the decodes, on the GPU.
            DeviceCommand c;
            c.context = r.prompt_tokens;
            c.request = r.request;
            if (chooses) c.choose = &choose;
            send_command(gpu_port, DeviceOp::gpu_request, r.output_tokens, c);
            r.overhead_end_units = c.started_units;
            r.first_token_units = c.first_token_units;
            r.end_units = now_units();
            r.busy_ns = units_to_ns(r.end_units - r.overhead_end_units);
            r.work_ns = r.busy_ns;
            r.energy_j = c.energy_j;
            r.verify_passes = c.passes;
            r.drafted_tokens = c.drafted;
            r.accepted_tokens = c.accepted;
            r.draft_energy_j = c.draft_energy_j;
            r.draft_busy_ns = c.draft_busy_ns;
        },
        slot_);
    await(ticket);
}

}  // namespace cosim
