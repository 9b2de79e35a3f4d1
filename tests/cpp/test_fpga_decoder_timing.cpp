// The FPGA decoder's timing: token = max(compute, memory) + pipeline, with the memory side
// capped by the ports' width x clock or by the pseudo-channels behind them, and a local
// prefill sharing one weight stream. The toy model and design are in toy_model.hpp and
// toy_devices.hpp.
#include <heteroreason/errors.hpp>
#include <heteroreason/fpga_decoder_timing.hpp>

#include "check.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

int sc_main(int, char*[]) {
    const cosim::ModelSpec model = toy_model();
    {
        // Channels of 1 GB/s x 0.5 cap the ports (0.8): 0.5 GB/s each, 1 GB/s for two.
        cosim::FpgaDecoderTiming t("u", toy_fpga(), toy_hbm(1e9, 1.0, 0.5), model);
        CHECK(!t.ports_bind());
        CHECK_NEAR(t.port_gbps(), 0.5, 1e-15);
        CHECK_NEAR(t.decoder_gbps(), 1.0, 1e-15);
        // compute = (90,112 + 256c) / 64 x 10 ns; memory = (90,112 + 128c) / 1 GB/s.
        CHECK_NEAR(t.compute_ns(10.0), 14080.0 + 400.0, 1e-9);
        CHECK_NEAR(t.memory_ns(10.0), 90112.0 + 1280.0, 1e-9);
        CHECK_NEAR(t.pipeline_ns(), 200.0, 1e-12);
        CHECK_NEAR(t.token_ns(0.0), 90312.0, 1e-9);
        CHECK_NEAR(t.token_ns(10.0), 91592.0, 1e-9);
        CHECK_THROWS(cosim::ConfigError, "FpgaDecoderTiming::token_ns: context", t.token_ns(-1.0));
        CHECK_THROWS(cosim::ConfigError, "FpgaDecoderTiming::prefill_ns: tokens", t.prefill_ns(0, 10.0));
        CHECK_THROWS(cosim::ConfigError, "FpgaDecoderTiming::token_ns: context", t.token_ns(std::nan("")));
        CHECK(t.bound(10.0) == cosim::FpgaBound::hbm);
        // Prefill of 4 after 10: compute (4 x 90,112 + 256 x (4x10 + 4x3/2)) / 64 x 10 = 58,160;
        // memory (90,112 + 14 x 128) / 1 = 91,904; plus the pipeline.
        CHECK_NEAR(t.prefill_ns(4, 10.0), 91904.0 + 200.0, 1e-9);
        CHECK_EQ_NUM(t.streamed_weight_bytes(), 90112);
        CHECK_EQ_NUM(t.kv_bytes_per_token(), 128);
    }
    {
        // Channels of 2 GB/s x 1.0 leave the ports (0.8) binding: 1.6 GB/s for two.
        cosim::FpgaDecoderTiming t("u", toy_fpga(), toy_hbm(1e9, 2.0, 1.0), model);
        CHECK(t.ports_bind());
        CHECK_NEAR(t.memory_ns(10.0), (90112.0 + 1280.0) / 1.6, 1e-9);
        CHECK(t.bound(10.0) == cosim::FpgaBound::ports);
    }
    {
        // Four MACs a cycle: compute (90,112 + 2,560) / 4 x 10 = 231,680 binds.
        cosim::FpgaAcceleratorParams p = toy_fpga();
        p.macs_per_cycle = 4.0;
        cosim::FpgaDecoderTiming t("u", p, toy_hbm(1e9, 1.0, 0.5), model);
        CHECK(t.bound(10.0) == cosim::FpgaBound::macs);
        CHECK_NEAR(t.token_ns(10.0), 231680.0 + 200.0, 1e-9);
        // Twice the clock halves every term.
        p.clock_mhz = 200.0;
        cosim::FpgaDecoderTiming fast("u", p, toy_hbm(1e9, 1.0, 0.5), model);
        CHECK_NEAR(fast.token_ns(10.0), (231680.0 + 200.0) / 2.0, 1e-9);
    }
    {
        cosim::FpgaAcceleratorParams p = toy_fpga();
        p.pipeline_cycles_per_layer = 1e6;  // 2 x 1e6 x 10 ns
        cosim::FpgaDecoderTiming t("u", p, toy_hbm(1e9, 1.0, 0.5), model);
        CHECK(t.bound(0.0) == cosim::FpgaBound::pipeline);
        CHECK_NEAR(t.token_ns(0.0), 90112.0 + 2e7, 1e-6);
    }
    {
        // Eight ports on four channels share them: the channels' 4 x 0.5 = 2 GB/s binds,
        // under the ports' 8 x 0.8 = 6.4; each port gets a quarter of a GB/s.
        cosim::FpgaAcceleratorParams p = toy_fpga();
        p.hbm_ports = 8;
        cosim::FpgaDecoderTiming shared("u", p, toy_hbm(1e9, 1.0, 0.5), model);
        CHECK(!shared.ports_bind());
        CHECK_NEAR(shared.decoder_gbps(), 2.0, 1e-15);
        CHECK_NEAR(shared.port_gbps(), 0.25, 1e-15);
        CHECK_NEAR(shared.port_clocked_gbps(), 0.8, 1e-15);
        // Channels of 2 GB/s: the four carry 8 GB/s, so the eight ports' 6.4 bind.
        cosim::FpgaDecoderTiming wide("u", p, toy_hbm(1e9, 2.0, 1.0), model);
        CHECK(wide.ports_bind());
        CHECK_NEAR(wide.decoder_gbps(), 6.4, 1e-12);
        // A bad value is refused by name.
        p = toy_fpga();
        p.clock_mhz = -1.0;
        CHECK_THROWS(cosim::ConfigError, "u.clock_mhz", cosim::FpgaDecoderTiming("u", p, toy_hbm(1e9, 1.0, 0.5), model));
    }
    return check_failures();
}
