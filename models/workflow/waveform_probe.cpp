#include "waveform_probe.hpp"

#include "errors.hpp"

namespace cosim {

namespace {
const char* const kDevices[3] = {"draft", "prm", "target"};
// After the power states' own codes (0-3).
constexpr int kSyncSummaryState = kPowerStateCount;
}

WaveformProbe::WaveformProbe(sc_core::sc_module_name name, const std::string& path, PcieFabric& fabric,
                             const std::array<double, 3>& idle_w, bool every_token, std::array<size_t, 3> links)
    : sc_core::sc_module(name), idle_w_(idle_w), fabric_(fabric), links_(links) {
    file_ = sc_core::sc_create_vcd_trace_file(path.c_str());
    if (file_ == nullptr) throw SimulationError("cannot create the VCD file " + path + ".vcd");
    // The kernel resolution: a coarser unit could not place every event (W713).
    file_->set_time_unit(1.0, sc_core::SC_PS);
    // A dot in a trace name opens a VCD scope: one per part of the system.
    sc_core::sc_trace(file_, kvmu_valid, "kvmu.valid");
    sc_core::sc_trace(file_, kvmu_curr, "kvmu.curr");
    sc_core::sc_trace(file_, kvmu_ahead, "kvmu.ahead");
    sc_core::sc_trace(file_, kvmu_mark, "kvmu.mark");
    sc_core::sc_trace(file_, kvmu_steps_ahead, "kvmu.steps_ahead");
    sc_core::sc_trace(file_, kvmu_mode, "kvmu.mode");
    sc_core::sc_trace(file_, mux_pcie, "kvmu.mux_pcie");
    sc_core::sc_trace(file_, problem, "run.problem");
    sc_core::sc_trace(file_, step, "run.step");
    for (int i = 0; i < 3; ++i) {
        const std::string device(kDevices[i]);
        sc_core::sc_trace(file_, state[i], device + ".state");
        sc_core::sc_trace(file_, power_w[i], device + ".power_w");
        sc_core::sc_trace(file_, pcie_bytes_in_flight[i], "pcie." + device + "_bytes_in_flight");
    }
    fabric_.watch(every_token);
    SC_HAS_PROCESS(WaveformProbe);
    SC_METHOD(sample_links);
    sensitive << fabric_.changed;
    dont_initialize();
    SC_METHOD(start);
}

void WaveformProbe::start() {
    for (int i = 0; i < 3; ++i) power_w[i].write(rounded_w(idle_w_[i]));
}

WaveformProbe::~WaveformProbe() {
    if (!file_) return;
    // SystemC's writer ignores write errors: a file that lacks this last comment was not
    // written whole, and the caller refuses it.
    file_->write_comment(kEndComment);
    sc_core::sc_close_vcd_trace_file(file_);
}

void WaveformProbe::on_kvmu(const Kvmu& kvmu) {
    const KvmuPointers p = kvmu.pointers();
    kvmu_valid.write(p.valid);
    kvmu_curr.write(p.curr);
    kvmu_ahead.write(p.ahead);
    kvmu_mark.write(kvmu.marks().empty() ? p.curr : kvmu.marks().front());
    kvmu_steps_ahead.write(kvmu.steps_ahead());
    kvmu_mode.write(static_cast<int>(kvmu.mode()));
    mux_pcie.write(kvmu.mux() == MuxSource::pcie);
}

void WaveformProbe::on_power(int device, PowerState s, double watts) {
    state[device].write(static_cast<int>(s));
    power_w[device].write(rounded_w(watts));
}

void WaveformProbe::on_sync_summary(bool active, double watts) {
    state[0].write(active ? kSyncSummaryState : static_cast<int>(PowerState::idle));
    power_w[0].write(rounded_w(watts));
}

void WaveformProbe::on_step(int32_t p, int32_t s) {
    problem.write(p);
    step.write(s);
}

void WaveformProbe::sample_links() {
    fabric_.advance();
    for (size_t i = 0; i < 3; ++i) pcie_bytes_in_flight[i].write(fabric_.bytes_in_flight(links_[i]));
}

}  // namespace cosim
