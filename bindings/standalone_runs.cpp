#include "sim_time.hpp"
#include "standalone_runs.hpp"

#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "errors.hpp"
#include "fpga_draft_accelerator.hpp"
#include "gpu_proxy.hpp"
#include "host_dma.hpp"
#include "kernel_run.hpp"
#include "kvmu.hpp"
#include "param_dicts.hpp"
#include "speculation_section.hpp"
#include "pcie_link.hpp"
#include "power.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

// Python data is read before the kernel runs and written after it: the body
// of a Driver runs with the GIL released and must not touch Python objects.
struct Op {
    std::string name;
    int64_t a = 0;
    int64_t b = 0;
};

struct OpRecord {
    double start_ns = 0.0;
    double end_ns = 0.0;
    KvmuPointers ptr;
    std::string mode;
};


py::dict power_summary(const Power& power) {
    py::dict time_ns, energy_j;
    for (int s = 0; s < kPowerStateCount; ++s) {
        const auto state = static_cast<PowerState>(s);
        time_ns[power_state_name(state)] = power.time_ns(state);
        energy_j[power_state_name(state)] = power.energy_j(state);
    }
    py::dict out;
    out["energy_j"] = power.energy_j();
    out["state_time_ns"] = time_ns;
    out["state_energy_j"] = energy_j;
    return out;
}

void merge(py::dict& into, const py::dict& from) {
    for (auto item : from) into[item.first] = item.second;
}

std::vector<Op> read_ops(const py::list& ops, size_t arity) {
    std::vector<Op> out;
    for (auto item : ops) {
        auto t = item.cast<py::tuple>();
        if (t.size() < 1 || t.size() > arity + 1)
            throw ConfigError("an operation is (name" + std::string(arity ? ", n" : "") +
                              std::string(arity > 1 ? ", m" : "") + ")");
        Op op{t[0].cast<std::string>()};
        if (t.size() > 1) op.a = t[1].cast<int64_t>();
        if (t.size() > 2) op.b = t[2].cast<int64_t>();
        out.push_back(op);
    }
    return out;
}

// Records the time of every token_done / token_ready notification.
class TokenClock : public sc_core::sc_module {
public:
    TokenClock(sc_core::sc_module_name name, const sc_core::sc_event& event) : sc_core::sc_module(name) {
        SC_HAS_PROCESS(TokenClock);
        SC_METHOD(tick);
        sensitive << event;
        dont_initialize();
    }
    std::vector<double> times_ns;

private:
    void tick() { times_ns.push_back(now_ns()); }
};

py::list records_to_list(const std::vector<Op>& ops, const std::vector<OpRecord>& records) {
    py::list out;
    for (size_t i = 0; i < records.size(); ++i) {
        py::dict r;
        r["op"] = ops[i].name;
        r["n"] = ops[i].a;
        r["start_ns"] = records[i].start_ns;
        r["end_ns"] = records[i].end_ns;
        r["valid"] = records[i].ptr.valid;
        r["curr"] = records[i].ptr.curr;
        r["ahead"] = records[i].ptr.ahead;
        r["mode"] = records[i].mode;
        out.append(r);
    }
    return out;
}

}  // namespace

