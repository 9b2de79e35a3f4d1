#include "param_dicts.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "errors.hpp"

namespace py = pybind11;

namespace cosim::bindings {

pybind11::dict section(const pybind11::dict& d, const char* key) {
    if (!d.contains(key)) throw ConfigError(std::string("system.") + key + ": missing");
    return d[key].cast<pybind11::dict>();
}

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

// One declared parameter read from the dict into the struct `p`.
#define COSIM_READ_PARAM(type, name, rule, init) p.name = r.get<type>(#name);

// What a group checks of itself once read: the serving sections their declared rules (the
// hardware groups are checked by the models that take them).
template <typename Params>
void checked(const Params&) {}
void checked(const ClusterShape& shape) { shape.validate(); }
void checked(const BatchingSettings& settings) { settings.validate(); }

}  // namespace

// A declared group's reader: each declared field by name, no key left unread, then the
// checks the struct makes of itself.
#define COSIM_GROUP_READER(Type, function, what, fields) \
    Type function(const py::dict& d) {                     \
        Reader r(d, what);                                 \
        Type p;                                            \
        fields(COSIM_READ_PARAM)                           \
        r.finish();                                        \
        checked(p);                                        \
        return p;                                          \
    }

COSIM_GROUP_READER(PcieLinkParams, pcie_params, "pcie", COSIM_PCIE_LINK_PARAMS)
COSIM_GROUP_READER(HbmParams, hbm_params, "hbm", COSIM_HBM_PARAMS)
COSIM_GROUP_READER(FpgaAcceleratorParams, fpga_params, "fpga", COSIM_FPGA_ACCELERATOR_PARAMS)
COSIM_GROUP_READER(GpuParams, gpu_params, "gpu", COSIM_GPU_PARAMS)
COSIM_GROUP_READER(PowerParams, power_params, "power", COSIM_POWER_PARAMS)
COSIM_GROUP_READER(ModelSpec, model_spec, "model", COSIM_MODEL_PARAMS)
COSIM_GROUP_READER(ParallelParams, parallel_params, "parallel", COSIM_PARALLEL_PARAMS)
COSIM_GROUP_READER(ClusterShape, cluster_shape, "cluster", COSIM_CLUSTER_SHAPE)
COSIM_GROUP_READER(BatchingSettings, batching_settings, "batching", COSIM_BATCHING_SETTINGS)

#undef COSIM_GROUP_READER

ParallelLayout parallel_layout(const py::object& parallel, const py::object& peer_link, const ModelSpec& model,
                               const std::string& where, bool pcie) {
    if (parallel.is_none()) return ParallelLayout();
    PeerLink link;
    if (!peer_link.is_none()) {
        const PcieLinkParams p = pcie_params(peer_link.cast<py::dict>());
        link = PeerLink{p.bandwidth_gbps, p.efficiency, p.latency_ns, pcie};
    }
    return ParallelLayout(where, parallel_params(parallel.cast<py::dict>()), link, model);
}

ParallelLayout parallel_layout(const py::dict& role, const ModelSpec& model, const std::string& where) {
    if (!role.contains("parallel")) return ParallelLayout();
    const py::object link = role.contains("peer_link") ? py::object(role["peer_link"]) : py::object(py::none());
    const bool pcie = role.contains("peer_link_pcie") && role["peer_link_pcie"].cast<bool>();
    return parallel_layout(py::object(role["parallel"]), link, model, where, pcie);
}

PowerState power_state(const std::string& name) {
    for (int s = 0; s < kPowerStateCount; ++s) {
        if (name == power_state_name(static_cast<PowerState>(s))) return static_cast<PowerState>(s);
    }
    throw ConfigError("unknown power state '" + name + "' (idle, prefill, decode, transfer)");
}

LatencyProfile latency_profile(const std::string& source, const py::object& rows) {
    std::vector<ProfilePoint> points;
    if (py::isinstance<py::array>(rows)) {
        // The loader's table (cosim/devices/_latency_csv.py COLUMNS): phase (0 prefill,
        // 1 decode), tokens, context, batch, seconds; read in place, row by row.
        const auto table = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(rows);
        if (!table || table.ndim() != 2 || table.shape(1) != 5)
            throw ConfigError(source + ": a profile table has 5 columns (phase, tokens, context, batch, seconds)");
        const auto t = table.unchecked<2>();
        points.reserve(static_cast<size_t>(t.shape(0)));
        for (py::ssize_t i = 0; i < t.shape(0); ++i) {
            if (t(i, 0) != 0.0 && t(i, 0) != 1.0) throw ConfigError(source + ": a phase is 0 (prefill) or 1 (decode)");
            points.push_back(ProfilePoint{t(i, 0) == 0.0 ? Phase::prefill : Phase::decode,
                                          static_cast<int64_t>(t(i, 1)), static_cast<int64_t>(t(i, 2)), t(i, 4),
                                          static_cast<int64_t>(t(i, 3))});
        }
        return LatencyProfile(source, points);
    }
    for (auto row : rows.cast<py::list>()) {
        auto t = row.cast<py::tuple>();
        if (t.size() != 4 && t.size() != 5)
            throw ConfigError(source + ": a profile row needs (phase, tokens, context, seconds[, batch])");
        const auto phase = t[0].cast<std::string>();
        if (phase != "prefill" && phase != "decode")
            throw ConfigError(source + ": unknown phase '" + phase + "' (prefill or decode)");
        points.push_back(ProfilePoint{phase == "prefill" ? Phase::prefill : Phase::decode, t[1].cast<int64_t>(),
                                      t[2].cast<int64_t>(), t[3].cast<double>(),
                                      t.size() == 5 ? t[4].cast<int64_t>() : 1});
    }
    return LatencyProfile(source, points);
}

