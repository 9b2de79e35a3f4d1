#include "sim_time.hpp"
#include "slot_devices.hpp"

#include <string>

#include "device_command.hpp"
#include "errors.hpp"

namespace cosim {

SlotDevices::SlotDevices(const WorkflowDevices& devices, ActivityLog& log, int slot)
    : prm_port("prm_port"), target_port("target_port"), helper_port("helper_port"), d_(devices), log_(log),
      slot_(slot) {
    auto bind = [](auto& port, GpuProxy* gpu, PcieLink* link) {
        if (gpu == nullptr) return;
        if (link != nullptr) port.bind(link->upstream);
        else port.bind(gpu->host);
    };
    bind(prm_port, d_.prm, d_.prm_link);
    bind(target_port, d_.target, d_.target_link);
    bind(helper_port, d_.draft_on_target, d_.target_link);
}

tlm_utils::simple_initiator_socket_optional<SlotDevices>& SlotDevices::port_to(const GpuProxy& gpu) {
    if (&gpu == d_.prm) return prm_port;
    if (&gpu == d_.target) return target_port;
    if (&gpu == d_.draft_on_target) return helper_port;
    throw SimulationError(std::string(prm_port.get_parent_object()->name()) + ": internal: " + gpu.name() +
                          " is not one of this slot's GPUs");
}

uint64_t SlotDevices::route_to(const GpuProxy& gpu) const {
    if (&gpu == d_.prm) return d_.prm_route;
    if (&gpu == d_.target) return d_.target_route;
    return d_.helper_route;
}

std::array<double, 3> SlotDevices::energies() const {
    // A verifier on the target's GPU draws on the target's meter: counted once, as the target's.
    const double prm_j = &d_.prm->power() == &d_.target->power() ? 0.0 : d_.prm->power().energy_j();
    return {d_.draft->power().energy_j(), prm_j, d_.target->power().energy_j()};
}

bool SlotDevices::request(Role role, double overhead_ns, double idle_w, int32_t step, std::vector<int64_t>& after,
                          AbortSignal* abort) {
    if (overhead_ns <= 0.0) return true;
    const double start = now_ns();
    const bool done = wait_unless_aborted(overhead_ns, abort);
    after = {log_.add(role, ActivityKind::request, step, start, now_ns(), 0, after, idle_w)};
    return done;
}

bool SlotDevices::gpu_prefill(GpuProxy& gpu, int64_t tokens, int64_t context, AbortSignal* abort, bool score) {
    DeviceCommand c;
    c.context = context;
    c.abort = abort;
    send_command(port_to(gpu), score ? DeviceOp::gpu_score : DeviceOp::gpu_prefill, tokens, c, route_to(gpu));
    return c.ok;
}

int64_t SlotDevices::decode_alone(GpuProxy& target, DecodeRun& live, int64_t context, Ticket& t, int64_t request) {
    DeviceCommand c;
    c.context = context;
    c.request = request;
    c.abort = &t.abort;
    c.run = &live;
    send_command(port_to(target), DeviceOp::gpu_decode_run, 0, c, route_to(target));
    return c.produced;
}

int64_t SlotDevices::gpu_batch_decode(GpuProxy& gpu, int64_t context, std::function<bool()> next,
                                      AbortSignal* abort, double& energy_j, double& work_ns, int64_t certain,
                                      uint64_t key) {
    DeviceCommand c;
    c.context = context;
    c.request = static_cast<int64_t>(key);
    c.abort = abort;
    c.next = std::move(next);
    send_command(port_to(gpu), DeviceOp::gpu_batch_decode, certain, c, route_to(gpu));
    energy_j += c.energy_j;
    work_ns += c.work_ns;
    return c.produced;
}

double SlotDevices::above_idle_j(int64_t id, double idle_w) const {
    const Activity& a = log_.at(id);
    return a.energy_j - (a.end_ns - a.start_ns) * idle_w * kJoulesPerWattNs;
}

}  // namespace cosim