py::dict pcie_transfers(const py::dict& link_params, const py::list& transfers) {
    struct Transfer {
        LinkDirection dir;
        uint64_t bytes;
        double issue_ns;
        double ready_ns;  // when its data is ready: at or after the issue
    };
    std::vector<Transfer> script;
    for (auto item : transfers) {
        auto t = item.cast<py::tuple>();
        const auto dir = t[0].cast<std::string>();
        if (dir != "h2d" && dir != "d2h") throw ConfigError("transfer direction '" + dir + "': use h2d or d2h");
        const auto bytes = t[1].cast<int64_t>();
        if (bytes < 0) throw ConfigError("transfer size: must be >= 0 bytes, got " + std::to_string(bytes));
        const double issue = t[2].cast<double>();
        require_non_negative("transfer issue_ns", issue);
        const double ready = t.size() > 3 ? t[3].cast<double>() : issue;
        if (!(ready >= issue))
            throw ConfigError("transfer ready_ns: must be at or after its issue_ns (" + std::to_string(issue) +
                              "), got " + std::to_string(ready));
        if (!script.empty() && issue < script.back().issue_ns)
            throw ConfigError("transfer issue_ns: transfers are issued in time order");
        script.push_back({dir == "h2d" ? LinkDirection::host_to_device : LinkDirection::device_to_host,
                          static_cast<uint64_t>(bytes), issue, ready});
    }
    const PcieLinkParams params = pcie_params(link_params);
    claim_process();
    PcieLink link("pcie", params);
    HostDma dma("host");
    dma.socket.bind(link.socket);
    std::vector<double> issue_ns, start_ns, end_ns;
    Driver driver("driver", [&] {
        sc_core::sc_time last_end = sc_core::SC_ZERO_TIME;
        for (const Transfer& t : script) {
            const sc_core::sc_time issue(t.issue_ns, sc_core::SC_NS);
            if (issue > sc_core::sc_time_stamp()) sc_core::wait(issue - sc_core::sc_time_stamp());
            issue_ns.push_back(now_ns());
            // Posted now, its data ready `ready - issue` later.
            const sc_core::sc_time ahead(t.ready_ns - t.issue_ns, sc_core::SC_NS);
            const sc_core::sc_time end = dma.post(t.dir, t.bytes, ahead);
            start_ns.push_back(units_to_ns(link.last_start_units(t.dir)));
            end_ns.push_back(to_ns(end));
            if (end > last_end) last_end = end;
        }
        if (last_end > sc_core::sc_time_stamp()) sc_core::wait(last_end - sc_core::sc_time_stamp());
    });
    py::dict out = run_stats(run_to_completion(driver));
    out["issue_ns"] = issue_ns;
    out["start_ns"] = start_ns;
    out["end_ns"] = end_ns;
    for (auto dir : {LinkDirection::host_to_device, LinkDirection::device_to_host}) {
        const std::string tag = dir == LinkDirection::host_to_device ? "h2d" : "d2h";
        out[py::str(tag + "_bytes")] = link.bytes(dir);
        out[py::str(tag + "_transfers")] = link.transfers(dir);
        out[py::str(tag + "_busy_ns")] = link.busy_ns(dir);
    }
    return out;
}

py::dict fpga_run(const py::dict& fpga_dict, const py::dict& hbm_dict, const py::dict& model_dict,
                  const py::dict& power_dict, const py::object& profile, const py::list& ops_list,
                  bool record_tokens) {
    const std::vector<Op> ops = read_ops(ops_list, 1);
    const FpgaAcceleratorParams params = fpga_params(fpga_dict);
    const HbmParams hbm = hbm_params(hbm_dict);
    const ModelSpec model = model_spec(model_dict);
    const PowerParams power = power_params(power_dict);
    FpgaProfile measured = fpga_profile(profile);
    claim_process();
    FpgaDraftAccelerator fpga("fpga", params, hbm, model, power, std::move(measured));
    std::unique_ptr<TokenClock> clock;
    if (record_tokens) {
        fpga.enable_token_events();
        clock = std::make_unique<TokenClock>("token_clock", fpga.token_done);
    }
    std::vector<OpRecord> records;
    Driver driver("driver", [&] {
        Kvmu& kvmu = fpga.kvmu();
        for (const Op& op : ops) {
            OpRecord rec;
            rec.start_ns = now_ns();
            if (op.name == "load") fpga.load_context(op.a);
            else if (op.name == "decode") fpga.decode_step(op.a);
            else if (op.name == "sync") for (int64_t i = 0; i < op.a; ++i) fpga.sync_token();
            else if (op.name == "prefill") fpga.prefill_local(op.a);
            else if (op.name == "initialize") kvmu.initialize(op.a);
            else if (op.name == "accept") kvmu.accept();
            else if (op.name == "rollback") kvmu.rollback();
            else throw ConfigError("fpga operation '" + op.name +
                                   "': use load, decode, sync, prefill, initialize, accept or rollback");
            rec.end_ns = now_ns();
            rec.ptr = kvmu.pointers();
            rec.mode = kvmu_mode_name(kvmu.mode());
            records.push_back(rec);
        }
    });
    py::dict out = run_stats(run_to_completion(driver));
    merge(out, power_summary(fpga.power()));
    out["ops"] = records_to_list(ops, records);
    out["tokens_drafted"] = fpga.tokens_drafted();
    out["tokens_synced"] = fpga.tokens_synced();
    out["tokens_prefilled"] = fpga.tokens_prefilled();
    out["hbm_used_bytes"] = fpga.hbm().used_bytes();
    out["hbm_capacity_bytes"] = fpga.hbm().params().capacity_bytes;
    out["weights_bytes"] = fpga.hbm().region_bytes("weights");
    out["kv_reserved_bytes"] = fpga.hbm().region_bytes("kv_cache");
    out["kv_used_bytes"] = fpga.kv_used_bytes();
    out["kv_bytes_per_token"] = fpga.kv_bytes_per_token();
    out["streamed_weight_bytes"] = fpga.streamed_weight_bytes();
    if (clock) out["token_end_ns"] = clock->times_ns;
    return out;
}

