// A second, independent initiator: a test bench of its own (no host orchestration, no
// Python) that binds to the FPGA draft accelerator's and a GPU proxy's TLM-2.0 target
// sockets and drives one speculative step through them. It prints what happened, one line
// per command with the simulated time it returned at; tests/test_tlm_sockets.py compares
// the lines with a timeline worked by hand from the profiles below.
#include <cstdio>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "device_command.hpp"
#include "fpga_draft_accelerator.hpp"
#include "gpu_proxy.hpp"
#include "errors.hpp"
#include "host_dma.hpp"
#include "kvmu_registers.hpp"
#include "pcie_link.hpp"

using namespace cosim;

namespace {

double now_ms() { return sc_core::sc_time_stamp().to_seconds() * 1e3; }

ModelSpec tiny_model() {
    ModelSpec m;
    m.name = "tiny";
    m.layers = 2;
    m.hidden = 64;
    m.heads = 4;
    m.kv_heads = 4;
    m.head_dim = 16;
    m.ffn = 128;
    m.vocab = 100;
    m.params = 1e6;
    m.context_window = 4096;
    return m;
}

// Flat in context: 2 ms per drafted token on the FPGA.
FpgaProfile fpga_profile() {
    FpgaProfile p;
    p.table = LatencyProfile("bench", {{Phase::decode, 1, 0, 0.002}, {Phase::decode, 1, 4096, 0.002}});
    return p;
}

// GPU: prefill 1 ms for 1 token, 6 ms for 11 (linear between); decode 1.5 ms per token.
LatencyProfile gpu_profile() {
    return LatencyProfile("bench", {{Phase::prefill, 1, 0, 0.001}, {Phase::prefill, 11, 0, 0.006},
                                    {Phase::prefill, 1, 4096, 0.001}, {Phase::prefill, 11, 4096, 0.006},
                                    {Phase::decode, 1, 0, 0.0015}, {Phase::decode, 1, 4096, 0.0015}});
}

struct Bench : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Bench> to_fpga{"to_fpga"};
    tlm_utils::simple_initiator_socket<Bench> to_gpu{"to_gpu"};
    tlm_utils::simple_initiator_socket<Bench> to_gpu_abort{"to_gpu_abort"};
    FpgaDraftAccelerator& fpga;
    GpuProxy& gpu;
    PcieLink& link;
    uint64_t fpga_route = 0, gpu_route = 0;  // the devices' routes on the PCIe link
    AbortSignal abort;
    bool failed = false;

    SC_HAS_PROCESS(Bench);
    Bench(sc_core::sc_module_name name, FpgaDraftAccelerator& f, GpuProxy& g, PcieLink& l)
        : sc_core::sc_module(name), fpga(f), gpu(g), link(l) {
        SC_THREAD(drive);
        SC_THREAD(interrupt);
    }

    // Sends a command with an annotated delay (the initiator's local time ahead of the kernel's).
    template <typename Socket>
    DeviceCommand send(Socket& socket, DeviceOp op, int64_t count, DeviceCommand c, double delay_ms = 0.0,
                       uint64_t route = 0) {
        CommandPayload call(op, count, c, route);
        sc_core::sc_time delay(delay_ms, sc_core::SC_MS);
        socket->b_transport(call.payload, delay);
        if (call.payload.get_response_status() != tlm::TLM_OK_RESPONSE) failed = true;
        // A target that took time synchronised; one that did not leaves the delay to us.
        if (delay != sc_core::SC_ZERO_TIME) sc_core::wait(delay);
        return c;
    }

    void kvmu(const char* after) {
        const KvmuPointers p = fpga.kvmu().pointers();
        std::printf("%s kvmu valid=%lld curr=%lld ahead=%lld mode=%s\n", after, static_cast<long long>(p.valid),
                    static_cast<long long>(p.curr), static_cast<long long>(p.ahead),
                    kvmu_mode_name(fpga.kvmu().mode()));
    }

    void drive() {
        send(to_fpga, DeviceOp::load_context, 100, {}, 0.0, fpga_route);
        std::printf("load_context t_ms=%.6f\n", now_ms());
        kvmu("load_context");
        // The bench is 1 ms ahead of the kernel when it asks for the step.
        DeviceCommand step = send(to_fpga, DeviceOp::draft_step, 5, {}, 1.0, fpga_route);
        std::printf("draft_step t_ms=%.6f produced=%lld\n", now_ms(), static_cast<long long>(step.produced));
        kvmu("draft_step");
        std::printf("hbm transactions=%llu busy_ns=%.3f\n",
                    static_cast<unsigned long long>(fpga.hbm_target().transactions()), fpga.hbm_target().busy_ns());
        DeviceCommand score;
        score.context = 100;
        score = send(to_gpu, DeviceOp::gpu_score, 5, score);
        std::printf("gpu_score t_ms=%.6f ok=%d\n", now_ms(), score.ok ? 1 : 0);
        DeviceCommand verdict;
        verdict.verdict = Verdict::accept;
        send(to_fpga, DeviceOp::verdict, 0, verdict, 0.0, fpga_route);
        std::printf("verdict t_ms=%.6f\n", now_ms());
        kvmu("verdict");
        DeviceCommand decode;
        decode.context = 105;
        decode.abort = &abort;
        decode = send(to_gpu, DeviceOp::gpu_decode, 10, decode);
        std::printf("gpu_decode t_ms=%.6f produced=%lld ok=%d\n", now_ms(), static_cast<long long>(decode.produced),
                    decode.ok ? 1 : 0);
        std::printf("pcie forwarded=%llu\n", static_cast<unsigned long long>(link.commands()));
        std::printf("%s\n", failed ? "FAILED" : "DONE");
    }

