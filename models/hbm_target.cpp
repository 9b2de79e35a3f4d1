#include "hbm_target.hpp"

#include <algorithm>

#include "sim_time.hpp"

namespace cosim {

HbmTarget::HbmTarget(sc_core::sc_module_name name, Hbm& memory)
    : sc_core::sc_module(name), socket("socket"), memory_(memory) {
    socket.register_b_transport(this, &HbmTarget::b_transport);
}

double HbmTarget::stream_ns(double bytes, const HbmStream* stream) const {
    const HbmParams& p = memory_.params();
    if (stream == nullptr) return memory_.stream_ns(bytes);
    check_argument_non_negative("HbmTarget::stream_ns", "bytes", bytes);
    const double port = stream->port_gbps > 0.0 ? stream->port_gbps : p.channel_bandwidth_gbps * p.efficiency;
    return bytes / p.ports_gbps(std::max(stream->ports, 1), port);
}

void HbmTarget::b_transport(int /*port*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    const uint64_t address = trans.get_address();
    const char* region = address >= static_cast<uint64_t>(HbmRegion::kv_cache) ? "kv_cache" : "weights";
    const uint64_t base = address >= static_cast<uint64_t>(HbmRegion::kv_cache)
                              ? static_cast<uint64_t>(HbmRegion::kv_cache) : 0;
    // A stream may pass over a region several times (the weights once per token), so only
    // its start must lie in the region.
    if (static_cast<double>(address - base) >= std::max(memory_.region_bytes(region), 1.0)) {
        trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const HbmStream* stream = trans.get_extension<HbmStream>();
    const double bytes = stream != nullptr && stream->bytes > 0.0 ? stream->bytes
                                                                   : static_cast<double>(trans.get_data_length());
    const double ns = stream_ns(bytes, stream);
    (trans.is_read() ? bytes_read_ : bytes_written_) += bytes;
    ++transactions_;
    busy_ns_ += ns;
    delay += duration_ns(ns);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace cosim