py::dict gpu_spec_run(const py::dict& gpu_dict, const py::dict& model_dict, const py::dict& power_dict,
                      const py::object& drafter_gpu, const py::object& drafter_model, int64_t prompt, int64_t output,
                      int64_t draft_tokens, const std::vector<double>& acceptance, uint64_t seed, double lookup_ns,
                      uint64_t request) {
    const GpuParams params = gpu_params(gpu_dict);
    const ModelSpec model = model_spec(model_dict);
    SpecDecodeSetup setup;
    setup.draft_tokens = draft_tokens;
    setup.acceptance = acceptance;
    setup.seed = seed;
    setup.lookup_ns = lookup_ns;
    std::shared_ptr<const GpuTiming> drafter;
    if (!drafter_model.is_none())
        drafter = drafter_timing(drafter_gpu.cast<py::dict>(), drafter_model.cast<py::dict>());
    claim_process();
    GpuProxy gpu("gpu", params, model, power_params(power_dict));
    const SpecDecoder spec(setup, gpu.timing(), drafter);
    DeviceCommand c;
    SpecDecoder::Decode d;
    Driver driver("driver", [&] { d = gpu.serve_speculative(prompt, output, spec, request, c); });
    py::dict out = run_stats(run_to_completion(driver));
    merge(out, power_summary(static_cast<const GpuProxy&>(gpu).power()));
    out["first_token_ns"] = units_to_ns(c.first_token_units);
    out["end_ns"] = units_to_ns(c.started_units) + c.work_ns;
    out["decode_ns"] = d.ns;
    out["gpu_ns"] = d.gpu_ns;
    out["passes"] = d.passes;
    out["drafted"] = d.drafted;
    out["accepted"] = d.accepted;
    out["energy_j"] = c.energy_j;
    return out;
}

