#include "timing_eval.hpp"

#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "errors.hpp"
#include "fpga_decoder_timing.hpp"
#include "fpga_power.hpp"
#include "gpu_timing.hpp"
#include "param_dicts.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

struct Point {
    Phase phase = Phase::decode;
    int64_t tokens = 1;
    int64_t context = 0;
};

std::vector<Point> read_points(const py::list& points) {
    std::vector<Point> out;
    for (auto item : points) {
        auto t = item.cast<py::tuple>();
        if (t.size() != 3) throw ConfigError("a timing point is (phase, tokens, context)");
        const auto phase = t[0].cast<std::string>();
        if (phase != "decode" && phase != "prefill")
            throw ConfigError("timing point phase '" + phase + "': use decode or prefill");
        Point p{phase == "decode" ? Phase::decode : Phase::prefill, t[1].cast<int64_t>(), t[2].cast<int64_t>()};
        if (p.tokens <= 0) throw ConfigError("timing point tokens: must be > 0, got " + std::to_string(p.tokens));
        if (p.context < 0) throw ConfigError("timing point context: must be >= 0, got " + std::to_string(p.context));
        if (p.phase == Phase::decode && p.tokens != 1)
            throw ConfigError("timing point: a decode point is one token (tokens = 1)");
        out.push_back(p);
    }
    return out;
}

}  // namespace

py::dict fpga_timing(const py::dict& fpga, const py::dict& hbm, const py::dict& model, const py::object& profile,
                     const py::list& points, const py::object& power) {
    const ModelSpec spec = model_spec(model);
    const FpgaDecoderTiming timing("fpga", fpga_params(fpga), hbm_params(hbm), spec, fpga_profile(profile));
    std::vector<double> ns, compute, memory, pipeline;
    std::vector<std::string> bound;
    for (const Point& p : read_points(points)) {
        const double ctx = static_cast<double>(p.context);
        if (p.phase == Phase::decode) {
            ns.push_back(timing.token_ns(ctx));
            compute.push_back(timing.compute_ns(ctx));
            memory.push_back(timing.memory_ns(ctx));
            bound.push_back(fpga_bound_name(timing.bound(ctx)));
        } else {
            ns.push_back(timing.prefill_ns(p.tokens, ctx));
            compute.push_back(0.0);
            memory.push_back(0.0);
            bound.push_back(timing.profiled(Phase::prefill) ? "profile" : "prefill");
        }
        pipeline.push_back(timing.pipeline_ns());
    }
    py::dict out;
    out["ns"] = ns;
    out["compute_ns"] = compute;
    out["memory_ns"] = memory;
    out["pipeline_ns"] = pipeline;
    out["bound"] = bound;
    out["port_gbps"] = timing.port_gbps();
    out["decoder_gbps"] = timing.decoder_gbps();
    if (!power.is_none()) {
        const PowerParams board = fpga_board_power("fpga", power_params(power.cast<py::dict>()), timing, spec);
        out["idle_w"] = board.idle_w;
        out["prefill_w"] = board.prefill_w;
        out["decode_w"] = board.decode_w;
        out["transfer_w"] = board.transfer_w;
    }
    return out;
}

py::dict gpu_timing(const py::dict& gpu, const py::dict& model, const py::object& profile, const py::list& points,
                    const py::object& parallel, const py::object& peer_link) {
    const ModelSpec spec = model_spec(model);
    const GpuTiming timing("gpu", gpu_params(gpu), spec, optional_profile(profile),
                           parallel_layout(parallel, peer_link, spec, "parallel"));
    std::vector<double> ns, compute, memory;
    std::vector<std::string> bound;
    for (const Point& p : read_points(points)) {
        if (p.phase == Phase::decode) {
            ns.push_back(timing.decode_token_ns(p.context));
            const double c = timing.decode_compute_ns(p.context);
            const double m = timing.decode_memory_ns(p.context);
            compute.push_back(c);
            memory.push_back(m);
            bound.push_back(timing.profiled(Phase::decode) ? "profile" : (c >= m ? "compute" : "memory"));
        } else {
            ns.push_back(timing.prefill_ns(p.tokens, p.context));
            const double c = timing.prefill_compute_ns(p.tokens, p.context);
            const double m = timing.prefill_memory_ns(p.tokens, p.context);
            compute.push_back(c);
            memory.push_back(m);
            bound.push_back(timing.profiled(Phase::prefill) ? "profile" : (c >= m ? "compute" : "memory"));
        }
    }
    py::dict out;
    out["ns"] = ns;
    out["compute_ns"] = compute;
    out["memory_ns"] = memory;
    out["bound"] = bound;
    out["overhead_ns"] = timing.overhead_ns();
    out["stored_weight_bytes"] = timing.stored_weight_bytes();
    out["kv_bytes_per_token"] = timing.kv_bytes_per_token();
    return out;
}

