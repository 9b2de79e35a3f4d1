// The target-alone system's run (AutoregressiveTop): its target GPUs and batching from the
// description, the trace's requests (prompt_tokens, output_tokens, optionally arrival_ns;
// events are not read), and the finished requests' columns in the names the step-level
// systems use plus first_token_ns, preemptions, recomputed_tokens and cached_prompt_tokens.
#include "sim_time.hpp"
#include "system_run.hpp"

#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "activity_log.hpp"
#include "autoregressive_top.hpp"
#include "decision_calls.hpp"
#include "draft_device.hpp"
#include "fpga_decoder_timing.hpp"
#include "fpga_power.hpp"
#include "errors.hpp"
#include "kernel_run.hpp"
#include "metric_columns.hpp"
#include "param_dicts.hpp"
#include "speculation_section.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

using Int64Array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

Int64Array int_column(const py::dict& table, const char* name) {
    if (!table.contains(name)) throw ConfigError(std::string("trace problems: no column '") + name + "'");
    Int64Array a = table[name].cast<Int64Array>();
    if (a.ndim() != 1) throw ConfigError(std::string("trace problems: column '") + name + "' is not 1-D");
    return a;
}

// A chunk of requests: each problem's prompt, output and arrival (its events are not needed),
// and the drafts a pass its recorded schedule sets (`first_pass`, `passes` into `schedule`).
// Live, a request has no output yet (0): its host asks the policy.
TraceChunk read_requests(const py::dict& problems, bool live) {
    const Int64Array prompt = int_column(problems, "prompt_tokens");
    const Int64Array output = int_column(problems, "output_tokens");
    const py::ssize_t n = prompt.shape(0);
    if (output.shape(0) != n) throw ConfigError("trace problems: output_tokens is not one value per problem");
    TraceChunk chunk;
    chunk.problems.resize(static_cast<size_t>(n));
    auto p = prompt.unchecked<1>();
    auto o = output.unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) {
        if (p(i) < 1 || (live ? o(i) != 0 : o(i) < 1))
            throw ConfigError("trace problems: row " + std::to_string(i) + " has no prompt or no output token");
        TraceProblem& t = chunk.problems[static_cast<size_t>(i)];
        t.prompt_tokens = static_cast<int32_t>(p(i));
        t.output_tokens = o(i);
    }
    if (problems.contains("schedule")) {
        const Int64Array values = int_column(problems, "schedule");
        const Int64Array first = int_column(problems, "first_pass");
        const Int64Array passes = int_column(problems, "passes");
        if (first.shape(0) != n || passes.shape(0) != n)
            throw ConfigError("trace problems: first_pass and passes are not one value per problem");
        auto v = values.unchecked<1>();
        auto f = first.unchecked<1>();
        auto c = passes.unchecked<1>();
        chunk.schedule.assign(v.data(0), v.data(0) + values.shape(0));
        for (py::ssize_t i = 0; i < n; ++i) {
            if (f(i) < 0 || c(i) < 0 || f(i) + c(i) > values.shape(0))
                throw ConfigError("trace problems: row " + std::to_string(i) +
                                  ": its draft_schedule lies outside the column");
            chunk.problems[static_cast<size_t>(i)].first_pass = f(i);
            chunk.problems[static_cast<size_t>(i)].passes = c(i);
        }
    }
    if (problems.contains("arrival_ns")) {
        const Int64Array arrival = int_column(problems, "arrival_ns");
        if (arrival.shape(0) != n) throw ConfigError("trace problems: arrival_ns is not one value per problem");
        auto a = arrival.unchecked<1>();
        for (py::ssize_t i = 0; i < n; ++i) {
            if (a(i) < 0) throw ConfigError("trace problems: row " + std::to_string(i) + " arrives before time 0");
            chunk.arrival_ns.push_back(a(i));
        }
    }
    return chunk;
}

