// The step-level systems' run (StepwiseTop): the description read into a SystemSpec, the
// trace's events and problems read a chunk at a time (live: problems without events, each
// event made from the policy's answers, decision_calls.hpp), waveforms of one request slot,
// each device's totals and, on request, every activity and the KVMU's record.
#include "sim_time.hpp"
#include "system_run.hpp"

#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <limits>
#include <memory>
#include <vector>

#include "activity_log.hpp"
#include "device_server.hpp"
#include "draft_unit.hpp"
#include "errors.hpp"
#include "fpga_draft_accelerator.hpp"
#include "speculation_section.hpp"
#include "gpu_proxy.hpp"
#include "stepwise_top.hpp"
#include "decision_calls.hpp"
#include "host_orchestrator.hpp"
#include "kernel_run.hpp"
#include "metric_columns.hpp"
#include "param_dicts.hpp"
#include "param_rules.hpp"
#include "pcie_fabric.hpp"
#include "stepwise_top.hpp"
#include "waveform_probe.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

// The options the declarations mark as read (cosim/schema/_toggles.py), each by its declared
// name and checked by its declared rule.
WorkflowOptions read_options(const py::dict& d) {
    WorkflowOptions o;
    const std::string where = "options";
#define COSIM_READ_OPTION(type, name, init, rule, read)                              \
    if (read) {                                                                      \
        if (!d.contains(#name)) throw ConfigError(where + "." #name ": missing");    \
        o.name = d[#name].cast<type>();                                              \
        ::cosim::check_##rule(where + "." #name, static_cast<double>(o.name));       \
    }
    COSIM_WORKFLOW_OPTIONS(COSIM_READ_OPTION)
#undef COSIM_READ_OPTION
    return o;
}

// The named columns of one table of a trace chunk, each a 1-D int64 array of one length.
class Columns {
public:
    Columns(const py::dict& table, std::string what) : table_(table), what_(std::move(what)) {}
    py::detail::unchecked_reference<int64_t, 1> operator[](const char* name) {
        if (!table_.contains(name)) throw ConfigError("trace " + what_ + ": no column '" + name + "'");
        kept_.push_back(table_[name].cast<py::array_t<int64_t, py::array::c_style | py::array::forcecast>>());
        const auto& a = kept_.back();
        if (a.ndim() != 1 || (rows_ >= 0 && a.shape(0) != rows_))
            throw ConfigError("trace " + what_ + ": column '" + name + "' is not one value per row");
        rows_ = a.shape(0);
        return a.unchecked<1>();
    }
    py::ssize_t rows() const { return rows_; }

private:
    const py::dict& table_;
    std::string what_;
    std::deque<py::array_t<int64_t>> kept_;  // the arrays the views read
    py::ssize_t rows_ = -1;
};

std::vector<TraceEvent> read_events(const py::dict& table) {
    Columns c(table, "events");
    auto kind = c["kind"], step = c["step"], tokens = c["tokens"], accepted = c["accepted"], scored = c["scored"];
    std::vector<TraceEvent> out(static_cast<size_t>(c.rows()));
    for (py::ssize_t i = 0; i < c.rows(); ++i) {
        if (kind(i) < 0 || kind(i) >= kEventKindCount)
            throw ConfigError("trace events: unknown kind " + std::to_string(kind(i)));
        out[static_cast<size_t>(i)] = TraceEvent{static_cast<EventKind>(kind(i)), static_cast<int32_t>(step(i)),
                                                 static_cast<int32_t>(tokens(i)), accepted(i) != 0, scored(i) != 0};
    }
    return out;
}

std::vector<TraceProblem> read_problems(const py::dict& table, size_t events, bool live) {
    Columns c(table, "problems");
    auto prompt = c["prompt_tokens"], first = c["first_event"], count = c["events"];
    std::vector<TraceProblem> out(static_cast<size_t>(c.rows()));
    for (py::ssize_t i = 0; i < c.rows(); ++i) {
        TraceProblem p{static_cast<int32_t>(prompt(i)), first(i), count(i)};
        if (p.prompt_tokens <= 0 || p.first_event < 0 || (live ? p.events != 0 : p.events <= 0) ||
            static_cast<size_t>(p.first_event + p.events) > events)
            throw ConfigError("trace problems: row " + std::to_string(i) + " is inconsistent");
        out[static_cast<size_t>(i)] = p;
    }
    return out;
}

std::vector<int64_t> read_arrivals(const py::dict& table, size_t problems) {
    const auto a = table["arrival_ns"].cast<py::array_t<int64_t, py::array::c_style | py::array::forcecast>>();
    if (a.ndim() != 1 || static_cast<size_t>(a.shape(0)) != problems)
        throw ConfigError("trace problems: column 'arrival_ns' is not one value per row");
    auto v = a.unchecked<1>();
    std::vector<int64_t> out(problems);
    for (py::ssize_t i = 0; i < a.shape(0); ++i) {
        if (v(i) < 0) throw ConfigError("trace problems: row " + std::to_string(i) + " arrives before time 0");
        out[static_cast<size_t>(i)] = v(i);
    }
    return out;
}

// A GPU role's measured latency profile, when its section carries one.
LatencyProfile profile_of(const py::dict& role) {
    return role.contains("profile") ? optional_profile(role["profile"]) : LatencyProfile();
}

SystemSpec read_system(const py::dict& system) {
    SystemSpec spec;
    spec.options = read_options(section(system, "options"));
    const py::dict draft_cfg = section(system, "draft");
    const py::dict prm_cfg = section(system, "prm");
    const py::dict target_cfg = section(system, "target");
    spec.draft_on_fpga = draft_cfg["kind"].cast<std::string>() == "fpga";
    spec.draft_model = model_spec(section(draft_cfg, "model"));
    spec.prm_model = model_spec(section(prm_cfg, "model"));
    spec.target_model = model_spec(section(target_cfg, "model"));
    spec.prm_gpu = gpu_params(section(prm_cfg, "gpu"));
    spec.target_gpu = gpu_params(section(target_cfg, "gpu"));
    spec.prm_profile = profile_of(prm_cfg);
    spec.target_profile = profile_of(target_cfg);
    spec.prm_layout = parallel_layout(prm_cfg, spec.prm_model, "prm");
    spec.target_layout = parallel_layout(target_cfg, spec.target_model, "target");
    spec.draft_power = power_params(section(draft_cfg, "power"));
    spec.prm_power = power_params(section(prm_cfg, "power"));
    spec.target_power = power_params(section(target_cfg, "power"));
    spec.links = {pcie_params(section(draft_cfg, "link")), pcie_params(section(prm_cfg, "link")),
                  pcie_params(section(target_cfg, "link"))};
    if (spec.draft_on_fpga) {
        spec.fpga = fpga_params(section(draft_cfg, "fpga"));
        spec.fpga_profile = fpga_profile(draft_cfg["fpga_profile"]);
        spec.hbm = hbm_params(section(draft_cfg, "hbm"));
        spec.draft_on_target_gpu = gpu_params(section(draft_cfg, "prefill_gpu"));
    } else {
        spec.draft_gpu = gpu_params(section(draft_cfg, "gpu"));
        spec.draft_gpu_profile = profile_of(draft_cfg);
        spec.draft_layout = parallel_layout(draft_cfg, spec.draft_model, "draft");
    }
    spec.shape = cluster_shape(section(system, "cluster"));
    if (spec.shape.draft_boards_per_host_link > 1) spec.host_link = pcie_params(section(system, "host_link"));
    const BatchingSettings b = batching_settings(section(system, "batching"));
    spec.batching = b.enabled;
    spec.batch.max_batch = static_cast<int>(b.max_batch);
    spec.batch.token_budget = b.token_budget;
    spec.batch.gpu_memory_utilization = b.gpu_memory_utilization;
    spec.batch.verify_first = b.verify_first();
    if (system.contains("speculation")) {
        // The target decodes its refinements speculatively (toggles.target_speculation).
        const SpeculationSection s = read_speculation(section(system, "speculation"));
        spec.target_speculation = s.setup;
        spec.target_drafter = s.drafter;
    }
    if (system.contains("draft_speculation")) {
        // A draft GPU decodes its drafted steps speculatively (toggles.draft_speculation).
        const SpeculationSection s = read_speculation(section(system, "draft_speculation"));
        spec.draft_speculation = s.setup;
        spec.draft_drafter = s.drafter;
    }
    return spec;
}

// The step-level systems' run: the top, the live decisions' broker, the waveform probe
// and the KVMU's record.
class StepwiseRun : public SystemRun {
public:
    StepwiseRun(const py::dict& system, const RunOptions& o);

    RequestDispatcher& dispatcher() override { return top_->dispatcher(); }
    TraceChunk read_chunk(const py::tuple& tables) override {
        TraceChunk chunk;
        chunk.events = read_events(tables[0].cast<py::dict>());
        const py::dict problems = tables[1].cast<py::dict>();
        chunk.problems = read_problems(problems, chunk.events.size(), live_);
        if (problems.contains("arrival_ns")) chunk.arrival_ns = read_arrivals(problems, chunk.problems.size());
        return chunk;
    }
    py::dict take_finished() override { return metric_columns(top_->dispatcher().take_metrics()); }
    size_t taken() const override { return top_->dispatcher().taken(); }
    size_t pending() const override { return top_->dispatcher().metrics().size(); }
    bool answer(py::object& error) override {
        if (!broker_.pending()) return false;
        // Live: the policy answers, the hosts go on at the same instant.
        if (!answer_pending(broker_, options_.decide, error)) sc_core::sc_stop();
        return true;
    }
    std::exception_ptr error() const override { return top_->error(); }
    void results(py::dict& out) override;

private:
    struct KvmuRecord {
        int32_t problem;
        double time_ns;
        std::string op;
        KvmuPointers ptr;
        std::string mode;
    };
    void watch(const py::dict& system);
    py::dict activities() const;

    RunOptions options_;
    bool live_;
    SystemSpec spec_;
    std::unique_ptr<StepwiseTop> top_;
    DecisionBroker broker_;
    std::vector<KvmuRecord> kvmu_log_;
    std::unique_ptr<WaveformProbe> probe_;
};

StepwiseRun::StepwiseRun(const py::dict& system, const RunOptions& o)
    : options_(o), live_(!o.decide.is_none()), spec_(read_system(system)) {
    spec_.options.keep_activities = o.keep_activities;
    claim_process();
    top_ = std::make_unique<StepwiseTop>("system", spec_);
    if (live_)
        for (int slot = 0; slot < top_->slots(); ++slot)
            top_->slot(slot).set_decisions(&broker_, o.max_backtracks, o.scored_refinements);
    watch(system);
}

}  // namespace

std::unique_ptr<SystemRun> stepwise_run(const py::dict& system, const RunOptions& options) {
    return std::make_unique<StepwiseRun>(system, options);
}

// Waveforms follow one request slot (the first unless told), within a window of time:
// its requests, its draft context and the draft device, PRM GPU and target GPU it is
// bound to (which other slots share). The KVMU's record keeps every slot's verdicts.
void StepwiseRun::watch(const py::dict& system) {
    StepwiseTop& cluster = *top_;
    const bool keep_activities = options_.keep_activities;
    const bool vcd_every_token = options_.vcd_every_token;
    int watched = 0;
    double window_start_ns = 0.0;
    double window_end_ns = std::numeric_limits<double>::infinity();
    if (system.contains("waveform")) {
        const py::dict w = system["waveform"].cast<py::dict>();
        watched = w["slot"].cast<int>();
        window_start_ns = w["start_ns"].cast<double>();
        window_end_ns = w["end_ns"].cast<double>();
        if (watched < 0 || watched >= cluster.slots())
            throw ConfigError("waveform slot " + std::to_string(watched) + ": the cluster has slots 0 to " +
                              std::to_string(cluster.slots() - 1));
    }
    HostOrchestrator& host = cluster.slot(watched);
    DraftUnit* draft = &cluster.draft_unit(watched);
    if (!options_.vcd_path.empty()) {
        const ClusterShape& shape = spec_.shape;
        const std::array<int, 3> bound = cluster.bound(watched);
        // A target that scores the drafts itself (SpecReason) is the only GPU: no PRM to show.
        const bool judge = spec_.options.verifier_is_target;
        Power* meters[3] = {&draft->power(), judge ? nullptr : cluster.device("prm", bound[1]).power,
                            cluster.device("target", bound[2]).power};
        const auto boards = static_cast<size_t>(shape.draft_devices);
        const auto prms = judge ? size_t{0} : static_cast<size_t>(shape.prm_devices);
        const size_t target_link = boards + prms + static_cast<size_t>(bound[2]);
        probe_ = std::make_unique<WaveformProbe>(
            "waveforms", options_.vcd_path, cluster.fabric(),
            std::array<double, 3>{meters[0]->params().idle_w, judge ? 0.0 : meters[1]->params().idle_w,
                                  meters[2]->params().idle_w},
            vcd_every_token,
            std::array<size_t, 3>{static_cast<size_t>(bound[0]),
                                  judge ? target_link : boards + static_cast<size_t>(bound[1]), target_link},
            window_start_ns, window_end_ns, !judge);
        WaveformProbe* probe = probe_.get();
        // The KVMU's RTL, when it is in the loop, shows its own pins, within the window as
        // the probe's signals are.
        draft->kvmu().trace(probe->file(), "kvmu_rtl");
        draft->kvmu().show_trace(window_start_ns <= 0.0);
        probe->set_window_observer([draft](bool open) { draft->kvmu().show_trace(open); });
        for (int i = 0; i < 3; ++i)
            if (meters[i] != nullptr)
                meters[i]->set_observer([probe, i](PowerState s, double w) { probe->on_power(i, s, w); });
        host.set_step_observer([probe](int32_t p, int32_t s) { probe->on_step(p, s); });
        if (!vcd_every_token)
            host.set_sync_summary_observer([probe](bool active, double w) { probe->on_sync_summary(active, w); });
    }
    WaveformProbe* probe = probe_.get();
    for (int slot = 0; slot < cluster.slots() && (keep_activities || probe); ++slot) {
        const ActivityLog& log = cluster.log(slot);
        cluster.draft_unit(slot).kvmu().set_observer(
            [this, probe, keep_activities, vcd_every_token, &log = log, mine = slot == watched](const char* op,
                                                                                                const Kvmu& k) {
                const bool drafted = std::strcmp(op, "speculate_token") == 0;
                // Drafted tokens move the waveform's pointers in token detail only; shadow-sync
                // passes arrive one by one in token detail and a batch at a time otherwise.
                if (probe && mine && (vcd_every_token || !drafted)) probe->on_kvmu(k);
                // The record keeps verdicts and mode changes; per-token moves would swamp it.
                if (!keep_activities || drafted || std::strcmp(op, "sync_token") == 0) return;
                kvmu_log_.push_back(
                    KvmuRecord{log.problem(), now_ns(), op, k.pointers(), kvmu_mode_name(k.mode())});
            },
            probe && vcd_every_token && slot == 0);
    }
}

// Each device over the whole run: its energy (idle included), the time it computed or
// transferred (its meter's time out of idle) and the time jobs held it.
void StepwiseRun::results(py::dict& out) {
    py::list devices;
    for (const StepwiseTop::Device& d : top_->devices()) {
        DeviceMetrics entry;
        entry.role = d.role;
        entry.index = d.index;
        entry.energy_j = d.power->energy_j();
        entry.busy_ns = d.power->time_ns(PowerState::prefill) + d.power->time_ns(PowerState::decode) +
                        d.power->time_ns(PowerState::transfer);
        // A batching GPU is held by its iterations alone; other devices by their jobs.
        entry.held_ns = d.batcher ? d.batcher->busy_ns() : d.server->held_ns();
        entry.iterations = d.batcher ? d.batcher->iterations() : 0;
        entry.batched_sequences = d.batcher ? d.batcher->batched_sequences() : 0;
        entry.kv_limited_iterations = d.batcher ? d.batcher->kv_limited_iterations() : 0;
        // Each direction books the same time for a group's collectives: one reports it.
        entry.collective_ns = d.link->collective_ns(LinkDirection::host_to_device);
        entry.collective_wait_ns = d.link->collective_wait_ns();
        entry.transfer_wait_ns = d.link->transfer_wait_ns();
        devices.append(device_entry(entry, DeviceRun::workflow));
    }
    out["devices"] = devices;
    if (!options_.keep_activities) return;
    out["activities"] = activities();
    py::list kvmu;
    for (const KvmuRecord& r : kvmu_log_)
        kvmu.append(py::make_tuple(r.problem, r.time_ns, r.op, r.ptr.valid, r.ptr.curr, r.ptr.ahead, r.mode));
    out["kvmu"] = kvmu;
}

// Columns, not a tuple per activity: a long run keeps hundreds of thousands.
py::dict StepwiseRun::activities() const {
    const std::vector<Activity>& all = top_->dispatcher().kept();
    const auto n = static_cast<py::ssize_t>(all.size());
    py::array_t<int32_t> problem(n), step(n);
    py::array_t<int8_t> role(n), kind(n);
    py::array_t<double> start(n), end(n), wasted(n), work(n), ready(n);
    py::array_t<int64_t> tokens(n);
    py::array_t<int32_t> link(n);
    auto p = problem.mutable_unchecked<1>();
    auto st = step.mutable_unchecked<1>();
    auto r = role.mutable_unchecked<1>();
    auto k = kind.mutable_unchecked<1>();
    auto s0 = start.mutable_unchecked<1>();
    auto s1 = end.mutable_unchecked<1>();
    auto w = wasted.mutable_unchecked<1>();
    auto t = tokens.mutable_unchecked<1>();
    auto wk = work.mutable_unchecked<1>();
    auto rd = ready.mutable_unchecked<1>();
    auto ln = link.mutable_unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) {
        const Activity& a = all[static_cast<size_t>(i)];
        p(i) = a.problem;
        st(i) = a.step;
        r(i) = static_cast<int8_t>(a.role);
        k(i) = static_cast<int8_t>(a.kind);
        s0(i) = a.start_ns;
        s1(i) = a.end_ns;
        w(i) = a.wasted_share;
        t(i) = a.tokens;
        wk(i) = a.work_ns;
        rd(i) = a.ready_ns;
        ln(i) = a.link;
    }
    py::list roles, kinds;
    for (int i = 0; i < kRoleCount; ++i) roles.append(role_name(static_cast<Role>(i)));
    for (int i = 0; i < kActivityKindCount; ++i) kinds.append(activity_kind_name(static_cast<ActivityKind>(i)));
    py::dict acts;
    acts["problem"] = problem;
    acts["device_code"] = role;
    acts["kind_code"] = kind;
    acts["step"] = step;
    acts["start_ns"] = start;
    acts["end_ns"] = end;
    acts["tokens"] = tokens;
    acts["wasted_share"] = wasted;
    acts["work_ns"] = work;
    acts["ready_ns"] = ready;
    acts["link"] = link;
    acts["devices"] = roles;
    acts["kinds"] = kinds;
    py::list links;  // what the column `link` indexes
    for (size_t i = 0; i < top_->fabric().links(); ++i) links.append(top_->fabric().link(i).basename());
    acts["links"] = links;
    return acts;
}

}  // namespace cosim::bindings
