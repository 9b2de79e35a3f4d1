#include "param_dicts.hpp"

#include <set>

#include "errors.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

// Reads the keys of one dict, then checks that none was left unread.
class Reader {
public:
    Reader(const py::dict& d, std::string what) : d_(d), what_(std::move(what)) {
        for (auto item : d_) {
            if (!py::isinstance<py::str>(item.first)) throw ConfigError(what_ + ": parameter names must be strings");
            keys_.insert(item.first.cast<std::string>());
        }
    }

    template <typename T>
    T get(const std::string& key) {
        if (!keys_.erase(key)) throw ConfigError(what_ + "." + key + ": missing parameter");
        try {
            return d_[py::str(key)].cast<T>();
        } catch (const py::cast_error&) {
            throw ConfigError(what_ + "." + key + ": wrong type (" +
                              std::string(py::str(py::type::of(d_[py::str(key)]).attr("__name__"))) + ")");
        }
    }

    void finish() const {
        if (!keys_.empty()) throw ConfigError(what_ + "." + *keys_.begin() + ": unknown parameter");
    }

private:
    const py::dict& d_;
    std::string what_;
    std::set<std::string> keys_;
};

}  // namespace

PcieLinkParams pcie_params(const py::dict& d) {
    Reader r(d, "pcie");
    PcieLinkParams p;
    p.bandwidth_gbps = r.get<double>("bandwidth_gbps");
    p.efficiency = r.get<double>("efficiency");
    p.latency_ns = r.get<double>("latency_ns");
    r.finish();
    return p;
}

HbmParams hbm_params(const py::dict& d) {
    Reader r(d, "hbm");
    HbmParams p;
    p.capacity_bytes = r.get<double>("capacity_bytes");
    p.pseudo_channels = r.get<int64_t>("pseudo_channels");
    p.channel_bandwidth_gbps = r.get<double>("channel_bandwidth_gbps");
    p.efficiency = r.get<double>("efficiency");
    r.finish();
    return p;
}

FpgaAcceleratorParams fpga_params(const py::dict& d) {
    Reader r(d, "fpga");
    FpgaAcceleratorParams p;
    p.clock_mhz = r.get<double>("clock_mhz");
    p.macs_per_cycle = r.get<double>("macs_per_cycle");
    p.hbm_ports = r.get<int64_t>("hbm_ports");
    p.port_width_bits = r.get<double>("port_width_bits");
    p.port_efficiency = r.get<double>("port_efficiency");
    p.pipeline_cycles_per_layer = r.get<double>("pipeline_cycles_per_layer");
    p.weight_bytes_per_param = r.get<double>("weight_bytes_per_param");
    p.kv_bytes_per_element = r.get<double>("kv_bytes_per_element");
    p.kv_reserve_tokens = r.get<int64_t>("kv_reserve_tokens");
    r.finish();
    return p;
}

GpuParams gpu_params(const py::dict& d) {
    Reader r(d, "gpu");
    GpuParams p;
    p.memory_bytes = r.get<double>("memory_bytes");
    p.memory_bandwidth_gbps = r.get<double>("memory_bandwidth_gbps");
    p.memory_efficiency = r.get<double>("memory_efficiency");
    p.peak_tflops = r.get<double>("peak_tflops");
    p.compute_efficiency = r.get<double>("compute_efficiency");
    p.request_overhead_ns = r.get<double>("request_overhead_ns");
    p.forward_overhead_ns = r.get<double>("forward_overhead_ns");
    p.layer_overhead_ns = r.get<double>("layer_overhead_ns");
    p.weight_bytes_per_param = r.get<double>("weight_bytes_per_param");
    p.kv_bytes_per_element = r.get<double>("kv_bytes_per_element");
    p.kv_reserve_tokens = r.get<int64_t>("kv_reserve_tokens");
    r.finish();
    return p;
}

PowerParams power_params(const py::dict& d) {
    Reader r(d, "power");
    PowerParams p;
    p.idle_w = r.get<double>("idle_w");
    p.prefill_w = r.get<double>("prefill_w");
    p.decode_w = r.get<double>("decode_w");
    p.transfer_w = r.get<double>("transfer_w");
    r.finish();
    return p;
}

ModelSpec model_spec(const py::dict& d) {
    Reader r(d, "model");
    ModelSpec m;
    m.name = r.get<std::string>("name");
    m.layers = r.get<int64_t>("layers");
    m.hidden = r.get<int64_t>("hidden");
    m.heads = r.get<int64_t>("heads");
    m.kv_heads = r.get<int64_t>("kv_heads");
    m.head_dim = r.get<int64_t>("head_dim");
    m.ffn = r.get<int64_t>("ffn");
    m.vocab = r.get<int64_t>("vocab");
    m.params = r.get<double>("params");
    m.lm_head = r.get<bool>("lm_head");
    m.score_head_params = r.get<double>("score_head_params");
    m.context_window = r.get<int64_t>("context_window");
    r.finish();
    return m;
}

PowerState power_state(const std::string& name) {
    for (int s = 0; s < kPowerStateCount; ++s) {
        if (name == power_state_name(static_cast<PowerState>(s))) return static_cast<PowerState>(s);
    }
    throw ConfigError("unknown power state '" + name + "' (idle, prefill, decode, transfer)");
}

LatencyProfile latency_profile(const std::string& source, const py::list& rows) {
    std::vector<ProfilePoint> points;
    for (auto row : rows) {
        auto t = row.cast<py::tuple>();
        if (t.size() != 4) throw ConfigError(source + ": a profile row needs (phase, tokens, context, seconds)");
        const auto phase = t[0].cast<std::string>();
        if (phase != "prefill" && phase != "decode")
            throw ConfigError(source + ": unknown phase '" + phase + "' (prefill or decode)");
        points.push_back(ProfilePoint{phase == "prefill" ? Phase::prefill : Phase::decode, t[1].cast<int64_t>(),
                                      t[2].cast<int64_t>(), t[3].cast<double>()});
    }
    return LatencyProfile(source, points);
}

LatencyProfile optional_profile(const py::object& profile) {
    if (profile.is_none()) return LatencyProfile();
    auto t = profile.cast<py::tuple>();
    if (t.size() != 2) throw ConfigError("a latency profile is (source, rows)");
    return latency_profile(t[0].cast<std::string>(), t[1].cast<py::list>());
}

FpgaProfile fpga_profile(const py::object& profile) {
    FpgaProfile out;
    if (profile.is_none()) return out;
    const py::dict d = profile.cast<py::dict>();
    Reader r(d, "fpga profile");
    const auto source = r.get<std::string>("source");
    out.table = latency_profile(source, r.get<py::list>("rows"));
    out.measured_clock_mhz = r.get<double>("clock_mhz");
    out.project_clock = r.get<bool>("project_clock");
    r.finish();
    return out;
}

}  // namespace cosim::bindings
