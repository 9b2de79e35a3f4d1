#include "sim_time.hpp"
#include "host_messages.hpp"

namespace cosim {

Delivery verdict_at_host(SlotDevices& dev, SlotState& state, const WorkflowOptions& options, const TicketPtr& scored,
                         int32_t step) {
    await(scored);
    const Delivery v = dev.d().fabric->send_fine_at(Endpoint::prm, Endpoint::host,
                                                    static_cast<uint64_t>(options.control_bytes), scored->end_units,
                                                    {scored->activity}, step);
    at_least_units(v.arrival_units);
    state.last_settle = v.activity;
    return v;
}

Delivery command_to_draft(SlotDevices& dev, SlotState& state, const WorkflowOptions& options, int64_t cause,
                          int32_t step) {
    const Delivery d = dev.d().fabric->send_fine(Endpoint::host, Endpoint::draft,
                                                 static_cast<uint64_t>(options.control_bytes), now_ns(), {cause}, step);
    state.command_arrival_units = d.arrival_units;
    state.last_command = d.activity;
    return d;
}

}  // namespace cosim
