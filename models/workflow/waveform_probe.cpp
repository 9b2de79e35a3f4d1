#include "waveform_probe.hpp"

#include "errors.hpp"

namespace cosim {

namespace {
const char* const kDevices[3] = {"draft", "prm", "target"};
// After the power states' own codes (0-3).
constexpr int kSyncSummaryState = kPowerStateCount;
}

WaveformProbe::WaveformProbe(sc_core::sc_module_name name, const std::string& path, PcieFabric& fabric,
                             const std::array<double, 3>& idle_w, bool every_token)
    : sc_core::sc_module(name), idle_w_(idle_w), fabric_(fabric) {
    file_ = sc_core::sc_create_vcd_trace_file(path.c_str());
    if (file_ == nullptr) throw SimulationError("cannot create the VCD file " + path + ".vcd");
    // The kernel resolution: a coarser unit could not place every event (W713).
    file_->set_time_unit(1.0, sc_core::SC_PS);
    sc_core::sc_trace(file_, kvmu_valid, "kvmu_valid");
    sc_core::sc_trace(file_, kvmu_curr, "kvmu_curr");
    sc_core::sc_trace(file_, kvmu_ahead, "kvmu_ahead");
    sc_core::sc_trace(file_, kvmu_mode, "kvmu_mode");
    sc_core::sc_trace(file_, mux_pcie, "mux_pcie");
    sc_core::sc_trace(file_, problem, "problem");
    sc_core::sc_trace(file_, step, "step");
    for (int i = 0; i < 3; ++i) {
        const std::string device(kDevices[i]);
        sc_core::sc_trace(file_, state[i], device + "_state");
        sc_core::sc_trace(file_, power_mw[i], device + "_power_mw");
        sc_core::sc_trace(file_, pcie_bytes_in_flight[i], "pcie_" + device + "_bytes_in_flight");
    }
    fabric_.watch(every_token);
    SC_HAS_PROCESS(WaveformProbe);
    SC_METHOD(sample_links);
    sensitive << fabric_.changed;
    dont_initialize();
    SC_METHOD(start);
}

void WaveformProbe::start() {
    for (int i = 0; i < 3; ++i) power_mw[i].write(milliwatts(idle_w_[i]));
}

WaveformProbe::~WaveformProbe() {
    if (file_) sc_core::sc_close_vcd_trace_file(file_);
}

void WaveformProbe::on_kvmu(const Kvmu& kvmu) {
    const KvmuPointers p = kvmu.pointers();
    kvmu_valid.write(p.valid);
    kvmu_curr.write(p.curr);
    kvmu_ahead.write(p.ahead);
    kvmu_mode.write(static_cast<int>(kvmu.mode()));
    mux_pcie.write(kvmu.mux() == MuxSource::pcie);
}

void WaveformProbe::on_power(int device, PowerState s, double watts) {
    state[device].write(static_cast<int>(s));
    power_mw[device].write(milliwatts(watts));
}

void WaveformProbe::on_sync_summary(bool active, double watts) {
    state[0].write(active ? kSyncSummaryState : static_cast<int>(PowerState::idle));
    power_mw[0].write(milliwatts(watts));
}

void WaveformProbe::on_step(int32_t p, int32_t s) {
    problem.write(p);
    step.write(s);
}

void WaveformProbe::sample_links() {
    const Endpoint ends[3] = {Endpoint::draft, Endpoint::prm, Endpoint::target};
    fabric_.advance();
    for (int i = 0; i < 3; ++i) pcie_bytes_in_flight[i].write(fabric_.bytes_in_flight(ends[i]));
}

}  // namespace cosim
