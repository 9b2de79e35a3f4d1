#include "sim_time.hpp"
#include "batch_run.hpp"

#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "errors.hpp"
#include "gpu_batcher.hpp"
#include "gpu_proxy.hpp"
#include "kernel_run.hpp"
#include "param_dicts.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {
struct Sequence {
    bool decode = true;
    int64_t tokens = 0;
    int64_t context = 0;
    double arrival_ns = 0.0;
    bool urgent = false;
    double start_ns = 0.0;
    double end_ns = 0.0;
    double energy_j = 0.0;
    std::vector<double> token_end_ns;
};
}  // namespace

py::dict gpu_batch_run(const py::dict& gpu_dict, const py::dict& model_dict, const py::dict& power_dict,
                       const py::list& sequences, int max_batch, int64_t token_budget, bool verify_first,
                       double kv_budget_bytes, const py::object& profile, bool promised) {
    std::vector<Sequence> seqs;
    for (auto item : sequences) {
        const auto t = item.cast<py::tuple>();
        Sequence s;
        const auto kind = t[0].cast<std::string>();
        if (kind != "decode" && kind != "prefill" && kind != "verify")
            throw ConfigError("sequence kind '" + kind + "': use prefill, verify or decode");
        s.decode = kind == "decode";
        s.urgent = kind == "verify";
        s.tokens = t[1].cast<int64_t>();
        s.context = t[2].cast<int64_t>();
        s.arrival_ns = t[3].cast<double>();
        seqs.push_back(s);
    }
    const GpuParams params = gpu_params(gpu_dict);
    const ModelSpec model = model_spec(model_dict);
    const PowerParams power = power_params(power_dict);
    BatchingParams batching;
    batching.max_batch = max_batch;
    batching.token_budget = token_budget;
    batching.verify_first = verify_first;
    if (kv_budget_bytes > 0.0) batching.kv_budget_bytes = kv_budget_bytes;
    claim_process();
    GpuProxy gpu("gpu", params, model, power, optional_profile(profile));
    GpuBatcher batcher("batcher", batching, gpu.power());
    gpu.set_batcher(&batcher);
    std::vector<std::unique_ptr<Driver>> drivers;
    for (size_t i = 0; i < seqs.size(); ++i) {
        drivers.push_back(std::make_unique<Driver>(("sequence" + std::to_string(i)).c_str(), [&, i] {
            Sequence& s = seqs[i];
            at_least(s.arrival_ns);
            s.start_ns = now_ns();
            if (s.decode) {
                int64_t done = 0;
                // A promised decode's tokens are handed over when its wait ends, not as each ends.
                auto next = [&]() {
                    if (!promised) s.token_end_ns.push_back(now_ns());
                    return ++done < s.tokens;
                };
                batcher.decode(gpu.timing(), s.context, next, nullptr, s.energy_j, nullptr, promised ? s.tokens : 1);
            } else {
                gpu.prefill(s.tokens, s.context, nullptr, s.urgent);
                s.energy_j = gpu.last_energy_j();
            }
            s.end_ns = now_ns();
        }));
    }
    const RunStats stats = run_to_completion([&]() -> std::exception_ptr {
        for (const auto& d : drivers)
            if (d->error()) return d->error();
        return nullptr;
    });
    py::dict out = run_stats(stats);
    py::list rows;
    for (const Sequence& s : seqs) {
        py::dict r;
        r["start_ns"] = s.start_ns;
        r["end_ns"] = s.end_ns;
        r["energy_j"] = s.energy_j;
        r["token_end_ns"] = s.token_end_ns;
        rows.append(r);
    }
    out["sequences"] = rows;
    out["iterations"] = batcher.iterations();
    out["batched_sequences"] = batcher.batched_sequences();
    out["busy_ns"] = batcher.busy_ns();
    out["kv_limited_iterations"] = batcher.kv_limited_iterations();
    out["energy_j"] = gpu.power().energy_j();
    out["overhead_ns"] = gpu.overhead_ns();
    out["streamed_weight_bytes"] = gpu.streamed_weight_bytes();
    out["kv_bytes_per_token"] = gpu.kv_bytes_per_token();
    return out;
}

}  // namespace cosim::bindings
