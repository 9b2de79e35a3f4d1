// A tensor-parallel group's collectives on its GPUs' PCIe link (collective_link.hpp): booked
// after each pass's compute, they wait for the host's transfers and those wait for them; a
// decode run books its tokens' collectives before its one wait and frees those of the tokens
// it does not decode. The toy model (2 layers, hidden 64, bf16 activations) on two GPUs: a
// decode token's collectives are 2 layers x 2 all-reduces of 64 x 2 = 128 bytes, each a ring
// of 2 (T - 1) = 2 steps moving 128 / 2 bytes: 8 steps and 512 bytes each way, on a link of
// 16 GB/s and 1000 ns a transfer: 8 x 1000 + 512 / 16 = 8032 ns. A prefill of n tokens:
// 8 steps and 512 n bytes: 8000 + 32 n ns.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <functional>
#include <vector>

#include <systemc>

#include <heteroreason/decode_run.hpp>
#include <heteroreason/gpu_batcher.hpp>
#include <heteroreason/gpu_proxy.hpp>
#include <heteroreason/host_dma.hpp>
#include <heteroreason/pcie_link.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"
#include "toy_devices.hpp"
#include "toy_model.hpp"

namespace {

cosim::PcieLinkParams pcie() {
    cosim::PcieLinkParams p;
    p.bandwidth_gbps = 16.0;
    p.efficiency = 1.0;
    p.latency_ns = 1000.0;
    return p;
}

cosim::ParallelLayout tp2(bool on_pcie) {
    cosim::ParallelParams p;
    p.tensor_parallel = 2;
    p.collective_latency_ns = 500.0;
    p.activation_bytes = 2.0;
    return cosim::ParallelLayout("target", p, cosim::PeerLink{16.0, 1.0, 1000.0, on_pcie}, toy_model());
}

constexpr double kDecodeLinkNs = 8032.0;
double prefill_link_ns(double n) { return 8000.0 + 32.0 * n; }
double transfer_ns(double bytes) { return 1000.0 + bytes / 16.0; }

// Runs `body` at `at_ns` on a thread of its own (a second party on the link, a host retuning).
struct Later : sc_core::sc_module {
    double at_ns;
    std::function<void()> body;
    SC_HAS_PROCESS(Later);
    Later(sc_core::sc_module_name name, double at, std::function<void()> b)
        : sc_core::sc_module(name), at_ns(at), body(std::move(b)) {
        SC_THREAD(run);
    }
    void run() {
        sc_core::wait(cosim::duration_ns(at_ns));
        body();
    }
};

}  // namespace

