#pragma once
// A draft device apart from the target, drafting for it token by token (the split-decoding
// system, docs/system.md): an FPGA board's decoder, a Jetson, another GPU, joined to the
// host by its own PCIe link while the target has its own. A request's timeline, the host
// between them (spec_decode.hpp draws the kept drafts):
//   the prompt    reaches the draft device over its link and it prefills it while the
//                 target prefills; the target's first token goes back to it (two legs)
//   a round       the draft device decodes d drafts one after another (the first after the
//                 target's last token), they cross its link and the target's to the target,
//                 which verifies them in one pass; the kept count and the target's token
//                 cross back (its link, then the draft device's: the token and a control
//                 word), and the draft device rolls its KV back to the kept prefix (an FPGA's
//                 KVMU: rollback mode, no time; a GPU's engine: its computed tokens)
// Each leg takes the link's latency and its bytes at its effective bandwidth; a request at
// a time holds both devices, so no transfer waits for another. The draft device draws its
// busy power while it prefills or decodes, idle otherwise.
#include <cstdint>
#include <memory>
#include <string>

#include "latency_model.hpp"
#include "pcie_link.hpp"

namespace cosim {

struct DraftDevice {
    std::shared_ptr<const LatencyModel> timing;  // its decoder (or its GPU's formula)
    PcieLinkParams draft_link;                   // host <-> draft device
    PcieLinkParams target_link;                  // host <-> target GPU
    int64_t token_bytes = 4;                     // a token id on PCIe
    int64_t control_bytes = 64;                  // a verdict (the kept count) on PCIe
    double decode_w = 0.0;                       // its power drafting
    double prefill_w = 0.0;                      // its power prefilling the prompt
    double idle_w = 0.0;

    // ConfigError naming `where` and the field.
    void validate(const std::string& where) const;
    // Bytes from one device to the other through the host: a leg on each link.
    double relay_ns(int64_t bytes) const {
        return draft_link.transfer_ns(static_cast<uint64_t>(bytes)) + target_link.transfer_ns(static_cast<uint64_t>(bytes));
    }
};

}  // namespace cosim
