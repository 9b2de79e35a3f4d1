#pragma once
// The host's small messages that every step driver sends alike: a scoring job's verdict
// back at the host, and the host's pointer update (or command) to the draft device's KVMU.
// Both are control-sized PCIe transfers; each records what the next work waits on.
#include <cstdint>

#include "device_server.hpp"
#include "pcie_fabric.hpp"
#include "slot_devices.hpp"
#include "slot_state.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

// The verdict of the scoring job `scored` (on the PRM's GPU, or the target's where it
// judges), back at the host: the host waits for it, and it settles what follows.
Delivery verdict_at_host(SlotDevices& dev, SlotState& state, const WorkflowOptions& options, const TicketPtr& scored,
                         int32_t step);
// The host's pointer update to the draft device's KVMU, sent now after `cause`; the next
// draft job waits for its arrival.
Delivery command_to_draft(SlotDevices& dev, SlotState& state, const WorkflowOptions& options, int64_t cause,
                          int32_t step);

}  // namespace cosim
