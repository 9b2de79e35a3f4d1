#include "host_dma.hpp"

#include <limits>

#include "errors.hpp"

namespace cosim {

HostDma::HostDma(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}

sc_core::sc_time HostDma::post(LinkDirection dir, uint64_t bytes, sc_core::sc_time offset) {
    if (bytes > std::numeric_limits<unsigned int>::max())
        throw ConfigError(std::string(name()) + ": one transfer of " + std::to_string(bytes) +
                          " bytes exceeds the TLM payload limit of 4 GiB; split it");
    // Only the length matters to the timing model; no payload bytes are carried.
    payload_.set_command(dir == LinkDirection::host_to_device ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload_.set_address(0);
    payload_.set_data_ptr(nullptr);
    payload_.set_data_length(static_cast<unsigned int>(bytes));
    payload_.set_streaming_width(static_cast<unsigned int>(bytes));
    payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = offset;
    socket->b_transport(payload_, delay);
    if (payload_.is_response_error())
        throw SimulationError(std::string(name()) + ": PCIe transfer failed: " + payload_.get_response_string());
    return sc_core::sc_time_stamp() + delay;
}

void HostDma::transfer(LinkDirection dir, uint64_t bytes) {
    sc_core::wait(post(dir, bytes) - sc_core::sc_time_stamp());
}

}  // namespace cosim
