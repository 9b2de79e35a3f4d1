#pragma once
// The host side of a PCIe link: issues DMA transfers as TLM-2.0 transactions
// (write = towards the device, read = back to the host).
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pcie_link.hpp"

namespace cosim {

class HostDma : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<HostDma> socket;

    explicit HostDma(sc_core::sc_module_name name);

    // Issues a transfer that reaches the link `offset` from now, without
    // waiting; returns its absolute completion time.
    sc_core::sc_time post(LinkDirection dir, uint64_t bytes, sc_core::sc_time offset = sc_core::SC_ZERO_TIME);
    // Issues a transfer and waits for it to complete (call from an SC_THREAD).
    void transfer(LinkDirection dir, uint64_t bytes);

private:
    tlm::tlm_generic_payload payload_;
};

}  // namespace cosim
