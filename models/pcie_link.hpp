#pragma once
// PCIe link between host, GPUs and the FPGA, as a loosely-timed TLM-2.0 target.
// A write moves data towards the device (host -> device), a read back to the host.
// Each direction is a separate serial resource: a transfer starts when it arrives
// and the direction is free, and lasts latency + bytes / effective bandwidth.
#include <array>
#include <cstdint>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "param_rules.hpp"

namespace cosim {

// bandwidth_gbps (raw per direction, GB/s = bytes/ns), efficiency, latency_ns per transfer.
struct PcieLinkParams {
    COSIM_PCIE_LINK_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    double effective_gbps() const { return bandwidth_gbps * efficiency; }
    double transfer_ns(uint64_t bytes) const;
};

enum class LinkDirection : int { host_to_device = 0, device_to_host = 1 };
constexpr int kLinkDirectionCount = 2;

class PcieLink : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<PcieLink> socket;

    PcieLink(sc_core::sc_module_name name, const PcieLinkParams& params);

    const PcieLinkParams& params() const { return params_; }
    uint64_t bytes(LinkDirection dir) const { return bytes_[index(dir)]; }
    uint64_t transfers(LinkDirection dir) const { return transfers_[index(dir)]; }
    double busy_ns(LinkDirection dir) const { return busy_ns_[index(dir)]; }

private:
    static int index(LinkDirection dir) { return static_cast<int>(dir); }
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

    PcieLinkParams params_;
    std::array<sc_core::sc_time, kLinkDirectionCount> free_at_{};
    std::array<uint64_t, kLinkDirectionCount> bytes_{};
    std::array<uint64_t, kLinkDirectionCount> transfers_{};
    std::array<double, kLinkDirectionCount> busy_ns_{};
};

}  // namespace cosim
