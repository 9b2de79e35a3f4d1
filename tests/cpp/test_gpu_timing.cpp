// The GPU's timing: launch overheads plus a roofline of compute and memory time, for a
// lone decode token, a prefill and a batched iteration. The toy model's counts are in
// toy_model.hpp.
#include <cmath>

#include <heteroreason/errors.hpp>
#include <heteroreason/gpu_timing.hpp>

#include "check.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

int sc_main(int, char*[]) {
    const cosim::ModelSpec model = toy_model();
    cosim::GpuTiming hard("gpu", toy_gpu(0.0), model);
    CHECK_NEAR(hard.overhead_ns(), 1200.0, 1e-12);
    // Decode at c: compute (90,112 + 256c) / 16 = 5,632 + 16c; memory (2 x 90,112 + 256c) / 64
    // = 2,816 + 4c.
    CHECK_NEAR(hard.decode_compute_ns(10), 5792.0, 1e-9);
    CHECK_NEAR(hard.decode_memory_ns(10), 2856.0, 1e-9);
    CHECK_NEAR(hard.decode_token_ns(10), 1200.0 + 5792.0, 1e-9);
    CHECK_THROWS(cosim::ConfigError, "GpuTiming::decode_token_ns: context", hard.decode_token_ns(-100));
    CHECK_THROWS(cosim::ConfigError, "GpuTiming::prefill_ns: tokens", hard.prefill_ns(-3, 10));
    // Prefill of 4 after 10: MACs 4 x (90,112 - 16,384) + 16,384 + 256 x (40 + 6) = 323,072,
    // compute 20,192; memory (180,224 + 14 x 256) / 64 = 2,872.
    CHECK_NEAR(hard.prefill_compute_ns(4, 10), 20192.0, 1e-9);
    CHECK_NEAR(hard.prefill_memory_ns(4, 10), 2872.0, 1e-9);
    CHECK_NEAR(hard.prefill_ns(4, 10), 1200.0 + 20192.0, 1e-9);
    // A batch of one is the lone operation; two decodes at 10 and 20 read the weights once:
    // compute (2 x 90,112 + 256 x 30) / 16 = 11,744, memory (180,224 + 30 x 256) / 64 = 2,936.
    CHECK_NEAR(hard.batch_ns({cosim::BatchWork{1, 10, true}}), hard.decode_token_ns(10), 1e-9);
    CHECK_NEAR(hard.batch_ns({cosim::BatchWork{1, 10, true}, cosim::BatchWork{1, 20, true}}), 1200.0 + 11744.0,
               1e-9);

    // The smooth roofline, p = 2: sqrt(compute^2 + memory^2).
    cosim::GpuTiming smooth("gpu", toy_gpu(2.0), model);
    CHECK_NEAR(smooth.roofline(3.0, 4.0), 5.0, 1e-12);
    CHECK_NEAR(smooth.decode_token_ns(0), 1200.0 + std::sqrt(5632.0 * 5632.0 + 2816.0 * 2816.0), 1e-9);

    // A measured profile replaces the formula for the phase it covers.
    cosim::LatencyProfile measured("test", {cosim::ProfilePoint{cosim::Phase::decode, 1, 0, 1e-3, 1},
                                            cosim::ProfilePoint{cosim::Phase::decode, 1, 100, 2e-3, 1}});
    cosim::GpuTiming profiled("gpu", toy_gpu(0.0), model, measured);
    CHECK_NEAR(profiled.decode_token_ns(50), 1.5e6, 1e-6);  // halfway between the points
    CHECK_NEAR(profiled.prefill_ns(4, 10), 1200.0 + 20192.0, 1e-9);

    cosim::GpuParams bad = toy_gpu(0.0);
    bad.memory_efficiency = 1.5;
    CHECK_THROWS(cosim::ConfigError, "gpu.memory_efficiency", cosim::GpuTiming("gpu", bad, model));
    return check_failures();
}
