#include "sim_time.hpp"
#include "autoregressive_run.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>

#include "activity_log.hpp"
#include "autoregressive_host.hpp"
#include "errors.hpp"
#include "kernel_run.hpp"
#include "metric_columns.hpp"
#include "param_dicts.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

using Int64Array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

py::dict section(const py::dict& d, const char* key) {
    if (!d.contains(key)) throw ConfigError(std::string("system.") + key + ": missing");
    return d[key].cast<py::dict>();
}

Int64Array int_column(const py::dict& table, const char* name) {
    if (!table.contains(name)) throw ConfigError(std::string("trace problems: no column '") + name + "'");
    Int64Array a = table[name].cast<Int64Array>();
    if (a.ndim() != 1) throw ConfigError(std::string("trace problems: column '") + name + "' is not 1-D");
    return a;
}

// A chunk of requests: each problem's prompt, output and arrival (its events are not needed).
TraceChunk read_chunk(const py::dict& problems) {
    const Int64Array prompt = int_column(problems, "prompt_tokens");
    const Int64Array output = int_column(problems, "output_tokens");
    const py::ssize_t n = prompt.shape(0);
    if (output.shape(0) != n) throw ConfigError("trace problems: output_tokens is not one value per problem");
    TraceChunk chunk;
    chunk.problems.resize(static_cast<size_t>(n));
    auto p = prompt.unchecked<1>();
    auto o = output.unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) {
        if (p(i) < 1 || o(i) < 1)
            throw ConfigError("trace problems: row " + std::to_string(i) + " has no prompt or no output token");
        TraceProblem& t = chunk.problems[static_cast<size_t>(i)];
        t.prompt_tokens = static_cast<int32_t>(p(i));
        t.output_tokens = o(i);
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

// The finished requests as the columns simulate_workflow returns: each one's numbers in a
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

struct Gpus {
    std::vector<std::unique_ptr<GpuProxy>> proxies;
    std::vector<std::unique_ptr<DeviceServer>> servers;
    std::vector<std::unique_ptr<VllmEngine>> engines;
    std::vector<AutoregressiveGpu> devices;
};

std::string gpu_name(int index, int count) {
    return count == 1 ? std::string("target") : "target" + std::to_string(index);
}

}  // namespace

