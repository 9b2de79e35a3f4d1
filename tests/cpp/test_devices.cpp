// The draft accelerator and a GPU proxy in simulated time: a drafted step lasts the sum of
// its tokens' times and moves the KVMU; shadow-sync passes and a local prefill take the
// PCIe input; an abort stops a GPU decode at the token under way; power follows the
// work. The times come from the formulas checked in test_fpga_decoder_timing and
// test_gpu_timing (toy model, toy_model.hpp), worked out here by hand.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <heteroreason/abort_signal.hpp>
#include <heteroreason/errors.hpp>
#include <heteroreason/fpga_draft_accelerator.hpp>
#include <heteroreason/gpu_proxy.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

namespace {

// The toy devices (toy_devices.hpp). FPGA, as in test_fpga_decoder_timing: token(c) =
// 90,112 + 128c + 200 ns (the HBM binds). GPU, as in test_gpu_timing (hard roofline): a
// decode token at context c = 1200 + 5,632 + 16c ns.

cosim::PowerParams watts(double idle, double prefill, double decode) {
    cosim::PowerParams p;
    p.idle_w = idle;
    p.prefill_w = prefill;
    p.decode_w = decode;
    p.transfer_w = idle;
    return p;
}

double token_ns(double c) { return 90112.0 + 128.0 * c + 200.0; }
double gpu_token_ns(double c) { return 1200.0 + 5632.0 + 16.0 * c; }

}  // namespace

int sc_main(int, char*[]) {
    // The HBM holds the weights (100,000 B) and 64 tokens of KV (64 x 128 B).
    cosim::FpgaDraftAccelerator fpga("fpga", toy_fpga(64), toy_hbm(1e6), toy_model(), watts(10.0, 30.0, 20.0));
    cosim::GpuProxy target("target", toy_gpu(0.0, 1e6, 64), toy_model(), watts(5.0, 100.0, 50.0));
    CHECK_EQ_NUM(fpga.hbm().used_bytes(), 100000 + 64 * 128);
    // 2 x 100,000 B of weights and 64 x 256 B of KV do not fit in 200,000 bytes.
    cosim::GpuParams small = toy_gpu(0.0, 1e6, 64);
    small.memory_bytes = 200000.0;
    CHECK_THROWS(cosim::CapacityError, "small", cosim::GpuProxy("small", small, toy_model(), watts(1, 1, 1)));

    return run_in_thread([&] {
        fpga.load_context(10);
        // A step of 3 from 10: token(10) + token(11) + token(12).
        const double step = token_ns(10) + token_ns(11) + token_ns(12);
        CHECK(fpga.decode_step(3) == 3);
        CHECK_NEAR(cosim::now_ns(), step, 1e-3);
        const cosim::KvmuPointers p = fpga.kvmu().pointers();
        CHECK(p.valid == 10 && p.curr == 13 && p.ahead == 13);
        CHECK(fpga.kvmu().mode() == cosim::KvmuMode::speculation);
        fpga.kvmu().rollback();
        // Two shadow-sync passes from 10, then a local prefill of 4 after 12: compute
        // (4 x 90,112 + 256 x (4x12 + 6)) / 64 x 10 = 58,480 against memory
        // 90,112 + 16 x 128 = 92,160, plus the 200 ns pipeline.
        fpga.sync_token();
        fpga.sync_token();
        fpga.prefill_local(4);
        const double after_sync = step + token_ns(10) + token_ns(11) + 92160.0 + 200.0;
        CHECK_NEAR(cosim::now_ns(), after_sync, 1e-3);
        CHECK(fpga.kvmu().pointers().ahead == 16 && fpga.tokens_synced() == 2 && fpga.tokens_prefilled() == 4);
        // Energy: decode for the step and the passes, prefill for the local prefill, idle never.
        const double decode_ns = step + token_ns(10) + token_ns(11);
        CHECK_NEAR(fpga.power().energy_j(), (20.0 * decode_ns + 30.0 * (92160.0 + 200.0)) * 1e-9, 1e-12);
        // A step past the reserved KV cache is refused.
        fpga.kvmu().accept();
        CHECK_THROWS(cosim::KvmuError, "64 tokens", fpga.decode_step(49));

        // The GPU: decode 3 from 20, aborted halfway through the second token.
        const double t0 = cosim::now_ns();
        cosim::AbortSignal abort;
        const double cut = gpu_token_ns(20) + gpu_token_ns(21) / 2.0;
        sc_core::sc_spawn([&] {
            sc_core::wait(cosim::duration_ns(cut));
            abort.request();
        });
        CHECK(target.decode(3, 20, &abort) == 1);
        CHECK_NEAR(cosim::now_ns() - t0, cut, 1e-3);
        CHECK(target.tokens_decoded() == 1);
        // Unaborted: 2 tokens from 21.
        const double t1 = cosim::now_ns();
        CHECK(target.decode(2, 21) == 2);
        CHECK_NEAR(cosim::now_ns() - t1, gpu_token_ns(21) + gpu_token_ns(22), 1e-3);
        // A prefill past the context window is refused by name.
        CHECK_THROWS(cosim::SimulationError, "context window", target.prefill(10, 510));
        // A negative context is refused by name before any time passes, as Python's API refuses it.
        const double t2 = cosim::now_ns();
        CHECK_THROWS(cosim::ConfigError, "GpuProxy::decode: context: must be a finite number >= 0, got -100",
                     target.decode(5, -100));
        CHECK_THROWS(cosim::ConfigError, "GpuProxy::prefill: context", target.prefill(5, -1));
        CHECK_EQ_NUM(cosim::now_ns(), t2);
        // Energy: idle until t0, decode since, 5 W and 50 W.
        const double busy = cut + gpu_token_ns(21) + gpu_token_ns(22);
        CHECK_NEAR(target.power().energy_j(), (5.0 * t0 + 50.0 * busy) * 1e-9, 1e-12);
    });
}
