// Iteration-level batching: sequences that join together share each iteration, which is
// timed as one forward pass over the batch (weights read once, every sequence's KV and
// FLOPs), and split its energy. The toy model and GPU are test_gpu_timing's: two decode
// tokens at contexts c1 and c2 take 1200 + (2 x 90,112 + 256 (c1 + c2)) / 16 ns (compute
// binds).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include <heteroreason/gpu_batcher.hpp>
#include <heteroreason/gpu_timing.hpp>
#include <heteroreason/power.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

namespace {

double pair_ns(double c1, double c2) { return 1200.0 + (2.0 * 90112.0 + 256.0 * (c1 + c2)) / 16.0; }

}  // namespace

int sc_main(int, char*[]) {
    cosim::PowerParams watts;
    watts.idle_w = 0.0;
    watts.prefill_w = 100.0;
    watts.decode_w = 50.0;
    watts.transfer_w = 0.0;
    cosim::Power power("gpu", watts);
    cosim::GpuBatcher batcher("batcher", cosim::BatchingParams(), power);
    const cosim::GpuTiming timing("gpu", toy_gpu(), toy_model());

    return run_in_thread([&] {
        double energy[2] = {0.0, 0.0};
        double work[2] = {0.0, 0.0};
        double ended[2] = {0.0, 0.0};
        int64_t decoded[2] = {0, 0};
        sc_core::sc_event both_done;
        int running = 2;
        for (int s = 0; s < 2; ++s) {
            sc_core::sc_spawn([&, s] {
                int64_t left = 2;
                decoded[s] = batcher.decode(timing, 10 + 10 * s, [&left] { return --left > 0; }, nullptr, energy[s],
                                            &work[s]);
                ended[s] = cosim::now_ns();
                if (--running == 0) both_done.notify(sc_core::SC_ZERO_TIME);
            });
        }
        sc_core::wait(both_done);
        // Two iterations of both sequences: contexts (10, 20), then (11, 21).
        const double total = pair_ns(10, 20) + pair_ns(11, 21);
        CHECK_NEAR(pair_ns(10, 20), timing.batch_ns({cosim::BatchWork{1, 10, true}, cosim::BatchWork{1, 20, true}}),
                   1e-9);
        for (int s = 0; s < 2; ++s) {
            CHECK(decoded[s] == 2);
            CHECK_NEAR(ended[s], total, 1e-3);
            CHECK_NEAR(work[s], total / 2.0, 1e-3);
            CHECK_NEAR(energy[s], 50.0 * total / 2.0 * 1e-9, 1e-15);
        }
        CHECK(batcher.iterations() == 2);
        CHECK(batcher.batched_sequences() == 4);
        CHECK_NEAR(batcher.busy_ns(), total, 1e-3);
        CHECK_NEAR(power.energy_j(), 50.0 * total * 1e-9, 1e-15);
        // Alone, a prefill is timed as the lone operation: 1200 + 20,192 ns for 4 after 10
        // (test_gpu_timing works it out).
        const double t0 = cosim::now_ns();
        double e = 0.0;
        CHECK(batcher.prefill(timing, 4, 10, false, nullptr, e));
        CHECK_NEAR(cosim::now_ns() - t0, 21392.0, 1e-3);
        CHECK_NEAR(e, 100.0 * 21392.0 * 1e-9, 1e-12);
    });
}