// The finished requests as the columns the step-level systems return: each one's numbers in a
// ProblemMetrics (no draft, no PRM; its first output token is its first accepted step).
py::dict request_columns(const std::vector<ServedRequest>& rs) {
    std::vector<ProblemMetrics> ms(rs.size());
    for (size_t i = 0; i < rs.size(); ++i) {
        const ServedRequest& r = rs[i];
        ProblemMetrics& m = ms[i];
        m.request = r.request;
        m.arrival_units = r.arrival_units;
        m.slot = r.slot;
        m.devices[0] = m.devices[1] = -1;
        m.devices[2] = r.target_device;
        m.start_units = r.start_units;
        m.first_token_units = r.first_token_units;
        m.first_accept_units = r.first_token_units;  // every token it writes is kept
        m.end_units = r.end_units;
        m.generated_tokens = m.target_tokens = r.output_tokens;
        m.busy_ns[2] = r.busy_ns;
        m.work_ns[2] = r.work_ns;
        m.energy_j[2] = r.energy_j;
        m.preemptions = r.preemptions;
        m.recomputed_tokens = r.recomputed_tokens;
        m.cached_prompt_tokens = r.cached_prompt_tokens;
        if (r.draft_busy_ns > 0.0 || r.draft_energy_j > 0.0) {
            m.devices[0] = r.target_device;  // its draft device sits beside its GPU
            m.busy_ns[0] = r.draft_busy_ns;
            m.work_ns[0] = r.draft_busy_ns;
            m.energy_j[0] = r.draft_energy_j;
        }
        m.verify_passes = r.verify_passes;
        m.drafted_tokens = r.drafted_tokens;
        m.kept_draft_tokens = r.accepted_tokens;
    }
    return metric_columns(ms);
}

// Each request's activities on its GPU: the serving stack's wait, the prefill that gave
// its first token, the decodes after it (batched: the span its decodes took).
py::dict activity_columns(const std::vector<ServedRequest>& rs) {
    struct Act {
        int64_t request;
        ActivityKind kind;
        uint64_t start, end;
        int64_t tokens;
    };
    std::vector<Act> acts;
    for (const ServedRequest& r : rs) {
        if (r.overhead_end_units > r.start_units)
            acts.push_back({r.request, ActivityKind::request, r.start_units, r.overhead_end_units, 0});
        acts.push_back(
            {r.request, ActivityKind::prompt_prefill, r.overhead_end_units, r.first_token_units, r.prompt_tokens});
        if (r.output_tokens > 1)
            acts.push_back({r.request, ActivityKind::refine, r.first_token_units, r.end_units, r.output_tokens - 1});
    }
    const auto n = static_cast<py::ssize_t>(acts.size());
    py::array_t<int32_t> problem(n), step(n);
    py::array_t<int8_t> role(n), kind(n);
    py::array_t<double> start(n), end(n), wasted(n);
    py::array_t<int64_t> tokens(n);
    auto p = problem.mutable_unchecked<1>();
    auto st = step.mutable_unchecked<1>();
    auto ro = role.mutable_unchecked<1>();
    auto k = kind.mutable_unchecked<1>();
    auto s0 = start.mutable_unchecked<1>();
    auto s1 = end.mutable_unchecked<1>();
    auto w = wasted.mutable_unchecked<1>();
    auto t = tokens.mutable_unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) {
        const Act& a = acts[static_cast<size_t>(i)];
        p(i) = static_cast<int32_t>(a.request);
        st(i) = 1;
        ro(i) = static_cast<int8_t>(Role::target);
        k(i) = static_cast<int8_t>(a.kind);
        s0(i) = units_to_ns(a.start);
        s1(i) = units_to_ns(a.end);
        w(i) = 0.0;
        t(i) = a.tokens;
    }
    py::list roles, kinds;
    for (int i = 0; i < kRoleCount; ++i) roles.append(role_name(static_cast<Role>(i)));
    for (int i = 0; i < kActivityKindCount; ++i) kinds.append(activity_kind_name(static_cast<ActivityKind>(i)));
    py::dict out;
    out["problem"] = problem;
    out["device_code"] = role;
    out["kind_code"] = kind;
    out["step"] = step;
    out["start_ns"] = start;
    out["end_ns"] = end;
    out["tokens"] = tokens;
    out["wasted_share"] = wasted;
    out["devices"] = roles;
    out["kinds"] = kinds;
    return out;
}

