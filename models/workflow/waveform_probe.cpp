#include "sim_time.hpp"
#include "waveform_probe.hpp"

#include "errors.hpp"

namespace cosim {

namespace {
const char* const kDevices[3] = {"draft", "prm", "target"};
// After the power states' own codes (0-3).
constexpr int kSyncSummaryState = kPowerStateCount;
}

WaveformProbe::WaveformProbe(sc_core::sc_module_name name, const std::string& path, PcieFabric& fabric,
                             const std::array<double, 3>& idle_w, bool every_token, std::array<size_t, 3> links,
                             double window_start_ns, double window_end_ns, bool with_prm)
    : sc_core::sc_module(name), idle_w_(idle_w), fabric_(fabric), links_(links), window_start_ns_(window_start_ns),
      window_end_ns_(window_end_ns), open_(window_start_ns <= 0.0) {
    if (!(window_start_ns >= 0.0) || !(window_end_ns > window_start_ns))
        throw ConfigError("waveform window: the start must be >= 0 and before the end");
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
        if (i == 1 && !with_prm) continue;
        const std::string device(kDevices[i]);
        sc_core::sc_trace(file_, state[i], device + ".state");
        sc_core::sc_trace(file_, power_w[i], device + ".power_w");
        sc_core::sc_trace(file_, pcie_bytes_in_flight[i], "pcie." + device + "_bytes_in_flight");
        if (fabric_.link(links_[static_cast<size_t>(i)]).carries_collectives())
            sc_core::sc_trace(file_, pcie_collectives[i], "pcie." + device + "_collectives");
    }
    fabric_.watch(every_token);
    SC_HAS_PROCESS(WaveformProbe);
    SC_METHOD(sample_links);
    sensitive << fabric_.changed;
    dont_initialize();
    SC_METHOD(start);
    SC_THREAD(window);
}

void WaveformProbe::start() {
    for (int i = 0; i < 3; ++i) now_.power_w[static_cast<size_t>(i)] = rounded_w(idle_w_[i]);
    if (open_) show();
    if (window_observer_) window_observer_(open_);
}

void WaveformProbe::window() {
    if (!open_) {
        at_least(window_start_ns_);
        open_ = true;
        show();
        if (window_observer_) window_observer_(true);
    }
    if (std::isfinite(window_end_ns_)) {
        at_least(window_end_ns_);
        open_ = false;
        if (window_observer_) window_observer_(false);
    }
}

void WaveformProbe::show() {
    show_kvmu();
    show_run();
    for (int i = 0; i < 3; ++i) show_device(i);
    show_links();
}

void WaveformProbe::show_kvmu() {
    kvmu_valid.write(now_.valid);
    kvmu_curr.write(now_.curr);
    kvmu_ahead.write(now_.ahead);
    kvmu_mark.write(now_.mark);
    kvmu_steps_ahead.write(now_.steps_ahead);
    kvmu_mode.write(now_.mode);
    mux_pcie.write(now_.mux_pcie);
}

void WaveformProbe::show_run() {
    problem.write(now_.problem);
    step.write(now_.step);
}

void WaveformProbe::show_device(int device) {
    const auto i = static_cast<size_t>(device);
    state[i].write(now_.state[i]);
    power_w[i].write(now_.power_w[i]);
}

void WaveformProbe::show_links() {
    for (size_t i = 0; i < 3; ++i) {
        pcie_bytes_in_flight[i].write(now_.bytes[i]);
        pcie_collectives[i].write(now_.collectives[i]);
    }
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
    now_.valid = p.valid;
    now_.curr = p.curr;
    now_.ahead = p.ahead;
    now_.mark = kvmu.marks().empty() ? p.curr : kvmu.marks().front();
    now_.steps_ahead = kvmu.steps_ahead();
    now_.mode = static_cast<int>(kvmu.mode());
    now_.mux_pcie = kvmu.mux() == MuxSource::pcie;
    if (open_) show_kvmu();
}

void WaveformProbe::on_power(int device, PowerState s, double watts) {
    now_.state[static_cast<size_t>(device)] = static_cast<int>(s);
    now_.power_w[static_cast<size_t>(device)] = rounded_w(watts);
    if (open_) show_device(device);
}

void WaveformProbe::on_sync_summary(bool active, double watts) {
    now_.state[0] = active ? kSyncSummaryState : static_cast<int>(PowerState::idle);
    now_.power_w[0] = rounded_w(watts);
    if (open_) show_device(0);
}

void WaveformProbe::on_step(int32_t p, int32_t s) {
    now_.problem = p;
    now_.step = s;
    if (open_) show_run();
}

void WaveformProbe::sample_links() {
    fabric_.advance();
    for (size_t i = 0; i < 3; ++i) {
        now_.bytes[i] = fabric_.bytes_in_flight(links_[i]);
        now_.collectives[i] = fabric_.collectives_in_flight(links_[i]);
    }
    if (open_) show_links();
}

}  // namespace cosim