    // Another process of the bench aborts the GPU's decode through the GPU's socket.
    void interrupt() {
        sc_core::wait(18.0, sc_core::SC_MS);
        DeviceCommand c;
        c.abort = &abort;
        send(to_gpu_abort, DeviceOp::gpu_abort, 0, c, 0.0, gpu_route);
        std::printf("gpu_abort t_ms=%.6f\n", now_ms());
    }
};

// The KVMU's register block on its own, driven by register accesses (the map in
// docs/hardware.md); prints each read and each error response.
struct RegisterBench : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<RegisterBench> socket{"socket"};

    SC_HAS_PROCESS(RegisterBench);
    explicit RegisterBench(sc_core::sc_module_name name) : sc_core::sc_module(name) { SC_THREAD(drive); }

    tlm::tlm_response_status access(tlm::tlm_command command, uint64_t address, uint64_t& value,
                                    unsigned length = 8) {
        tlm::tlm_generic_payload p;
        p.set_command(command);
        p.set_address(address);
        p.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
        p.set_data_length(length);
        p.set_streaming_width(length);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(p, delay);
        return p.get_response_status();
    }
    void write(KvmuRegister reg, uint64_t value) { access(tlm::TLM_WRITE_COMMAND, static_cast<uint64_t>(reg), value); }
    uint64_t read(KvmuRegister reg) {
        uint64_t value = 0;
        access(tlm::TLM_READ_COMMAND, static_cast<uint64_t>(reg), value);
        return value;
    }
    void show(const char* after) {
        std::printf("regs %s valid=%llu curr=%llu ahead=%llu mode=%llu mux=%llu nmarks=%llu mark0=%llu\n", after,
                    static_cast<unsigned long long>(read(KvmuRegister::valid)),
                    static_cast<unsigned long long>(read(KvmuRegister::curr)),
                    static_cast<unsigned long long>(read(KvmuRegister::ahead)),
                    static_cast<unsigned long long>(read(KvmuRegister::mode)),
                    static_cast<unsigned long long>(read(KvmuRegister::mux)),
                    static_cast<unsigned long long>(read(KvmuRegister::n_marks)),
                    static_cast<unsigned long long>(read(KvmuRegister::mark0)));
    }

    void drive() {
        write(KvmuRegister::depth, 2);
        write(KvmuRegister::arg, 50);
        write(KvmuRegister::cmd, 1);  // initialize
        show("initialize");
        write(KvmuRegister::cmd, 2);  // begin speculation
        write(KvmuRegister::spec, 3);
        write(KvmuRegister::cmd, 3);  // end step
        write(KvmuRegister::spec, 2);
        write(KvmuRegister::cmd, 3);  // end of a step-ahead step
        show("two_steps");
        write(KvmuRegister::cmd, 4);  // accept
        show("accept");
        uint64_t v = 7;
        std::printf("errors readonly=%d unmapped=%d short=%d\n",
                    access(tlm::TLM_WRITE_COMMAND, static_cast<uint64_t>(KvmuRegister::valid), v),
                    access(tlm::TLM_READ_COMMAND, 0x1000, v), access(tlm::TLM_READ_COMMAND, 0x0, v, 4));
        try {
            write(KvmuRegister::sync, 1);  // a target token while the MUX selects the sampler
            std::printf("sync accepted\n");
        } catch (const KvmuError&) {
            std::printf("sync refused=1\n");
        }
        show("refused");
    }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
    HbmParams hbm{8e9, 32, 14.375, 0.9};
    FpgaAcceleratorParams fp;
    fp.clock_mhz = 200;
    fp.macs_per_cycle = 4096;
    fp.hbm_ports = 4;
    fp.port_width_bits = 256;
    fp.port_efficiency = 0.8;
    fp.pipeline_cycles_per_layer = 10;
    fp.weight_bytes_per_param = 1;
    fp.kv_bytes_per_element = 1;
    fp.kv_reserve_tokens = 1024;
    fp.kvmu = argc > 1 ? argv[1] : "tlm";  // the behavioural KVMU, or the Verilated RTL
    GpuParams gp;
    gp.memory_bytes = 24e9;
    gp.memory_bandwidth_gbps = 1000;
    gp.memory_efficiency = 0.8;
    gp.peak_tflops = 100;
    gp.compute_efficiency = 0.5;
    gp.weight_bytes_per_param = 2;
    gp.kv_bytes_per_element = 2;
    gp.kv_reserve_tokens = 1024;
    PowerParams power{10, 20, 30, 15};

    FpgaDraftAccelerator fpga("fpga", fp, hbm, tiny_model(), power, fpga_profile());
    GpuProxy gpu("gpu", gp, tiny_model(), power, gpu_profile());
    // A PCIe link as the interconnect in front of both devices: it routes a command by its
    // address's top byte. The bench reaches the FPGA through it, the GPU both directly and
    // through it (two initiators on the GPU's target socket).
    PcieLinkParams lp;
    lp.bandwidth_gbps = 16;
    lp.efficiency = 0.8;
    lp.latency_ns = 1000;
    PcieLink link("pcie", lp);
    HostDma dma("dma");  // the link's data side (unused here)
    dma.socket.bind(link.socket);
    Bench bench("bench", fpga, gpu, link);
    bench.fpga_route = link.attach(fpga.host);
    bench.gpu_route = link.attach(gpu.host);
    bench.to_fpga.bind(link.upstream);
    bench.to_gpu.bind(gpu.host);
    bench.to_gpu_abort.bind(link.upstream);
    KvmuRegisters regs("regs", make_kvmu(fp.kvmu, "regs", 1024));
    RegisterBench reg_bench("reg_bench");
    reg_bench.socket.bind(regs.socket);
    sc_core::sc_start();
    return bench.failed ? 1 : 0;
}
