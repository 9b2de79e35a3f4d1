// cosim._native: the pybind11 facade over the SystemC models. Python never
// sees a SystemC object; it passes parameter dicts and operation scripts and
// gets plain data back. Each simulating call must run in a fresh process
// (cosim.engine._isolation forks one per call).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <systemc>

#include "batch_run.hpp"
#include "crash_report.hpp"
#include "diagnostics.hpp"
#include "draft_memory.hpp"
#include "errors.hpp"
#include "brsd_rule.hpp"
#include "kvmu.hpp"
#include "model_spec.hpp"
#include "metric_columns.hpp"
#include "param_dicts.hpp"
#include "standalone_runs.hpp"
#include "timing_eval.hpp"
#include "simulate.hpp"

namespace py = pybind11;

// The SystemC library expects the program to define sc_main; the extension
// never calls it, but the symbol must resolve when the module is loaded.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) { return 0; }

namespace {

void raise_as(const char* python_class, const std::string& message) {
    py::object cls = py::module_::import("cosim.errors").attr(python_class);
    PyErr_SetString(cls.ptr(), message.c_str());
}

void translate(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const cosim::ConfigError& e) {
        raise_as("ConfigError", e.what());
    } catch (const cosim::CapacityError& e) {
        raise_as("CapacityError", e.what());
    } catch (const cosim::KvmuError& e) {
        raise_as("KvmuError", e.what());
    } catch (const cosim::SimulationError& e) {
        raise_as("SimulationError", e.what());
    } catch (const sc_core::sc_report& e) {
        raise_as("SimulationError", std::string("SystemC: ") + e.what());
    }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "SystemC/TLM-2.0 models of heteroreason-cosim (run each call in its own process)";
    py::register_exception_translator(&translate);

    m.attr("systemc_version") = std::string(sc_core::sc_version());
    m.def("pcie_transfers", &cosim::bindings::pcie_transfers, py::arg("link"), py::arg("transfers"));
    m.def("fpga_run", &cosim::bindings::fpga_run, py::arg("fpga"), py::arg("hbm"), py::arg("model"),
          py::arg("power"), py::arg("profile"), py::arg("ops"), py::arg("record_tokens") = false);
    m.def("gpu_run", &cosim::bindings::gpu_run, py::arg("gpu"), py::arg("model"), py::arg("power"),
          py::arg("profile"), py::arg("ops"), py::arg("record_tokens") = false);
    m.def("gpu_spec_run", &cosim::bindings::gpu_spec_run, py::arg("gpu"), py::arg("model"), py::arg("power"),
          py::arg("drafter_gpu"), py::arg("drafter_model"), py::arg("prompt"), py::arg("output"),
          py::arg("draft_tokens"), py::arg("acceptance"), py::arg("seed"), py::arg("lookup_ns"), py::arg("request"));
    m.def("gpu_batch_run", &cosim::bindings::gpu_batch_run, py::arg("gpu"), py::arg("model"), py::arg("power"),
          py::arg("sequences"), py::arg("max_batch"), py::arg("token_budget"), py::arg("verify_first") = false,
          py::arg("kv_budget_bytes") = 0.0, py::arg("profile") = py::none(), py::arg("promised") = false);
    m.def("power_run", &cosim::bindings::power_run, py::arg("power"), py::arg("segments"));
    m.def("kvmu_run", &cosim::bindings::kvmu_run, py::arg("capacity_tokens"), py::arg("ops"), py::arg("depth"),
          py::arg("implementation") = "tlm");
    // Which KVMU implementations this build has (fpga.kvmu): "tlm", and "rtl" with Verilator.
    m.attr("kvmu_implementations") = cosim::kvmu_implementations();
    // Every system through one entry: the top its registry names (cosim/systems/, `top`).
    m.def("simulate", &cosim::bindings::simulate, py::arg("top"), py::arg("system"), py::arg("next_chunk"),
          py::arg("options") = py::dict());
    m.def("fpga_timing", &cosim::bindings::fpga_timing, py::arg("fpga"), py::arg("hbm"), py::arg("model"),
          py::arg("profile"), py::arg("points"), py::arg("power") = py::none());
    m.def("gpu_timing", &cosim::bindings::gpu_timing, py::arg("gpu"), py::arg("model"), py::arg("profile"),
          py::arg("points"), py::arg("parallel") = py::none(), py::arg("peer_link") = py::none());
    m.def("gpu_batch_ns", &cosim::bindings::gpu_batch_ns, py::arg("gpu"), py::arg("model"), py::arg("parallel"),
          py::arg("peer_link"), py::arg("batches"), py::arg("overlap_host"));
    m.def("gpu_batch_power", &cosim::bindings::gpu_batch_power, py::arg("gpu"), py::arg("model"), py::arg("parallel"),
          py::arg("peer_link"), py::arg("power"), py::arg("batches"), py::arg("overlap_host"),
          py::arg("step_ns") = py::none());
    m.def("param_declarations", &cosim::bindings::param_declarations);
    // Pure rules the Python side shares with the models (no SystemC, run anywhere).
    m.def("can_backtrack", &cosim::can_backtrack, py::arg("step"), py::arg("backtracks"), py::arg("max_backtracks"));
    m.def("keeps_refinement", &cosim::keeps_refinement, py::arg("passes"), py::arg("step"), py::arg("backtracks"),
          py::arg("max_backtracks"));
    m.def("kv_bytes_per_token", [](const py::dict& model, double kv_bytes_per_element) {
        return cosim::bindings::model_spec(model).kv_bytes_per_token(kv_bytes_per_element);
    }, py::arg("model"), py::arg("kv_bytes_per_element"));
    m.def("draft_memory", [](const py::dict& model, double weight_bytes_per_param, double kv_bytes_per_element,
                             int64_t kv_reserve_tokens, double capacity_bytes, int64_t contexts, const std::string& where) {
        const cosim::DraftMemory m = cosim::draft_memory(cosim::bindings::model_spec(model), weight_bytes_per_param,
                                                         kv_bytes_per_element, kv_reserve_tokens, capacity_bytes, where);
        py::dict out;
        out["weights_bytes"] = m.weights_bytes;
        out["context_bytes"] = m.context_bytes;
        out["reserve_tokens"] = m.reserve_tokens;
        out["capacity_bytes"] = m.capacity_bytes;
        out["need_bytes"] = m.need_bytes(contexts);
        out["fits"] = m.fits(contexts);
        out["most_contexts"] = m.most_contexts();
        return out;
    }, py::arg("model"), py::arg("weight_bytes_per_param"), py::arg("kv_bytes_per_element"),
       py::arg("kv_reserve_tokens"), py::arg("capacity_bytes"), py::arg("contexts"), py::arg("where"));
    m.attr("EVENT_KINDS") = cosim::bindings::event_kinds();
    m.def("report_crashes_to", &cosim::bindings::report_crashes_to, py::arg("fd"));
    m.def("exported_columns", &cosim::bindings::exported_columns);
    m.attr("DECISION_KINDS") = cosim::bindings::decision_kinds();
    m.def("systemc_selftest", &cosim::bindings::systemc_selftest, py::arg("message"));
    m.def("time_rounding", &cosim::bindings::time_rounding, py::arg("durations_ns"));
    m.def("kernel_floor", &cosim::bindings::kernel_floor, py::arg("transactions"), py::arg("delay_ns"));
}
