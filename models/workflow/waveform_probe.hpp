#pragma once
// Waveforms of a workflow run through SystemC's own sc_trace: the KVMU's
// pointers, mode and input MUX, each device's power state and power, the step
// and problem under way, and the bytes in flight on each PCIe link, in one VCD
// scope per part (kvmu, run, draft, prm, target, pcie). Opens in GTKWave or
// Surfer. Signals are fed by the models' observers. With a time window, the signals
// change only within it: they take the state of the system when it opens (the probe
// keeps that state all along) and keep their values once it closes, so the file holds
// the window's changes alone.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include <systemc>

#include "kvmu.hpp"
#include "pcie_fabric.hpp"
#include "power.hpp"

namespace cosim {

class WaveformProbe : public sc_core::sc_module {
public:
    template <typename T>
    using Signal = sc_core::sc_signal<T, sc_core::SC_UNCHECKED_WRITERS>;

    // `path` without the ".vcd" SystemC appends. With `every_token`, the bytes in flight
    // include the small transfers too (shadow-sync tokens, verdicts and commands).
    // `links`: the fabric's links of the draft device, PRM and target watched (a cluster's
    // waveform follows the devices of its first request slot). Without `with_prm` (a target
    // that scores the drafts itself) no PRM signals are traced.
    WaveformProbe(sc_core::sc_module_name name, const std::string& path, PcieFabric& fabric,
                  const std::array<double, 3>& idle_w, bool every_token,
                  std::array<size_t, 3> links = {0, 1, 2}, double window_start_ns = 0.0,
                  double window_end_ns = std::numeric_limits<double>::infinity(), bool with_prm = true);
    ~WaveformProbe() override;
    // The comment written last, before SystemC's final time stamp.
    static constexpr const char* kEndComment = "heteroreason-cosim: end of waveform";

    void on_kvmu(const Kvmu& kvmu);
    // Told when the window opens or closes (and at the start whether it is open), so that
    // signals traced by the models themselves keep to it too.
    void set_window_observer(std::function<void(bool)> observer) { window_observer_ = std::move(observer); }
    // The VCD, for models that trace their own signals into it (the KVMU's RTL pins).
    sc_core::sc_trace_file* file() const { return file_; }
    void on_power(int device, PowerState state, double watts);
    // Power is traced in watts rounded to the milliwatt: a short decimal in the file.
    static double rounded_w(double watts) { return static_cast<double>(std::llround(watts * 1e3)) / 1e3; }
    void on_step(int32_t problem, int32_t step);
    // Shadow sync without token detail: the draft device's passes and the gaps between
    // them as one state (4) drawing their mean power, or back to idle.
    void on_sync_summary(bool active, double watts);

    Signal<int64_t> kvmu_valid{"kvmu_valid"};
    Signal<int64_t> kvmu_curr{"kvmu_curr"};
    Signal<int64_t> kvmu_ahead{"kvmu_ahead"};
    // The end of the first finished step-ahead step (curr when there is none), and how many
    // steps are drafted beyond the step under verification (at most the step-ahead depth).
    Signal<int64_t> kvmu_mark{"kvmu_mark"};
    Signal<int> kvmu_steps_ahead{"kvmu_steps_ahead"};
    Signal<int> kvmu_mode{"kvmu_mode"};        // 0 initialization, 1 speculation, 2 accept, 3 rollback
    Signal<bool> mux_pcie{"mux_pcie"};         // 1: the decoder's input comes from PCIe
    // draft, prm, target: 0 idle, 1 prefill, 2 decode, 3 transfer, 4 shadow sync (summary, draft only)
    Signal<int> state[3];
    Signal<double> power_w[3];
    Signal<int> problem{"problem"};
    Signal<int> step{"step"};
    Signal<int64_t> pcie_bytes_in_flight[3];   // draft, prm, target links
    // The directions of the link a GPU group's collectives hold (0-2), traced for the links
    // that carry them (docs/hardware.md, "Collectives on shared links").
    Signal<int> pcie_collectives[3];

private:
    // What the signals show, kept whether or not the window is open.
    struct State {
        int64_t valid = 0, curr = 0, ahead = 0, mark = 0;
        int steps_ahead = 0, mode = 0;
        bool mux_pcie = false;
        int problem = 0, step = 0;
        std::array<int, 3> state{};
        std::array<double, 3> power_w{};
        std::array<int64_t, 3> bytes{};
        std::array<int, 3> collectives{};
    };
    void sample_links();
    void start();   // the devices start idle, drawing idle power
    void window();  // opens and closes the window
    void show();    // the signals take the state
    void show_kvmu();
    void show_run();
    void show_device(int device);
    void show_links();

    std::array<double, 3> idle_w_;
    PcieFabric& fabric_;
    std::array<size_t, 3> links_;
    double window_start_ns_, window_end_ns_;
    bool open_;
    std::function<void(bool)> window_observer_;
    State now_;
    sc_core::sc_trace_file* file_ = nullptr;
};

}  // namespace cosim