int sc_main(int, char*[]) {
    // Booked time freed exactly: a booking split around another, one merged with a neighbour.
    {
        cosim::LinkBookings b;
        cosim::LinkPieces first, second;
        CHECK(b.book(0, 100, 0, &first).second == 100);
        CHECK(b.book(150, 10, 0).second == 160);
        const auto got = b.book(50, 100, 0, &second);  // [100, 150) and [160, 210)
        CHECK(got.first == 100 && got.second == 210);
        CHECK(second.size() == 2);
        CHECK(b.release(first, 0) == 100);
        CHECK(b.book(0, 50, 0).second == 50);  // free again
        CHECK(b.release(second, 120) == 30 + 50);  // what is left from 120 on
        CHECK(b.book(120, 40, 120).second == 170);  // [120, 150), then after [150, 160)
    }

    cosim::PowerParams watts;
    watts.idle_w = 10.0;
    watts.prefill_w = 100.0;
    watts.decode_w = 50.0;
    cosim::PcieLink link("link", pcie());
    cosim::HostDma dma("dma");
    dma.socket.bind(link.socket);
    cosim::GpuProxy proxy("target", toy_gpu(), toy_model(), watts, cosim::LatencyProfile(), true, tp2(true));
    proxy.set_collective_link(link);
    cosim::GpuProxy nvlink("nvlink", toy_gpu(), toy_model(), watts, cosim::LatencyProfile(), true, tp2(false));
    nvlink.set_collective_link(link);  // not PCIe: nothing to book
    // A group whose work goes through a batcher: its iterations book the collectives.
    cosim::GpuProxy batched("batched", toy_gpu(), toy_model(), watts, cosim::LatencyProfile(), true, tp2(true));
    cosim::GpuBatcher batcher("batcher", cosim::BatchingParams(), batched.power());
    batched.set_batcher(&batcher);
    batched.set_collective_link(link);
    CHECK(proxy.collectives_on_link());
    CHECK(!nvlink.collectives_on_link());

    // The closed form, by hand: 2 x 2 all-reduces of 500 ns fixed plus the link's time.
    const cosim::ParallelLayout layout = tp2(true);
    CHECK_NEAR(layout.collectives_ns(1.0), 4 * 500.0 + kDecodeLinkNs, 1e-9);
    CHECK_NEAR(layout.collectives_ns(8.0), 4 * 500.0 + prefill_link_ns(8.0), 1e-9);

    // The timeline, worked out before the run (each phase starts when the one before ends).
    const double pass = proxy.prefill_ns(8, 0);
    const double compute = pass - prefill_link_ns(8.0);
    const auto d = [&](int64_t c) { return proxy.decode_token_ns(c); };
    const auto dc = [&](int64_t c) { return proxy.decode_token_ns(c) - kDecodeLinkNs; };
    const double e1 = pass;                                                             // 1
    const double e2 = e1 + compute - 500.0 + transfer_ns(16000) + prefill_link_ns(8.0);  // 2
    const double e3 = e2 + pass;                                                        // 3
    const double s4 = e3 + pass + 20000.0;  // after the NVLink group's prefill
    const double e4 = s4 + d(8) + d(9) + d(10);                                         // 4
    const double s5 = e4 + 20000.0;
    const double s6 = s5 + 100000.0;
    // 6: two sequences' iterations of two decode tokens each (8 steps and 2 x 512 bytes of
    // collectives each: 8064 ns on the link), a transfer towards the GPUs 500 ns before the
    // first iteration's compute ends.
    const auto two = [&](int64_t c1, int64_t c2) {
        return batched.timing().batch_ns({cosim::BatchWork{1, c1, true}, cosim::BatchWork{1, c2, true}});
    };
    const double pass1 = two(10, 20);
    const double pass2 = two(11, 21);

    // 3: a transfer back to the host posted 1000 ns into the prefill's collectives.
    double back_end = 0.0;
    Later back("back", e2 + compute + 1000.0,
               [&] { back_end = cosim::to_ns(dma.post(cosim::LinkDirection::device_to_host, 16000)); });
    // 4: a run of 5 tokens retuned to 3 while its third computes.
    cosim::DecodeRun run4;
    run4.limit = 5;
    Later retune("retune", s4 + d(8) + d(9) + dc(10) / 2.0, [&] {
        run4.limit = 3;
        run4.retune.notify(sc_core::SC_ZERO_TIME);
    });
    // 5: a run of 4 tokens aborted while its second computes.
    cosim::DecodeRun run5;
    run5.limit = 4;
    cosim::AbortSignal abort5;
    Later stop("stop", s5 + d(8) + dc(9) / 2.0, [&] { abort5.request(); });

    return run_in_thread([&] {
        const auto inbound = [&] { return link.collective_ns(cosim::LinkDirection::host_to_device); };
        // 1. A prefill with the link to itself ends where the closed form says.
        CHECK(proxy.prefill(8, 0));
        CHECK_NEAR(cosim::now_ns(), e1, 1e-3);
        CHECK_NEAR(inbound(), prefill_link_ns(8.0), 1e-3);

        // 2. A transfer towards the GPUs booked first, from 500 ns before the compute ends:
        //    the collectives' inbound half waits for it (their outbound half does not).
        dma.post(cosim::LinkDirection::host_to_device, 16000, cosim::duration_ns(compute - 500.0));
        CHECK(proxy.prefill(8, 0));
        CHECK_NEAR(cosim::now_ns(), e2, 1e-3);
        CHECK_NEAR(link.collective_wait_ns(), 1500.0, 1e-3);  // the pass waited; counted on the link

        // 3. The pass keeps its time; the transfer posted during its collectives waits for them.
        CHECK(proxy.prefill(8, 0));
        CHECK_NEAR(cosim::now_ns(), e3, 1e-3);
        CHECK_NEAR(back_end, e2 + pass + transfer_ns(16000), 1e-3);
        CHECK_NEAR(link.collective_wait_ns(), 1500.0, 1e-3);  // the transfer waited, not the pass
        // It waited from 1000 ns into the collectives to their end; the first transfer waited for nothing.
        CHECK_NEAR(link.transfer_wait_ns(), prefill_link_ns(8.0) - 1000.0, 1e-3);

        // An NVLink group books nothing: its prefill is the closed form alone.
        const double before = inbound();
        const double t = cosim::now_ns();
        CHECK(nvlink.prefill(8, 0));
        CHECK_NEAR(cosim::now_ns() - t, pass, 1e-3);
        CHECK_NEAR(inbound(), before, 1e-9);

        // 4. The run's three tokens take the closed form's time; the fourth and fifth
        //    tokens' collectives are freed: a transfer ready when the fourth's would have
        //    begun starts at once.
        sc_core::wait(cosim::duration_ns(s4 - cosim::now_ns()));
        const double held4 = inbound();
        CHECK(proxy.decode_run(run4, 8, nullptr) == 3);
        CHECK_NEAR(cosim::now_ns(), e4, 1e-3);
        CHECK_NEAR(inbound() - held4, 3 * kDecodeLinkNs, 1e-3);
        const double fourth = e4 + dc(11);
        const double end = cosim::to_ns(
            dma.post(cosim::LinkDirection::device_to_host, 16000, cosim::duration_ns(fourth - cosim::now_ns())));
        CHECK_NEAR(end, fourth + transfer_ns(16000), 1e-3);

        // 5. Aborted in its second token's compute: one token, one token's collectives held.
        sc_core::wait(cosim::duration_ns(s5 - cosim::now_ns()));
        const double held5 = inbound();
        CHECK(proxy.decode_run(run5, 8, &abort5) == 1);
        CHECK_NEAR(cosim::now_ns(), s5 + d(8) + dc(9) / 2.0, 1e-3);
        CHECK_NEAR(inbound() - held5, kDecodeLinkNs, 1e-3);
        CHECK_NEAR(link.collective_wait_ns(), 1500.0, 1e-3);  // runs 4 and 5 had the link to themselves

        // 6. The first iteration's collectives wait 1500 ns for the transfer; the second
        //    iteration follows it (one wait each: none planned ahead).
        sc_core::wait(cosim::duration_ns(s6 - cosim::now_ns()));
        dma.post(cosim::LinkDirection::host_to_device, 16000, cosim::duration_ns(pass1 - 8064.0 - 500.0));
        double energy[2] = {0.0, 0.0};
        double ended[2] = {0.0, 0.0};
        sc_core::sc_event both;
        int running = 2;
        for (int s = 0; s < 2; ++s) {
            sc_core::sc_spawn([&, s] {
                int64_t left = 2;
                CHECK(batcher.decode(batched.timing(), 10 + 10 * s, [&left] { return --left > 0; }, nullptr,
                                     energy[s]) == 2);
                ended[s] = cosim::now_ns();
                if (--running == 0) both.notify(sc_core::SC_ZERO_TIME);
            });
        }
        sc_core::wait(both);
        for (int s = 0; s < 2; ++s) CHECK_NEAR(ended[s], s6 + pass1 + 1500.0 + pass2, 1e-3);
        CHECK(batcher.iterations() == 2);
        CHECK_NEAR(batcher.busy_ns(), pass1 + 1500.0 + pass2, 1e-3);
        CHECK_NEAR(link.collective_wait_ns(), 3000.0, 1e-3);
        CHECK_NEAR(link.transfer_wait_ns(), prefill_link_ns(8.0) - 1000.0, 1e-3);  // no other transfer waited

        // 7. Token by token (GpuProxy::decode): each token its pass, its collectives booked as
        //    its compute ends.
        const double t7 = cosim::now_ns();
        const double held7 = inbound();
        CHECK(proxy.decode(3, 8) == 3);
        CHECK_NEAR(cosim::now_ns() - t7, d(8) + d(9) + d(10), 1e-3);
        CHECK_NEAR(inbound() - held7, 3 * kDecodeLinkNs, 1e-3);
    });
}