py::dict simulate_autoregressive(const py::dict& system, const py::function& next_chunk, bool keep_activities) {
    const py::dict target = section(system, "target");
    const GpuParams gpu = gpu_params(section(target, "gpu"));
    const ModelSpec model = model_spec(section(target, "model"));
    const PowerParams power = power_params(section(target, "power"));
    const LatencyProfile profile =
        target.contains("profile") ? optional_profile(target["profile"]) : LatencyProfile();
    const ClusterShape shape = cluster_shape(section(system, "cluster"));
    const int count = static_cast<int>(shape.target_devices);
    const BatchingSettings batching = batching_settings(section(system, "batching"));
    const bool batched = batching.enabled;
    // vLLM's own names for the batching settings (SchedulerConfig, CacheConfig).
    VllmSchedulerParams sched;
    sched.max_num_seqs = batching.max_batch;
    sched.max_num_batched_tokens = batching.token_budget;
    sched.block_size = batching.block_size;
    sched.num_gpu_blocks = batching.num_gpu_blocks;
    sched.prefix_caching = batching.prefix_caching;
    const bool async = batching.async_scheduling;
    sched.max_model_len = model.context_window;
    const int64_t shared_prefix = system["shared_prefix_tokens"].cast<int64_t>();
    if (shared_prefix < 0) throw ConfigError("shared_prefix_tokens: must be >= 0");

    const int64_t wanted = batched ? shape.target_devices * sched.max_num_seqs : shape.target_devices;
    if (wanted + shape.target_devices > COSIM_MAX_THREADS)
        throw ConfigError("batching.max_batch: " + std::to_string(wanted) + " request slots on " +
                          std::to_string(count) + " GPUs, past the engine's limit of " +
                          std::to_string(COSIM_MAX_THREADS) + " simulated threads");

    claim_process();
    // Batch 1: one request at a time per GPU, so one slot each; batched: enough slots that
    // the engine, not the slots, limits what runs (max_num_seqs per GPU).
    const int slots = static_cast<int>(wanted);
    RequestDispatcher dispatcher("dispatcher", slots);
    Gpus g;
    for (int i = 0; i < count; ++i) {
        const std::string name = gpu_name(i, count);
        AutoregressiveGpu d;
        d.index = i;
        d.request_overhead_ns = gpu.request_overhead_ns;
        d.context_window = model.context_window;
        g.proxies.push_back(std::make_unique<GpuProxy>(name.c_str(), gpu, model, power, profile, !batched));
        d.gpu = g.proxies.back().get();
        if (batched) {
            // The engine is the GPU's one initiator, a command per step, and keeps the KV
            // cache in its own blocks.
            g.engines.push_back(std::make_unique<VllmEngine>((name + "_engine").c_str(), sched, async));
            g.engines.back()->gpu.bind(d.gpu->host);
            d.engine = g.engines.back().get();
        } else {
            g.servers.push_back(std::make_unique<DeviceServer>((name + "_server").c_str()));
            d.server = g.servers.back().get();
        }
        g.devices.push_back(d);
    }
    std::vector<ServedRequest> done;
    std::vector<ServedRequest> kept;  // every request, for the activities
    std::vector<std::unique_ptr<AutoregressiveHost>> hosts;
    for (int s = 0; s < slots; ++s)
        hosts.push_back(std::make_unique<AutoregressiveHost>(("host" + std::to_string(s)).c_str(), dispatcher, s,
                                                             g.devices[static_cast<size_t>(s % count)], shared_prefix,
                                                             done));
    std::vector<double> busy(static_cast<size_t>(count), 0.0);
    size_t fed = 0, returned = 0;
    double feed_s = 0.0;
    py::object feed_error;
    auto take = [&]() {
        for (const ServedRequest& r : done) busy[static_cast<size_t>(r.target_device)] += r.busy_ns;
        if (keep_activities) kept.insert(kept.end(), done.begin(), done.end());
        returned += done.size();
        py::dict cols = request_columns(done);
        done.clear();
        return cols;
    };
    auto feed = [&]() {
        if (!dispatcher.wants_chunk()) return false;
        const auto start = std::chrono::steady_clock::now();
        TraceChunk chunk;
        const py::dict finished = take();
        PyObject* raw_next = PyObject_CallOneArg(next_chunk.ptr(), finished.ptr());
        if (raw_next == nullptr) {
            feed_error = py::error_already_set().value();
            PyErr_Clear();
            dispatcher.supply(std::move(chunk));
            return true;
        }
        const py::object next = py::reinterpret_steal<py::object>(raw_next);
        if (!next.is_none()) {
            const auto tables = next.cast<py::tuple>();
            if (tables.size() != 2) throw ConfigError("trace chunk: expected (events, problems)");
            chunk = read_chunk(tables[1].cast<py::dict>());
            if (chunk.problems.empty()) throw ConfigError("trace chunk: no problems (None ends the trace)");
            fed += chunk.problems.size();
        }
        dispatcher.supply(std::move(chunk));
        feed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return true;
    };
    auto error = [&]() -> std::exception_ptr {
        for (const auto& s : g.servers)
            if (s->error()) return s->error();
        for (const auto& e : g.engines)
            if (e->error()) return e->error();
        for (const auto& h : hosts)
            if (h->error()) return h->error();
        return dispatcher.error();
    };
    const RunStats stats = run_to_completion(error, feed);
    py::dict out;
    out["wall_s"] = stats.wall_s - feed_s;
    out["feed_s"] = feed_s;
    out["sim_ns"] = stats.sim_ns;
    out["kernel_deltas"] = stats.deltas;
    if (feed_error) {
        out["trace_error"] = feed_error;
        return out;
    }
    if (returned + done.size() != fed)
        throw SimulationError("the simulation stopped after " + std::to_string(returned + done.size()) + " of " +
                              std::to_string(fed) + " requests at " + sc_core::sc_time_stamp().to_string() +
                              " (a device waited on nothing)");
    out["problems"] = take();
    py::list devices;
    for (int i = 0; i < count; ++i) {
        DeviceMetrics entry;
        entry.role = "target";
        entry.index = i;
        entry.energy_j = g.proxies[static_cast<size_t>(i)]->power().energy_j();
        if (batched) {
            const VllmEngine& e = *g.engines[static_cast<size_t>(i)];
            entry.busy_ns = e.busy_ns();
            entry.held_ns = e.busy_ns();  // the engine's steps are all it holds the GPU for
            entry.iterations = e.iterations();
            entry.batched_sequences = e.batched_sequences();
            entry.kv_limited_iterations = e.kv_limited_iterations();
            entry.preemptions = e.preemptions();
            entry.kv_blocks = e.usable_blocks();
        } else {
            entry.busy_ns = busy[static_cast<size_t>(i)];
            entry.held_ns = g.servers[static_cast<size_t>(i)]->held_ns();  // its requests' overheads too
        }
        devices.append(device_entry(entry, batched ? DeviceRun::vllm : DeviceRun::autoregressive));
    }
    out["devices"] = devices;
    if (keep_activities) out["activities"] = activity_columns(kept);
    return out;
}

}  // namespace cosim::bindings