py::dict gpu_run(const py::dict& gpu_dict, const py::dict& model_dict, const py::dict& power_dict,
                 const py::object& profile, const py::list& ops_list, bool record_tokens) {
    const std::vector<Op> ops = read_ops(ops_list, 2);
    const GpuParams params = gpu_params(gpu_dict);
    const ModelSpec model = model_spec(model_dict);
    const PowerParams power = power_params(power_dict);
    LatencyProfile table = optional_profile(profile);
    claim_process();
    GpuProxy gpu("gpu", params, model, power, table);
    std::unique_ptr<TokenClock> clock;
    if (record_tokens) {
        gpu.enable_token_events();
        clock = std::make_unique<TokenClock>("token_clock", gpu.token_ready);
    }
    std::vector<OpRecord> records;
    Driver driver("driver", [&] {
        for (const Op& op : ops) {
            OpRecord rec;
            rec.start_ns = now_ns();
            if (op.name == "prefill") gpu.prefill(op.a, op.b);
            else if (op.name == "decode") gpu.decode(op.a, op.b);
            else throw ConfigError("gpu operation '" + op.name + "': use prefill or decode");
            rec.end_ns = now_ns();
            rec.mode = op.name;
            records.push_back(rec);
        }
    });
    py::dict out = run_stats(run_to_completion(driver));
    merge(out, power_summary(static_cast<const GpuProxy&>(gpu).power()));
    py::list op_list;
    for (size_t i = 0; i < records.size(); ++i) {
        py::dict r;
        r["op"] = ops[i].name;
        r["tokens"] = ops[i].a;
        r["context"] = ops[i].b;
        r["start_ns"] = records[i].start_ns;
        r["end_ns"] = records[i].end_ns;
        if (ops[i].name == "prefill" && !gpu.profiled(Phase::prefill)) {
            const double compute = gpu.timing().prefill_compute_ns(ops[i].a, ops[i].b);
            const double memory = gpu.timing().prefill_memory_ns(ops[i].a, ops[i].b);
            r["compute_ns"] = compute;
            r["memory_ns"] = memory;
            r["bound"] = compute >= memory ? "compute" : "memory";
        }
        op_list.append(r);
    }
    out["ops"] = op_list;
    out["overhead_ns"] = gpu.overhead_ns();
    out["tokens_decoded"] = gpu.tokens_decoded();
    out["tokens_prefilled"] = gpu.tokens_prefilled();
    out["kv_bytes_per_token"] = gpu.kv_bytes_per_token();
    out["streamed_weight_bytes"] = gpu.streamed_weight_bytes();
    out["profiled_prefill"] = gpu.profiled(Phase::prefill);
    out["profiled_decode"] = gpu.profiled(Phase::decode);
    if (clock) out["token_end_ns"] = clock->times_ns;
    return out;
}

py::dict power_run(const py::dict& power_dict, const py::list& segments) {
    std::vector<std::pair<PowerState, double>> script;
    for (auto item : segments) {
        auto t = item.cast<py::tuple>();
        const double ns = t[1].cast<double>();
        require_non_negative("power segment duration_ns", ns);
        script.emplace_back(power_state(t[0].cast<std::string>()), ns);
    }
    const PowerParams params = power_params(power_dict);
    claim_process();
    Power power("device", params);
    Driver driver("driver", [&] {
        for (const auto& [state, ns] : script) {
            power.set_state(state);
            sc_core::wait(sc_core::sc_time(ns, sc_core::SC_NS));
        }
        power.set_state(PowerState::idle);
    });
    py::dict out = run_stats(run_to_completion(driver));
    merge(out, power_summary(power));
    return out;
}

py::list kvmu_run(int64_t capacity_tokens, const py::list& ops_list, int32_t depth,
                  const std::string& implementation) {
    const std::vector<Op> ops = read_ops(ops_list, 1);
    if (implementation != "tlm") claim_process();  // the RTL is a SystemC module: this process elaborates
    const std::unique_ptr<Kvmu> owned = make_kvmu(implementation, "fpga", capacity_tokens, "kvmu");
    Kvmu& kvmu = *owned;
    kvmu.set_depth(depth);
    py::list out;
    for (const Op& op : ops) {
        py::dict r;
        r["op"] = op.name;
        try {
            if (op.name == "initialize") kvmu.initialize(op.a);
            else if (op.name == "begin_speculation") kvmu.begin_speculation();
            else if (op.name == "speculate") kvmu.speculate_token();
            else if (op.name == "sync") kvmu.sync_token();
            else if (op.name == "end_step") kvmu.end_step();
            else if (op.name == "accept") kvmu.accept();
            else if (op.name == "rollback") kvmu.rollback();
            else if (op.name == "clear") kvmu.clear();
            else throw ConfigError("kvmu operation '" + op.name + "' is unknown");
            r["error"] = py::none();
        } catch (const KvmuError& e) {
            r["error"] = std::string(e.what());
        }
        const KvmuPointers p = kvmu.pointers();
        r["valid"] = p.valid;
        r["curr"] = p.curr;
        r["ahead"] = p.ahead;
        r["mode"] = kvmu_mode_name(kvmu.mode());
        r["mux"] = kvmu.mux() == MuxSource::sampler ? "sampler" : "pcie";
        r["curr_follows_ahead"] = kvmu.curr_follows_ahead();
        r["marks"] = py::list(py::cast(std::vector<int64_t>(kvmu.marks().begin(), kvmu.marks().end())));
        out.append(r);
    }
    return out;
}

}  // namespace cosim::bindings