// The target-alone system's run: its top, and the requests kept for the activities.
class AutoregressiveRun : public SystemRun {
public:
    AutoregressiveRun(const py::dict& system, const RunOptions& o);

    RequestDispatcher& dispatcher() override { return top_->dispatcher(); }
    // Each request's prompt, output, arrival and recorded drafts; its events are not needed.
    TraceChunk read_chunk(const py::tuple& tables) override {
        return read_requests(tables[1].cast<py::dict>(), live_);
    }
    bool answer(py::object& error) override {
        if (!broker_.pending()) return false;
        // Live: the policy answers, the hosts go on at the same instant.
        if (!answer_pending(broker_, decide_, error)) sc_core::sc_stop();
        return true;
    }
    py::dict take_finished() override {
        const std::vector<ServedRequest> done = top_->take_finished();
        for (const ServedRequest& r : done) {
            busy_[static_cast<size_t>(r.target_device)] += r.busy_ns;
            draft_busy_[static_cast<size_t>(r.target_device)] += r.draft_busy_ns;
        }
        if (keep_activities_) kept_.insert(kept_.end(), done.begin(), done.end());
        taken_ += done.size();
        return request_columns(done);
    }
    size_t taken() const override { return taken_; }
    size_t pending() const override { return top_->pending(); }
    std::exception_ptr error() const override { return top_->error(); }
    void results(py::dict& out) override;
    const char* unit() const override { return "requests"; }

private:
    bool keep_activities_;
    bool live_;
    py::object decide_;
    DecisionBroker broker_;
    std::unique_ptr<AutoregressiveTop> top_;
    std::vector<ServedRequest> kept_;  // every request, for the activities
    std::vector<double> busy_;         // each GPU's time on its requests (batch 1)
    std::vector<double> draft_busy_;   // split decoding: each GPU's draft device's
    size_t taken_ = 0;
};

// Split decoding's draft device: its decoder's timing (an FPGA's design, or a GPU's
// formula), its state powers (an FPGA's derived from its design, a GPU's nominal load), the
// links to it and to the target, and the bytes of a token and of a verdict on them.
std::shared_ptr<const DraftDevice> read_draft_device(const py::dict& system, PowerParams& power) {
    const py::dict draft = section(system, "draft");
    const ModelSpec model = model_spec(section(draft, "model"));
    auto device = std::make_shared<DraftDevice>();
    power = power_params(section(draft, "power"));
    if (draft["kind"].cast<std::string>() == "fpga") {
        auto timing = std::make_shared<const FpgaDecoderTiming>("draft", fpga_params(section(draft, "fpga")),
                                                                hbm_params(section(draft, "hbm")), model,
                                                                fpga_profile(draft["fpga_profile"]));
        power = fpga_board_power("draft", power, *timing, model);
        device->timing = timing;
    } else {
        const LatencyProfile profile = draft.contains("profile") ? optional_profile(draft["profile"]) : LatencyProfile();
        auto timing = std::make_shared<const GpuTiming>("draft", gpu_params(section(draft, "gpu")), model, profile);
        power = nominal_gpu_power(power, *timing, "draft");
        device->timing = std::shared_ptr<const LatencyModel>(timing, &timing->latency());
    }
    device->draft_link = pcie_params(section(draft, "link"));
    device->target_link = pcie_params(section(section(system, "target"), "link"));
    const py::dict relay = section(draft, "relay");
    device->token_bytes = relay["token_bytes"].cast<int64_t>();
    device->control_bytes = relay["control_bytes"].cast<int64_t>();
    device->decode_w = power.decode_w;
    device->prefill_w = power.prefill_w;
    device->idle_w = power.idle_w;
    return device;
}

