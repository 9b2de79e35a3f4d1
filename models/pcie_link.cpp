#include "sim_time.hpp"
#include "pcie_link.hpp"

#include "errors.hpp"

namespace cosim {

void PcieLinkParams::validate(const std::string& where) const {
    COSIM_PCIE_LINK_PARAMS(COSIM_CHECK_PARAM)
}

double PcieLinkParams::transfer_ns(uint64_t bytes) const {
    // 1 GB/s moves one byte per nanosecond.
    return latency_ns + static_cast<double>(bytes) / effective_gbps();
}

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieLinkParams& params)
    : sc_core::sc_module(name), socket("socket"), params_(params) {
    params_.validate(std::string(this->name()));
    socket.register_b_transport(this, &PcieLink::b_transport);
}

void PcieLink::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    LinkDirection dir;
    switch (trans.get_command()) {
        case tlm::TLM_WRITE_COMMAND: dir = LinkDirection::host_to_device; break;
        case tlm::TLM_READ_COMMAND: dir = LinkDirection::device_to_host; break;
        default: trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); return;
    }
    const int d = index(dir);
    const uint64_t length = trans.get_data_length();
    const double duration_ns = params_.transfer_ns(length);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time arrival = now + delay;
    const sc_core::sc_time start = arrival > free_at_[d] ? arrival : free_at_[d];
    const sc_core::sc_time end = start + cosim::duration_ns(duration_ns);
    free_at_[d] = end;
    bytes_[d] += length;
    transfers_[d] += 1;
    busy_ns_[d] += duration_ns;
    delay = end - now;
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace cosim
