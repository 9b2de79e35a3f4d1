// The latency formulas behind one interface (timing/latency_model.hpp): a formula of the
// user's own drives a GPU proxy with no edit of the proxy, the configuration picks the
// built-in ones (roofline, measured table, with the roofline where the table has no rows),
// and the FPGA decoder answers the same questions. The toy model and devices are
// test_gpu_timing's and test_fpga_decoder_timing's.
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <heteroreason/device_command.hpp>
#include <heteroreason/errors.hpp>
#include <heteroreason/fpga_decoder_timing.hpp>
#include <heteroreason/gpu_proxy.hpp>
#include <heteroreason/gpu_timing.hpp>
#include <heteroreason/latency_model.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

namespace {

// A user's formula: a decode token takes 1000 + c ns, a prefill 5000 ns a token; no batched form.
struct Constant : cosim::LatencyModel {
    const char* kind() const override { return "constant"; }
    double decode_token_ns(int64_t context) const override { return 1000.0 + static_cast<double>(context); }
    double prefill_ns(int64_t tokens, int64_t /*context*/) const override {
        return 5000.0 * static_cast<double>(tokens);
    }
};

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> port;
    explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name), port("port") {}
};

}  // namespace

int sc_main(int, char*[]) {
    const cosim::ModelSpec model = toy_model();

    // The configuration picks the formula: none, a measured table (the roofline answers for a
    // batch the table has no batch rows for: two decodes at 10 and 20 as test_gpu_timing works
    // them out, 1200 + 11,744 ns).
    const cosim::GpuTiming roofline("gpu", toy_gpu(0.0), model);
    CHECK(std::string(roofline.latency().kind()) == "roofline");
    const cosim::LatencyProfile table("test", {cosim::ProfilePoint{cosim::Phase::decode, 1, 0, 1e-3, 1}});
    const cosim::GpuTiming measured("gpu", toy_gpu(0.0), model, table);
    CHECK(std::string(measured.latency().kind()) == "latency_profile");
    CHECK(measured.profiled(cosim::Phase::decode) && !measured.profiled(cosim::Phase::prefill));
    CHECK_NEAR(measured.decode_token_ns(0), 1e6, 1e-6);
    CHECK_NEAR(measured.batch_ns({cosim::BatchWork{1, 10, true}, cosim::BatchWork{1, 20, true}}), 1200.0 + 11744.0,
               1e-9);

    // A formula with no batched form refuses a batch of two, naming itself.
    const Constant constant;
    CHECK_NEAR(constant.batch_ns({cosim::BatchWork{3, 0, false}}), 15000.0, 1e-12);
    CHECK_THROWS(cosim::SimulationError, "constant: a batch of 2",
                 constant.batch_ns({cosim::BatchWork{1, 0, true}, cosim::BatchWork{1, 5, true}}));

    // The FPGA decoder through the interface: a token after 10 is 91,592 ns and a prefill of 4
    // after 10 is 92,104 ns (test_fpga_decoder_timing's hand-worked values).
    const cosim::FpgaDecoderTiming fpga("u", toy_fpga(), toy_hbm(1e9, 1.0, 0.5), model);
    const cosim::LatencyModel& as_model = fpga;
    CHECK(std::string(as_model.kind()) == "fpga_decoder");
    CHECK_NEAR(as_model.decode_token_ns(10), 91592.0, 1e-9);
    CHECK_NEAR(as_model.prefill_ns(4, 10), 91904.0 + 200.0, 1e-9);

    // The user's formula drives a proxy: a lone request of 8 prompt tokens and 3 output
    // tokens waits the request overhead (toy_gpu's), 8 x 5000 ns of prefill, then decodes
    // after 8 and 9 tokens.
    cosim::PowerParams watts;
    watts.idle_w = 10.0;
    watts.prefill_w = 100.0;
    watts.decode_w = 50.0;
    cosim::GpuProxy proxy("gpu", toy_gpu(0.0), model, watts, std::make_shared<const Constant>());
    Initiator host("host");
    host.port.bind(proxy.host);
    const double overhead = toy_gpu(0.0).request_overhead_ns;
    return run_in_thread([&] {
        cosim::DeviceCommand c;
        c.context = 8;
        cosim::send_command(host.port, cosim::DeviceOp::gpu_request, 3, c);
        CHECK_NEAR(cosim::units_to_ns(c.first_token_units), overhead + 40000.0, 1e-3);
        CHECK_NEAR(cosim::now_ns(), overhead + 40000.0 + 1008.0 + 1009.0, 1e-3);
        CHECK(c.produced == 3);
    });
}