AutoregressiveSpec read_spec(const py::dict& system, const RunOptions& o) {
    const py::dict target = section(system, "target");
    AutoregressiveSpec spec;
    spec.gpu = gpu_params(section(target, "gpu"));
    spec.model = model_spec(section(target, "model"));
    spec.power = power_params(section(target, "power"));
    spec.profile = target.contains("profile") ? optional_profile(target["profile"]) : LatencyProfile();
    spec.layout = parallel_layout(target, spec.model, "target");
    spec.target_devices = cluster_shape(section(system, "cluster")).target_devices;
    const BatchingSettings batching = batching_settings(section(system, "batching"));
    spec.batching = batching.enabled;
    // vLLM's own names for the batching settings (SchedulerConfig, CacheConfig).
    spec.scheduler.max_num_seqs = batching.max_batch;
    spec.scheduler.max_num_batched_tokens = batching.token_budget;
    spec.scheduler.block_size = batching.block_size;
    spec.scheduler.num_gpu_blocks = batching.num_gpu_blocks;
    spec.scheduler.prefix_caching = batching.prefix_caching;
    spec.async_scheduling = batching.async_scheduling;
    spec.shared_prefix_tokens = o.shared_prefix_tokens;
    if (system.contains("speculation")) {
        // Token-level speculative decoding: the drafts a pass and their acceptance, and the
        // proposer's model on the target's GPU (none: a lookup on the host, or a draft device).
        const SpeculationSection s = read_speculation(section(system, "speculation"));
        spec.speculation = s.setup;
        if (system.contains("draft")) spec.draft_device = read_draft_device(system, spec.draft_power);
        spec.drafter = s.drafter;
    }
    spec.validate();
    return spec;
}

AutoregressiveRun::AutoregressiveRun(const py::dict& system, const RunOptions& o)
    : keep_activities_(o.keep_activities), live_(!o.decide.is_none()), decide_(o.decide) {
    const AutoregressiveSpec spec = read_spec(system, o);
    busy_.assign(static_cast<size_t>(spec.target_devices), 0.0);
    draft_busy_.assign(static_cast<size_t>(spec.target_devices), 0.0);
    claim_process();
    top_ = std::make_unique<AutoregressiveTop>("autoregressive", spec);
    if (live_) top_->set_decisions(&broker_, o.ask_drafts);
}

void AutoregressiveRun::results(py::dict& out) {
    py::list devices;
    const bool batched = top_->engine(0) != nullptr;
    for (int i = 0; i < top_->gpus(); ++i) {
        DeviceMetrics entry;
        entry.role = "target";
        entry.index = i;
        entry.energy_j = top_->gpu(i).power().energy_j();
        if (batched) {
            const VllmEngine& e = *top_->engine(i);
            entry.busy_ns = e.busy_ns();
            entry.held_ns = e.busy_ns();  // the engine's steps are all it holds the GPU for
            entry.iterations = e.iterations();
            entry.batched_sequences = e.batched_sequences();
            entry.kv_limited_iterations = e.kv_limited_iterations();
            entry.preemptions = e.preemptions();
            entry.kv_blocks = e.usable_blocks();
        } else {
            entry.busy_ns = busy_[static_cast<size_t>(i)];
            entry.held_ns = top_->server(i)->held_ns();  // its requests' overheads too
        }
        devices.append(device_entry(entry, batched ? DeviceRun::vllm : DeviceRun::autoregressive));
    }
    for (int i = 0; i < top_->gpus() && top_->draft_power(i) != nullptr; ++i) {
        DeviceMetrics entry;
        entry.role = "draft";
        entry.index = i;
        entry.energy_j = top_->draft_power(i)->energy_j();
        entry.busy_ns = draft_busy_[static_cast<size_t>(i)];
        entry.held_ns = entry.busy_ns;
        devices.append(device_entry(entry, DeviceRun::autoregressive));
    }
    out["devices"] = devices;
    if (keep_activities_) out["activities"] = activity_columns(kept_);
}

}  // namespace

std::unique_ptr<SystemRun> autoregressive_run(const py::dict& system, const RunOptions& options) {
    return std::make_unique<AutoregressiveRun>(system, options);
}

}  // namespace cosim::bindings
