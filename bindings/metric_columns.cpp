#include "metric_columns.hpp"

#include "sim_time.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

template <typename T>
py::array column(const std::vector<ProblemMetrics>& ms, T get) {
    using Value = decltype(get(ProblemMetrics{}));
    py::array_t<Value> out(static_cast<py::ssize_t>(ms.size()));
    auto v = out.template mutable_unchecked<1>();
    for (size_t i = 0; i < ms.size(); ++i) v(static_cast<py::ssize_t>(i)) = get(ms[i]);
    return out;
}

// Whole picoseconds (the kernel's units): exact over the kernel's whole clock; -1 where
// the instant never came.
int64_t instant_ps(uint64_t units) { return units == kNoInstant ? -1 : units_to_ps(units); }

bool reports(const char* runs, DeviceRun run) {
    const std::string r(runs);
    return r == "all" || (r == "autoregressive" && run != DeviceRun::workflow) ||
           (r == "vllm" && run == DeviceRun::vllm) || (r == "workflow" && run == DeviceRun::workflow);
}

}  // namespace

#define COSIM_EXPORT_METRIC(type, field, kind, c0, c1, c2) COSIM_EXPORT_##kind(field, c0, c1, c2)
#define COSIM_EXPORT_value(field, c0, c1, c2) \
    out[c0] = column(ms, [](const ProblemMetrics& m) { return m.field; });
#define COSIM_EXPORT_instant(field, c0, c1, c2) \
    out[c0] = column(ms, [](const ProblemMetrics& m) { return instant_ps(m.field); });
#define COSIM_EXPORT_instant_or_none COSIM_EXPORT_instant
#define COSIM_EXPORT_per_role(field, c0, c1, c2)                                      \
    {                                                                                  \
        const char* names[3] = {c0, c1, c2};                                           \
        for (int r = 0; r < 3; ++r)                                                    \
            out[names[r]] = column(ms, [r](const ProblemMetrics& m) { return m.field[r]; }); \
    }

py::dict metric_columns(const std::vector<ProblemMetrics>& ms) {
    py::dict out;
    COSIM_PROBLEM_METRICS(COSIM_EXPORT_METRIC)
    return out;
}

py::dict device_entry(const DeviceMetrics& d, DeviceRun run) {
    py::dict out;
#define COSIM_EXPORT_DEVICE(type, name, runs) \
    if (reports(#runs, run)) out[#name] = d.name;
    COSIM_DEVICE_METRICS(COSIM_EXPORT_DEVICE)
#undef COSIM_EXPORT_DEVICE
    return out;
}

py::dict exported_columns() {
    py::dict problem;
    for (const auto& [name, values] : metric_columns({ProblemMetrics{}}))
        problem[name] = values.cast<py::array>().dtype().attr("name");
    py::dict out;
    out["problem"] = problem;
    py::list devices;  // every column, whichever engines report it
#define COSIM_LIST_DEVICE(type, name, runs) devices.append(#name);
    COSIM_DEVICE_METRICS(COSIM_LIST_DEVICE)
#undef COSIM_LIST_DEVICE
    out["devices"] = devices;
    return out;
}

}  // namespace cosim::bindings
