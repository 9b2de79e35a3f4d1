#pragma once
// The HBM of an FPGA board behind a TLM-2.0 target socket: the accelerator streams its
// weights and KV cache through it, one transaction per drafted step or prefill, not one
// per token. A read or write of `length` bytes from a region (address: its region's base,
// below) is annotated with the time the bandwidth model gives the stream: the ports the
// initiator reads through (HbmStream: how many, and what one moves per ns at its width
// and clock), each capped by its pseudo-channel (channel bandwidth x efficiency), the
// ports capped by the pseudo-channels. Without an HbmStream the whole memory streams it
// (every pseudo-channel at its efficiency). Capacity by region as in Hbm.
// The payload's data pointer may be null: the model times the stream, it holds no bytes.
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "hbm.hpp"

namespace cosim {

// The regions' base addresses (a region's size is what Hbm allocated to it).
enum class HbmRegion : uint64_t { weights = 0x0, kv_cache = 0x1'0000'0000 };

// How an initiator reaches the memory: `ports` ports that each move at most `port_gbps`
// (0: as fast as a pseudo-channel); ports beyond the pseudo-channels share them. `bytes`,
// when above 0, is the stream's length in place of the payload's (a drafted step's stream
// may pass the 4 GiB a payload's length can say).
class HbmStream : public tlm::tlm_extension<HbmStream> {
public:
    int ports = 1;
    double port_gbps = 0.0;
    double bytes = 0.0;
    tlm::tlm_extension_base* clone() const override { return new HbmStream(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const HbmStream&>(other); }
};

class HbmTarget : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket_optional<HbmTarget> socket;

    // Serves `memory` (which the owner keeps; its regions are the map's).
    HbmTarget(sc_core::sc_module_name name, Hbm& memory);

    // The stream's time at the bandwidth model (bytes / GB/s = ns).
    double stream_ns(double bytes, const HbmStream* stream) const;
    double bytes_read() const { return bytes_read_; }
    double bytes_written() const { return bytes_written_; }
    uint64_t transactions() const { return transactions_; }
    double busy_ns() const { return busy_ns_; }

private:
    void b_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

    Hbm& memory_;
    double bytes_read_ = 0.0;
    double bytes_written_ = 0.0;
    uint64_t transactions_ = 0;
    double busy_ns_ = 0.0;
};

}  // namespace cosim