namespace {
// One step's work: (decodes, their context, prefill tokens, the prefill's context).
std::vector<BatchWork> step_work(const py::handle& item) {
    const auto b = item.cast<py::tuple>();
    if (b.size() != 4) throw ConfigError("a step is (decodes, their context, prefill tokens, its context)");
    const auto sequences = b[0].cast<int64_t>();
    const auto context = b[1].cast<int64_t>();
    const auto prefill = b[2].cast<int64_t>();
    const auto prefill_context = b[3].cast<int64_t>();
    if (sequences < 0 || context < 0 || prefill < 0 || prefill_context < 0 || sequences + prefill < 1)
        throw ConfigError("a step has a decode or a prefill token, and no count below 0");
    std::vector<BatchWork> work(static_cast<size_t>(sequences), BatchWork{1, context, true});
    if (prefill > 0) work.push_back(BatchWork{prefill, prefill_context, false});
    return work;
}

GpuTiming roofline_timing(const py::dict& gpu, const py::dict& model, const py::object& parallel,
                          const py::object& peer_link) {
    const ModelSpec spec = model_spec(model);
    return GpuTiming("gpu", gpu_params(gpu), spec, LatencyProfile(),
                     parallel_layout(parallel, peer_link, spec, "parallel"));
}
}  // namespace

py::list gpu_batch_ns(const py::dict& gpu, const py::dict& model, const py::object& parallel,
                      const py::object& peer_link, const py::list& batches, bool overlap_host) {
    const GpuTiming timing = roofline_timing(gpu, model, parallel, peer_link);
    py::list out;
    for (auto item : batches) out.append(timing.step_ns(step_work(item), overlap_host));
    return out;
}

py::dict gpu_batch_power(const py::dict& gpu, const py::dict& model, const py::object& parallel,
                         const py::object& peer_link, const py::dict& power, const py::list& batches,
                         bool overlap_host, const py::object& step_ns) {
    const GpuTiming timing = roofline_timing(gpu, model, parallel, peer_link);
    const PowerParams watts = power_params(power);
    watts.validate("power");
    std::vector<double> given;
    if (!step_ns.is_none()) given = step_ns.cast<std::vector<double>>();
    if (!given.empty() && given.size() != batches.size())
        throw ConfigError("step_ns: one time per step (" + std::to_string(batches.size()) + "), got " +
                          std::to_string(given.size()));
    py::list ns_out, flops, bytes, busy;
    for (size_t i = 0; i < batches.size(); ++i) {
        const std::vector<BatchWork> work = step_work(batches[i]);
        const double ns = given.empty() ? timing.step_ns(work, overlap_host) : given[i];
        if (!(ns > 0.0)) throw ConfigError("step_ns[" + std::to_string(i) + "]: must be > 0");
        const StepWork w = timing.work(work);
        bool prefilling = false;
        for (const BatchWork& b : work) prefilling = prefilling || !b.decode;
        ns_out.append(ns);
        flops.append(w.flops);
        bytes.append(w.bytes);
        busy.append(timing.busy_w(watts, prefilling ? PowerState::prefill : PowerState::decode, w, ns));
    }
    py::dict out;
    out["ns"] = ns_out;
    out["flops"] = flops;
    out["bytes"] = bytes;
    out["watts"] = busy;
    return out;
}

}  // namespace cosim::bindings
