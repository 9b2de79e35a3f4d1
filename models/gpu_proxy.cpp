#include "sim_time.hpp"
#include "gpu_proxy.hpp"

#include <algorithm>
#include <vector>

#include "errors.hpp"

namespace cosim {

namespace {
// The power of a device busy at `busy_w` for `busy_ns` of `ns`, idle at `idle_w` the rest.
double average_w(double busy_w, double busy_ns, double idle_w, double ns) {
    if (ns <= 0.0) return idle_w;
    if (busy_ns >= ns) return busy_w;
    const double busy = busy_ns;
    return (busy_w * busy + idle_w * (ns - busy)) / ns;
}

HbmParams memory_params(const GpuParams& p) {
    return HbmParams{p.memory_bytes, 1, p.memory_bandwidth_gbps, p.memory_efficiency};
}

}  // namespace

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   const PowerParams& power, LatencyProfile profile, bool kv_reserve, const ParallelLayout& layout)
    : sc_core::sc_module(name),
      host("host"),
      batcher_port("batcher_port"),
      timing_(this->name(), params, model, std::move(profile), layout),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      own_power_(std::make_unique<Power>(this->name(), nominal_gpu_power(layout.gpus() > 1 ? group_power(power, layout.gpus())
                                                                                 : power, timing_, this->name()))),
      power_(own_power_.get()) {
    init(kv_reserve);
}

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   const PowerParams& power, std::shared_ptr<const LatencyModel> latency, bool kv_reserve)
    : sc_core::sc_module(name),
      host("host"),
      batcher_port("batcher_port"),
      timing_(this->name(), params, model, std::move(latency)),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      own_power_(std::make_unique<Power>(this->name(), nominal_gpu_power(power, timing_, this->name()))),
      power_(own_power_.get()) {
    init(kv_reserve);
}

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   Power& shared_power, LatencyProfile profile, const ParallelLayout& layout)
    : sc_core::sc_module(name),
      host("host"),
      batcher_port("batcher_port"),
      timing_(this->name(), params, model, std::move(profile), layout),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      power_(&shared_power) {
    init();
}

void GpuProxy::init(bool kv_reserve) {
    host.register_b_transport(this, &GpuProxy::b_transport);
    // Memory is one GPU's: its share of the weights and of the KV cache.
    memory_.allocate("weights", timing_.stored_weight_bytes());
    if (!kv_reserve) return;
    kv_reserve_tokens_ = model().kv_reserve(name(), params().kv_reserve_tokens);
    memory_.allocate("kv_cache", static_cast<double>(kv_reserve_tokens_) * kv_bytes_per_token());
}

void GpuProxy::set_speculation(std::shared_ptr<const SpecDecoder> spec, Power* draft_power) {
    spec_ = std::move(spec);
    draft_power_ = draft_power;
    if (spec_ == nullptr || spec_->drafter_weight_bytes() <= 0.0) return;
    memory_.allocate("proposer_weights", spec_->drafter_weight_bytes());
    if (kv_reserve_tokens_ > 0)
        memory_.allocate("proposer_kv_cache", static_cast<double>(kv_reserve_tokens_) *
                                                  spec_->drafter_kv_bytes_per_token());
}

bool GpuProxy::prefill(int64_t tokens, int64_t context, AbortSignal* abort, bool urgent) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a prefill needs at least one token");
    check_argument_non_negative("GpuProxy::prefill", "context", static_cast<double>(context));
    if (context + tokens > model().context_window)
        throw SimulationError(std::string(name()) + ": prefill to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model().name + " (" +
                              std::to_string(model().context_window) + ")");
    last_energy_j_ = 0.0;
    last_work_ns_ = 0.0;
    bool done = false;
    if (batcher_ != nullptr) {
        // Requests that share this GPU wait in the batcher at once: each keeps its own share
        // until it returns, and only then makes it the last operation's.
        DeviceCommand c;
        c.context = context;
        c.abort = abort;
        c.urgent = urgent;
        to_batcher(DeviceOp::gpu_prefill, tokens, c);
        done = c.ok;
        last_energy_j_ = c.energy_j;
        last_work_ns_ = c.work_ns;
    } else {
        const double start = now_ns();
        const double ns = prefill_ns(tokens, context);
        const double watts = busy_w(PowerState::prefill, {BatchWork{tokens, context, false}}, ns);
        power_->set_state(PowerState::prefill, watts);
        done = wait_pass(ns, static_cast<double>(tokens), abort);
        power_->set_state(PowerState::idle);
        last_work_ns_ = now_ns() - start;
        last_energy_j_ = last_work_ns_ * watts * kJoulesPerWattNs;
    }
    if (done) tokens_prefilled_ += tokens;
    return done;
}

