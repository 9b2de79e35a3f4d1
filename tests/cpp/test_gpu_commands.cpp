// The GPU proxy's commands for the target-alone system, sent through its `host` target
// socket by an initiator written here: a lone request (gpu_request) and one forward pass of
// an iteration-level engine (gpu_step). The toy model and GPU are test_gpu_timing's: a
// decode token after c tokens takes 1200 + 5632 + 16 c ns (compute binds), two decode
// tokens at contexts c1 and c2 together 1200 + (2 x 90,112 + 256 (c1 + c2)) / 16 ns.
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <heteroreason/device_command.hpp>
#include <heteroreason/gpu_proxy.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"
#include "toy_model.hpp"

namespace {

cosim::GpuParams gpu() {
    cosim::GpuParams p;
    p.memory_bytes = 1e9;
    p.memory_bandwidth_gbps = 128.0;
    p.memory_efficiency = 0.5;
    p.peak_tflops = 0.064;
    p.compute_efficiency = 0.5;
    p.roofline_exponent = 0.0;
    p.request_overhead_ns = 500.0;
    p.forward_overhead_ns = 1000.0;
    p.layer_overhead_ns = 100.0;
    p.weight_bytes_per_param = 2.0;
    p.kv_bytes_per_element = 2.0;
    p.kv_reserve_tokens = 0;
    return p;
}

double decode_ns(double c) { return 1200.0 + 5632.0 + 16.0 * c; }

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> port;
    explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name), port("port") {}
};

}  // namespace

int sc_main(int, char*[]) {
    cosim::PowerParams watts;
    watts.idle_w = 10.0;
    watts.prefill_w = 100.0;
    watts.decode_w = 50.0;
    watts.transfer_w = 0.0;
    cosim::GpuProxy proxy("gpu", gpu(), toy_model(), watts);
    Initiator host("host");
    host.port.bind(proxy.host);

    return run_in_thread([&] {
        // A lone request: 8 prompt tokens, 3 output tokens. The overhead (idle), the prefill,
        // then the decodes after 8 and 9 tokens, in one wait.
        const double prefill = proxy.prefill_ns(8, 0);
        cosim::DeviceCommand c;
        c.context = 8;
        cosim::send_command(host.port, cosim::DeviceOp::gpu_request, 3, c);
        const double decodes = decode_ns(8) + decode_ns(9);
        CHECK_NEAR(cosim::units_to_ns(c.started_units), 500.0, 1e-3);
        CHECK_NEAR(cosim::units_to_ns(c.first_token_units), 500.0 + prefill, 1e-3);
        CHECK_NEAR(cosim::now_ns(), 500.0 + prefill + decodes, 1e-3);
        CHECK_NEAR(c.work_ns, prefill + decodes, 1e-3);
        CHECK(c.produced == 3);
        CHECK_NEAR(c.energy_j, (10.0 * 500.0 + 100.0 * prefill + 50.0 * decodes) * 1e-9, 1e-12);

        // One engine step over two decode tokens, at contexts 10 and 20: decode power.
        const double t0 = cosim::now_ns();
        const double pass = 1200.0 + (2.0 * 90112.0 + 256.0 * 30.0) / 16.0;
        std::vector<cosim::BatchWork> batch{cosim::BatchWork{1, 10, true}, cosim::BatchWork{1, 20, true}};
        cosim::DeviceCommand step;
        step.batch = &batch;
        cosim::send_command(host.port, cosim::DeviceOp::gpu_step, 2, step);
        CHECK_NEAR(cosim::now_ns() - t0, pass, 1e-3);
        CHECK_NEAR(step.work_ns, pass, 1e-9);
        CHECK_NEAR(step.energy_j, 50.0 * pass * 1e-9, 1e-15);
        // With the host's work overlapped (asynchronous scheduling) the pass takes the longer
        // of its overhead (1200 ns) and the rest.
        cosim::DeviceCommand overlapped;
        overlapped.batch = &batch;
        overlapped.overlap_host = true;
        cosim::send_command(host.port, cosim::DeviceOp::gpu_step, 2, overlapped);
        CHECK_NEAR(overlapped.work_ns, pass - 1200.0, 1e-9);
    });
}