// {source, edges: [4 lists], rows: [[chunk, 4 buckets, alpha], ...], alpha_default}: an
// attention table's skew fit.
namespace {

AttentionSkew attention_skew(const py::dict& d) {
    Reader r(d, "attention skew");
    const auto source = r.get<std::string>("source");
    const auto edges = r.get<std::vector<std::vector<double>>>("edges");
    if (edges.size() != AttentionSkew::axes) throw ConfigError(source + ": a skew fit needs four bucket axes");
    std::array<std::vector<double>, AttentionSkew::axes> axes;
    std::copy(edges.begin(), edges.end(), axes.begin());
    std::map<AttentionSkew::Key, double> alpha;
    for (const auto& row : r.get<std::vector<std::vector<double>>>("rows")) {
        if (row.size() != AttentionSkew::axes + 2) throw ConfigError(source + ": a skew row needs its key and alpha");
        AttentionSkew::Key key{};
        for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<int64_t>(row[i]);
        alpha[key] = row.back();
    }
    const auto pooled = r.get<double>("alpha_default");
    r.finish();
    return AttentionSkew(source, std::move(axes), std::move(alpha), pooled);
}

}  // namespace

// {source, head_from_roofline, terms: [{name, input, count, axes, rows[, skew]}]}: an operator profile.
LatencyProfile operator_profile(const py::dict& d) {
    Reader r(d, "operator profile");
    const auto source = r.get<std::string>("source");
    const bool head = r.get<bool>("head_from_roofline");
    std::vector<OperatorTerm> terms;
    for (auto item : r.get<py::list>("terms")) {
        const py::dict t = item.cast<py::dict>();
        Reader tr(t, source + " operator");
        OperatorTerm term;
        term.name = tr.get<std::string>("name");
        const auto input = tr.get<std::string>("input");
        const char* inputs[] = {"tokens", "sequences", "attention", "prefill_attention", "decode_attention", "moe"};
        bool known = false;
        for (int i = 0; i < 6; ++i)
            if (input == inputs[i]) {
                term.input = static_cast<ProfileInput>(i);
                known = true;
            }
        if (!known) throw ConfigError(source + ": unknown operator input '" + input + "'");
        term.count = tr.get<double>("count");
        const auto file = tr.get<std::string>("file");
        auto axes = tr.get<std::vector<std::string>>("axes");
        // A table comes as a 2-D float64 array (a list of rows is converted once): read in
        // place, so a large profile is never held twice as Python objects.
        using Rows = py::array_t<double, py::array::c_style | py::array::forcecast>;
        const auto rows = Rows::ensure(tr.get<py::object>("rows"));
        if (!rows || rows.ndim() != 2 || rows.shape(1) != static_cast<py::ssize_t>(axes.size() + 1))
            throw ConfigError(file + ": " + term.name + ": a table needs rows of every axis and a time");
        term.table = RaggedTable(file, std::move(axes), rows.data(), static_cast<size_t>(rows.shape(0)));
        if (t.contains("skew")) term.skew = attention_skew(tr.get<py::dict>("skew"));
        tr.finish();
        terms.push_back(std::move(term));
    }
    r.finish();
    return LatencyProfile(OperatorProfile(source, std::move(terms), head));
}

LatencyProfile optional_profile(const py::object& profile) {
    if (profile.is_none()) return LatencyProfile();
    if (py::isinstance<py::dict>(profile)) return operator_profile(profile.cast<py::dict>());
    auto t = profile.cast<py::tuple>();
    if (t.size() != 2) throw ConfigError("a latency profile is (source, rows)");
    return latency_profile(t[0].cast<std::string>(), t[1]);
}

FpgaProfile fpga_profile(const py::object& profile) {
    FpgaProfile out;
    if (profile.is_none()) return out;
    const py::dict d = profile.cast<py::dict>();
    Reader r(d, "fpga profile");
    const auto source = r.get<std::string>("source");
    out.table = latency_profile(source, r.get<py::object>("rows"));
    out.measured_clock_mhz = r.get<double>("measured_clock_mhz");
    out.project_clock = r.get<bool>("project_clock");
    r.finish();
    return out;
}

py::dict param_declarations() {
    py::dict out;
#define COSIM_DESCRIBE_PARAM(type, name, rule, init) params.append(py::make_tuple(#name, #type, #rule));
#define COSIM_DESCRIBE_GROUP(key, fields) { py::list params; fields(COSIM_DESCRIBE_PARAM) out[key] = params; }
    COSIM_DESCRIBE_GROUP("pcie", COSIM_PCIE_LINK_PARAMS)
    COSIM_DESCRIBE_GROUP("hbm", COSIM_HBM_PARAMS)
    COSIM_DESCRIBE_GROUP("power", COSIM_POWER_PARAMS)
    COSIM_DESCRIBE_GROUP("fpga", COSIM_FPGA_ACCELERATOR_PARAMS)
    COSIM_DESCRIBE_GROUP("gpu", COSIM_GPU_PARAMS)
    COSIM_DESCRIBE_GROUP("model", COSIM_MODEL_PARAMS)
    COSIM_DESCRIBE_GROUP("parallel", COSIM_PARALLEL_PARAMS)
    COSIM_DESCRIBE_GROUP("cluster", COSIM_CLUSTER_SHAPE)
    COSIM_DESCRIBE_GROUP("batching", COSIM_BATCHING_SETTINGS)
#undef COSIM_DESCRIBE_GROUP
#undef COSIM_DESCRIBE_PARAM
    return out;
}

}  // namespace cosim::bindings