int64_t GpuProxy::decode(int64_t tokens, int64_t context, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a decode needs at least one token");
    check_argument_non_negative("GpuProxy::decode", "context", static_cast<double>(context));
    if (context + tokens > model().context_window)
        throw SimulationError(std::string(name()) + ": decoding to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model().name + " (" +
                              std::to_string(model().context_window) + ")");
    // The load of its first token: the context moves little over one decode.
    power_->set_state(PowerState::decode,
                      busy_w(PowerState::decode, {BatchWork{1, context, true}}, decode_token_ns(context)));
    int64_t decoded = 0;
    while (decoded < tokens) {
        if (!wait_pass(decode_token_ns(context + decoded), 1.0, abort)) break;
        ++decoded;
        ++tokens_decoded_;
        if (token_events_) token_ready.notify(sc_core::SC_ZERO_TIME);
    }
    power_->set_state(PowerState::idle);
    return decoded;
}

void GpuProxy::set_collective_link(PcieLink& link) {
    if (!timing_.layout().on_pcie()) return;
    if (collectives_ != nullptr) throw SimulationError(std::string(name()) + ": its collectives have one link, set once");
    collectives_ = std::make_unique<CollectiveLink>((std::string(basename()) + "_collectives").c_str(), link);
    if (batcher_ != nullptr) batcher_->set_collective_link(link);
}

bool GpuProxy::wait_pass(double ns, double tokens, AbortSignal* abort) {
    if (collectives_ == nullptr) return wait_unless_aborted(ns, abort);
    const ParallelLayout& layout = timing_.layout();
    const CollectiveTraffic traffic = layout.traffic(tokens);
    const uint64_t compute = compute_units(ns, duration_units(traffic.link_ns(layout.link())));
    if (!wait_unless_aborted(units_to_ns(compute), abort)) return false;
    CollectiveLink::Held held;
    uint64_t waited = 0;
    const uint64_t end = collectives_->book(traffic, layout.link(), now_units(), &held, &waited);
    if (wait_unless_aborted(units_to_ns(end - now_units()), abort)) {
        collectives_->count_wait(waited);
        return true;
    }
    collectives_->release(held);
    return false;
}

std::vector<uint64_t> GpuProxy::run_compute_units(int64_t first, int64_t last) const {
    const ParallelLayout& layout = timing_.layout();
    const uint64_t link = duration_units(layout.traffic(1.0).link_ns(layout.link()));
    std::vector<uint64_t> compute;
    compute.reserve(static_cast<size_t>(std::max<int64_t>(0, last - first)));
    for (int64_t i = first; i < last; ++i) compute.push_back(compute_units(decode_token_ns(i), link));
    return compute;
}

void GpuProxy::set_batcher(GpuBatcher* batcher) {
    if (batcher == nullptr) return;
    if (batcher_ != nullptr) throw SimulationError(std::string(name()) + ": a GPU is bound to one batcher, once");
    batcher_ = batcher;
    batcher_port.bind(batcher->socket);
}

void GpuProxy::to_batcher(DeviceOp op, int64_t count, DeviceCommand& c) {
    BatchModel model;
    model.timing = &timing_;
    // Its decodes in the GPU's iterations verify drafts where it decodes speculatively.
    if (op == DeviceOp::gpu_batch_decode) model.spec = spec_.get();
    CommandPayload call(op, count, c);
    call.attach(model);  // declared after it, the payload goes first
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    batcher_port->b_transport(call.payload, delay);
}

int64_t GpuProxy::decode_run(DecodeRun& run, int64_t context, AbortSignal* abort, uint64_t key) {
    check_argument_non_negative("GpuProxy::decode_run", "context", static_cast<double>(context));
    int64_t decoded = 0;
    uint64_t head_start = 0;  // kernel time units already spent on the token under way
    const int64_t first = context + run.generated;
    power_->set_state(PowerState::decode,
                      busy_w(PowerState::decode, {BatchWork{1, first, true}}, decode_token_ns(first)));
    // Its collectives on the link: booked for the tokens before each wait (a speculative
    // run's rounds keep the closed form).
    std::unique_ptr<BookedRun> booked;
    if (collectives_ != nullptr && spec_ == nullptr) booked = std::make_unique<BookedRun>(*collectives_);
    while (run.generated < run.limit) {
        // One wait up to the limit, cut short by an abort or by the host changing the
        // limit or asking for the stream; a stream is told when each token will be done.
        std::vector<double> durations;
        if (spec_ != nullptr) {
            // Speculatively: a round's tokens end together, at its verification; the GPU draws
            // the load of the rounds' work.
            SpecDecoder::Run plan = spec_->run(context, run.generated, run.limit, key);
            durations = std::move(plan.durations);
            if (plan.ns > 0.0)
                power_->set_state(PowerState::decode,
                                  timing_.busy_w(power_->params(), PowerState::decode, plan.work, plan.ns));
        } else if (booked != nullptr) {
            durations = booked->plan(run_compute_units(context + run.generated, context + run.limit),
                                     timing_.layout().traffic(1.0), timing_.layout().link());
            head_start = 0;  // the token under way, if any, keeps its booked end
        } else {
            for (int64_t i = run.generated; i < run.limit; ++i) durations.push_back(decode_token_ns(context + i));
        }
        if (run.streaming) {
            run.schedule = token_ends(durations, head_start);
            run.scheduled_from = run.generated;
            run.token.notify(sc_core::SC_ZERO_TIME);
        }
        const TokenRun part = wait_tokens(durations, head_start, abort, &run.retune);
        run.generated += part.completed;
        decoded += part.completed;
        head_start = part.completed == static_cast<int64_t>(durations.size()) ? 0 : part.partial_units;
        if (booked != nullptr) booked->settle(part.completed, !part.aborted);
        if (part.completed > 0 && run.streaming) run.token.notify(sc_core::SC_ZERO_TIME);
        if (part.aborted) break;
    }
    if (booked != nullptr) booked->release_all();  // a token under way the host no longer wants
    power_->set_state(PowerState::idle);
    tokens_decoded_ += decoded;
    return decoded;
}

int64_t GpuProxy::batch_decode(int64_t context, const std::function<bool()>& next, AbortSignal* abort,
                               double& energy_j, double& work_ns, int64_t certain, uint64_t key) {
    if (batcher_ == nullptr) throw SimulationError(std::string(name()) + ": a batched decode needs a batcher");
    DeviceCommand c;
    c.context = context;
    c.abort = abort;
    c.next = next;
    c.request = static_cast<int64_t>(key);
    to_batcher(DeviceOp::gpu_batch_decode, certain, c);
    energy_j += c.energy_j;
    work_ns += c.work_ns;
    return c.produced;
}

void GpuProxy::serve_request(int64_t prompt, int64_t output, DeviceCommand& c) {
    const double energy0 = power_->energy_j();
    power_->set_state(PowerState::idle);
    const double overhead = params().request_overhead_ns;
    if (overhead > 0.0) sc_core::wait(duration_ns(overhead));
    c.started_units = now_units();
    const double prefill = prefill_ns(prompt, 0);
    power_->set_state(PowerState::prefill, busy_w(PowerState::prefill, {BatchWork{prompt, 0, false}}, prefill));
    sc_core::wait(duration_ns(prefill));
    c.first_token_units = now_units();
    tokens_prefilled_ += prompt;
    if (output > 1) {
        // Token i (i >= 1) is decoded after the prompt and the i - 1 tokens before it.
        double decode_ns = 0.0;
        for (int64_t i = 0; i + 1 < output; ++i) decode_ns += decode_token_ns(prompt + i);
        // One power over the decodes: their summed work over their summed time.
        double watts = power_->params().decode_w;
        if (power_->params().load_model()) {
            StepWork work;
            for (int64_t i = 0; i + 1 < output; ++i) work += timing_.work({BatchWork{1, prompt + i, true}});
            watts = timing_.busy_w(power_->params(), PowerState::decode, work, decode_ns);
        }
        power_->set_state(PowerState::decode, watts);
        sc_core::wait(duration_ns(decode_ns));
        tokens_decoded_ += output - 1;
    }
    power_->set_state(PowerState::idle);
    c.produced = output;
    c.work_ns = units_to_ns(now_units() - c.started_units);
    c.energy_j = power_->energy_j() - energy0;
}

SpecDecoder::Decode GpuProxy::serve_speculative(int64_t prompt, int64_t output, const SpecDecoder& spec,
                                                uint64_t request, DeviceCommand& c) {
    const double prefill = prefill_ns(prompt, 0);
    const DraftDevice* dev = spec.device();
    const double draft0 = draft_power_ != nullptr ? draft_power_->energy_j() : 0.0;
    // A draft device prefills the prompt from when it arrives, during the target's prefill
    // and on into the decode phase if longer; each phase draws its average power.
    double draft_in_prefill = 0.0;
    double draft_prefill = 0.0;
    if (dev != nullptr && draft_power_ != nullptr) {
        draft_prefill = dev->timing->prefill_ns(prompt, 0);
        const double window = params().request_overhead_ns + prefill;
        const double arrives = params().request_overhead_ns +
                               dev->draft_link.transfer_ns(static_cast<uint64_t>(prompt * dev->token_bytes));
        draft_in_prefill = std::clamp(window - arrives, 0.0, draft_prefill);
        draft_power_->set_state(PowerState::prefill, average_w(dev->prefill_w, draft_in_prefill, dev->idle_w, window));
    }
    DeviceCommand first;
    serve_request(prompt, 1, first);  // the overhead and the prefill, as a lone request
    c.started_units = first.started_units;
    c.first_token_units = first.first_token_units;
    const double energy0 = power_->energy_j() - first.energy_j;
    // The decode's time is waited in spans: all of it at once, or, with a chooser, up to each
    // pass it is asked about (so that it is asked at that instant). Each span draws its own
    // average power: the GPU's passes at their load, idle while it waits for a lookup or a
    // draft device; the draft device prefilling what is left of the prompt, drafting, idle.
    SpecDecoder::Decode spent;
    double prefill_left = draft_prefill - draft_in_prefill;
    // Each span ends at the decode's start plus the time so far, so that the spans' instants
    // are those of one wait (no rounding builds up across them).
    const uint64_t decode_start = now_units();
    const auto spend = [&](const SpecDecoder::Decode& upto) {
        const double ns = upto.ns - spent.ns;
        if (ns <= 0.0) return;
        const double gpu_ns = upto.gpu_ns - spent.gpu_ns;
        const StepWork work{upto.work.flops - spent.work.flops, upto.work.bytes - spent.work.bytes};
        const double busy = power_->params().load_model()
                                ? timing_.busy_w(power_->params(), PowerState::decode, work, gpu_ns)
                                : power_->params().decode_w;
        power_->set_state(PowerState::decode, average_w(busy, gpu_ns, power_->params().idle_w, ns));
        if (dev != nullptr && draft_power_ != nullptr) {
            const double prefilling = std::min(prefill_left, ns);
            const double drafting = upto.draft_busy_ns - spent.draft_busy_ns;
            const double joules_ns = dev->prefill_w * prefilling + dev->decode_w * drafting +
                                     dev->idle_w * std::max(0.0, ns - prefilling - drafting);
            draft_power_->set_state(PowerState::decode, joules_ns / ns);
            prefill_left -= prefilling;
        }
        at_least_units(decode_start + duration_units(upto.ns));
        spent = upto;
    };
    SpecDecoder::Chooser chooser;
    if (c.choose != nullptr)
        chooser = [&](const PassChoice& q, const SpecDecoder::Decode& so_far) {
            spend(so_far);
            return (*c.choose)(q);
        };
    const SpecDecoder::Decode d =
        spec.decode(prompt, output, request, prefill, c.choose != nullptr ? &chooser : nullptr);
    spend(d);
    power_->set_state(PowerState::idle);
    if (draft_power_ != nullptr) draft_power_->set_state(PowerState::idle);
    tokens_decoded_ += output - 1;
    c.produced = output;
    c.work_ns = units_to_ns(now_units() - c.started_units);
    c.energy_j = power_->energy_j() - energy0;
    c.draft_energy_j = draft_power_ != nullptr ? draft_power_->energy_j() - draft0 : 0.0;
    return d;
}

void GpuProxy::forward_step(DeviceCommand& c) {
    if (c.batch == nullptr || c.batch->empty())
        throw SimulationError(std::string(name()) + ": a forward step needs its batch");
    bool prefilling = false;
    for (const BatchWork& w : *c.batch) prefilling = prefilling || !w.decode;
    const DraftDevice* dev = spec_ != nullptr ? spec_->device() : nullptr;
    // A draft device's drafting follows the pass with the GPU idle; a proposer on the GPU
    // (or a host lookup) keeps it busy.
    const double idle_ns = dev != nullptr ? c.extra_ns : 0.0;
    const double ns = timing_.step_ns(*c.batch, c.overlap_host) + c.extra_ns - idle_ns;
    const PowerState state = prefilling ? PowerState::prefill : PowerState::decode;
    StepWork work = timing_.work(*c.batch);
    work += StepWork{c.extra_flops, c.extra_bytes};
    const double watts = timing_.busy_w(power_->params(), state, work, ns);
    power_->set_state(state, watts);
    sc_core::wait(duration_ns(ns));
    power_->set_state(PowerState::idle);
    c.work_ns = ns + idle_ns;
    c.energy_j = (ns * watts + idle_ns * power_->params().idle_w) * kJoulesPerWattNs;
    if (idle_ns > 0.0 && draft_power_ != nullptr) {
        const double draft0 = draft_power_->energy_j();
        const double prefilling = c.draft_prefill_ns;
        const double joules_ns = dev->prefill_w * prefilling + dev->decode_w * (c.draft_busy_ns - prefilling) +
                                 dev->idle_w * std::max(0.0, idle_ns - c.draft_busy_ns);
        draft_power_->set_state(PowerState::decode, joules_ns / idle_ns);
        sc_core::wait(duration_ns(idle_ns));
        draft_power_->set_state(PowerState::idle);
        c.draft_energy_j = draft_power_->energy_j() - draft0;
    } else if (idle_ns > 0.0) {
        sc_core::wait(duration_ns(idle_ns));
    }
}

void GpuProxy::b_transport(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    DeviceCommand& c = command_of(trans);
    const int64_t n = command_count(trans);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    switch (command_op(trans)) {
        case DeviceOp::gpu_prefill:
        case DeviceOp::gpu_score:
            sync_annotated(delay);
            c.ok = prefill(n, c.context, c.abort, c.urgent || command_op(trans) == DeviceOp::gpu_score);
            c.produced = c.ok ? n : 0;
            c.energy_j = last_energy_j_;
            c.work_ns = last_work_ns_;
            return;
        case DeviceOp::gpu_decode:
            sync_annotated(delay);
            c.produced = decode(n, c.context, c.abort);
            c.ok = c.produced == n;
            return;
        case DeviceOp::gpu_decode_run:
            if (c.run == nullptr) throw SimulationError(std::string(name()) + ": a decode run needs its DecodeRun");
            sync_annotated(delay);
            c.produced = decode_run(*c.run, c.context, c.abort, static_cast<uint64_t>(c.request));
            c.ok = !(c.abort != nullptr && c.abort->requested);
            return;
        case DeviceOp::gpu_batch_decode:
            sync_annotated(delay);
            c.energy_j = 0.0;
            c.work_ns = 0.0;
            c.produced = batch_decode(c.context, c.next, c.abort, c.energy_j, c.work_ns, n,
                                      static_cast<uint64_t>(c.request));
            return;
        case DeviceOp::gpu_request: {
            if (n < 1) throw SimulationError(std::string(name()) + ": a request needs at least one output token");
            sync_annotated(delay);
            if (spec_ == nullptr) {
                serve_request(c.context, n, c);
                return;
            }
            const SpecDecoder::Decode d = serve_speculative(c.context, n, *spec_, static_cast<uint64_t>(c.request), c);
            c.passes = d.passes;
            c.drafted = d.drafted;
            c.accepted = d.accepted;
            c.draft_busy_ns = d.draft_prefill_ns + d.draft_busy_ns;
            return;
        }
        case DeviceOp::gpu_step:
            sync_annotated(delay);
            forward_step(c);
            return;
        case DeviceOp::gpu_abort:
            if (c.abort != nullptr) c.abort->request();
            return;
        default: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return;
    }
}

}  // namespace cosim
