// The PCIe link: a transfer takes latency + bytes / (bandwidth x efficiency); each
// direction is a serial resource, first come first served; a transfer posted for later
// keeps its booked time and one under way resumes after it. Driven through the host's
// DMA initiator and through a bare initiator socket written here.
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <heteroreason/host_dma.hpp>
#include <heteroreason/pcie_link.hpp>
#include <heteroreason/sim_time.hpp>

#include "run_in_thread.hpp"

namespace {

using cosim::LinkDirection;

cosim::PcieLinkParams params() {
    cosim::PcieLinkParams p;
    p.bandwidth_gbps = 16.0;
    p.efficiency = 0.75;  // 12 bytes per ns
    p.latency_ns = 1000.0;
    return p;
}

struct BareInitiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<BareInitiator> socket;
    explicit BareInitiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}
};

double ends_ns(cosim::HostDma& dma, LinkDirection dir, uint64_t bytes, double offset_ns = 0.0) {
    return cosim::to_ns(dma.post(dir, bytes, sc_core::sc_time(offset_ns, sc_core::SC_NS)));
}

}  // namespace

int sc_main(int, char*[]) {
    cosim::HostDma dma("dma");
    cosim::PcieLink link("link", params());
    dma.socket.bind(link.socket);
    BareInitiator bare("bare");
    cosim::PcieLink other("other", params());
    bare.socket.bind(other.socket);

    CHECK_NEAR(params().transfer_ns(1200), 1100.0, 0.0);
    return run_in_thread([&] {
        // One blocking transfer: 1000 + 1200 / 12 = 1100 ns.
        dma.transfer(LinkDirection::host_to_device, 1200);
        CHECK_NEAR(cosim::now_ns(), 1100.0, 0.0);

        // Two at once in one direction are served one after the other; the other
        // direction is a resource of its own.
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 1200), 2200.0, 0.0);
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 1200), 3300.0, 0.0);
        CHECK_NEAR(ends_ns(dma, LinkDirection::device_to_host, 1200), 2200.0, 0.0);
        sc_core::wait(sc_core::sc_time(2200.0, sc_core::SC_NS));
        CHECK_NEAR(cosim::now_ns(), 3300.0, 0.0);

        // Posted for later (ready at 3300 + 5000 = 8300): booked [8300, 9310).
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 120, 5000.0), 9310.0, 0.0);
        // Ready now, they go before it: [3300, 4400), then [4400, 6400).
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 1200), 4400.0, 0.0);
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 12000), 6400.0, 0.0);
        // 3000 ns from 6400: 1900 ns until the booked transfer at 8300, the other 1100
        // after it ends at 9310: done at 10410.
        CHECK_NEAR(ends_ns(dma, LinkDirection::host_to_device, 24000), 10410.0, 0.0);

        CHECK(link.transfers(LinkDirection::host_to_device) == 7);
        CHECK(link.bytes(LinkDirection::host_to_device) == 1200 * 4 + 120 + 12000 + 24000);
        CHECK(link.transfers(LinkDirection::device_to_host) == 1);
        CHECK_NEAR(link.busy_ns(LinkDirection::host_to_device), 1100.0 * 4 + 1010.0 + 2000.0 + 3000.0, 1e-9);

        // Through a bare socket: a write is towards the device, a read back to the host,
        // and the annotated delay comes back as the time to completion.
        tlm::tlm_generic_payload trans;
        trans.set_command(tlm::TLM_READ_COMMAND);
        trans.set_data_length(2400);
        trans.set_streaming_width(2400);
        sc_core::sc_time delay(100.0, sc_core::SC_NS);  // ready 100 ns from now
        bare.socket->b_transport(trans, delay);
        CHECK(trans.get_response_status() == tlm::TLM_OK_RESPONSE);
        CHECK_NEAR(cosim::to_ns(delay), 100.0 + 1000.0 + 200.0, 0.0);
        CHECK(other.bytes(LinkDirection::device_to_host) == 2400);
        // A command that is neither is refused.
        trans.set_command(tlm::TLM_IGNORE_COMMAND);
        delay = sc_core::SC_ZERO_TIME;
        bare.socket->b_transport(trans, delay);
        CHECK(trans.get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE);
        CHECK(other.transfers(LinkDirection::host_to_device) == 0);
    });
}
