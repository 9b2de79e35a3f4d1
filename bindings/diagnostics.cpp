#include "sim_time.hpp"
#include "diagnostics.hpp"

#include <pybind11/stl.h>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "errors.hpp"
#include "kernel_run.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {
// A target that only annotates a fixed delay: the kernel cost of a TLM call.
class NullTarget : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<NullTarget> socket;
    NullTarget(sc_core::sc_module_name name, double delay_ns)
        : sc_core::sc_module(name), socket("socket"), delay_(delay_ns, sc_core::SC_NS) {
        socket.register_b_transport(this, &NullTarget::b_transport);
    }

private:
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
        delay += delay_;
        trans.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    sc_core::sc_time delay_;
};

class FloorInitiator : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<FloorInitiator> socket;
    explicit FloorInitiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}
};
}  // namespace

py::dict kernel_floor(int64_t transactions, double delay_ns) {
    require_positive("transactions", static_cast<double>(transactions));
    require_positive("delay_ns", delay_ns);
    claim_process();
    NullTarget target("target", delay_ns);
    FloorInitiator initiator("initiator");
    initiator.socket.bind(target.socket);
    Driver driver("driver", [&] {
        tlm::tlm_generic_payload trans;
        trans.set_command(tlm::TLM_WRITE_COMMAND);
        trans.set_data_length(4);
        for (int64_t i = 0; i < transactions; ++i) {
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            initiator.socket->b_transport(trans, delay);
            sc_core::wait(delay);
        }
    });
    py::dict out = run_stats(run_to_completion(driver));
    out["transactions"] = transactions;
    out["events_per_s"] = static_cast<double>(transactions) / out["wall_s"].cast<double>();
    return out;
}

py::dict time_rounding(const std::vector<double>& durations_ns) {
    claim_process();
    // Filled in the SystemC thread, which runs without the GIL: plain vectors.
    std::vector<uint64_t> kernel_units, units;
    std::vector<double> kernel_ns, ns;
    Driver driver("driver", [&] {
        // Away from zero, so the overflow check sees a clock that has run.
        sc_core::wait(sc_core::sc_time(1.0, sc_core::SC_NS));
        for (double d : durations_ns) {
            const sc_core::sc_time kernel(d, sc_core::SC_NS);
            kernel_units.push_back(kernel.value());
            units.push_back(duration_units(d));
            kernel_ns.push_back(kernel.to_seconds() * 1e9);
            ns.push_back(to_ns(kernel));
        }
    });
    run_to_completion(driver);
    py::dict out;
    out["kernel_units"] = kernel_units;
    out["units"] = units;
    out["kernel_ns"] = kernel_ns;
    out["ns"] = ns;
    return out;
}

void systemc_selftest(const std::string& message) {
    claim_process();
    Driver driver("driver", [message] {
        sc_core::wait(sc_core::sc_time(1.0, sc_core::SC_NS));
        SC_REPORT_ERROR("/cosim/selftest", message.c_str());
    });
    run_to_completion(driver);
}

}  // namespace cosim::bindings
