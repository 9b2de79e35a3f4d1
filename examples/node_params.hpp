#pragma once
// The parameters of the example node (heteroreason_node.cpp). The U280's HBM geometry is
// the board's (AMD UG1393: 8 GiB, 32 pseudo-channels of 14.375 GB/s); everything else is a
// round value chosen so that every duration is a whole number of nanoseconds and the log
// can be worked out by hand (examples/README.md does it). For the built-in devices and
// models with their sources, see `cosim params` and cosim/data/.
#include <heteroreason/fpga_draft_accelerator.hpp>
#include <heteroreason/gpu_timing.hpp>
#include <heteroreason/hbm.hpp>
#include <heteroreason/model_spec.hpp>
#include <heteroreason/pcie_link.hpp>
#include <heteroreason/power.hpp>

namespace example {

inline cosim::PcieLinkParams link() {
    cosim::PcieLinkParams p;
    p.bandwidth_gbps = 16.0;  // 12 GB/s effective: 12 bytes per ns
    p.efficiency = 0.75;
    p.latency_ns = 1000.0;
    return p;
}

inline cosim::HbmParams u280_hbm() {
    cosim::HbmParams p;
    p.capacity_bytes = 8.0 * 1024 * 1024 * 1024;  // AMD UG1393
    p.pseudo_channels = 32;                       // AMD UG1393
    p.channel_bandwidth_gbps = 14.375;            // AMD UG1393: 460 GB/s over 32
    p.efficiency = 0.92;                          // a channel sustains 13.225 GB/s
    return p;
}

// 32 ports of 256 bits at 250 MHz: 8 GB/s each (below a channel's 13.225), 256 GB/s in all.
inline cosim::FpgaAcceleratorParams u280_decoder() {
    cosim::FpgaAcceleratorParams p;
    p.clock_mhz = 250.0;  // 4 ns a cycle
    p.macs_per_cycle = 2048.0;
    p.hbm_ports = 32;
    p.port_width_bits = 256.0;
    p.port_efficiency = 1.0;
    p.pipeline_cycles_per_layer = 100.0;
    p.weight_bytes_per_param = 1.0;  // W8A8
    p.kv_bytes_per_element = 1.0;
    p.kv_reserve_tokens = 4096;
    p.kvmu = "tlm";
    return p;
}

// Both GPUs: 1024 GB/s and 80 TFLOP/s effective, 20 us a forward pass, a hard roofline.
inline cosim::GpuParams gpu() {
    cosim::GpuParams p;
    p.memory_bytes = 24.0 * 1024 * 1024 * 1024;
    p.memory_bandwidth_gbps = 2048.0;
    p.memory_efficiency = 0.5;
    p.peak_tflops = 160.0;
    p.compute_efficiency = 0.5;
    p.roofline_exponent = 0.0;
    p.request_overhead_ns = 0.0;
    p.forward_overhead_ns = 20000.0;
    p.layer_overhead_ns = 0.0;
    p.weight_bytes_per_param = 2.0;  // BF16
    p.kv_bytes_per_element = 2.0;
    p.kv_reserve_tokens = 4096;
    return p;
}

inline cosim::PowerParams power(double idle_w, double prefill_w, double decode_w, double transfer_w) {
    cosim::PowerParams p;
    p.idle_w = idle_w;
    p.prefill_w = prefill_w;
    p.decode_w = decode_w;
    p.transfer_w = transfer_w;
    return p;
}

inline cosim::ModelSpec model(const char* name, int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                              int64_t head_dim, int64_t ffn, int64_t vocab, double params) {
    cosim::ModelSpec m;
    m.name = name;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = head_dim;
    m.ffn = ffn;
    m.vocab = vocab;
    m.params = params;
    m.lm_head = true;
    m.score_head_params = 0.0;
    m.context_window = 8192;
    return m;
}

inline cosim::ModelSpec draft_model() { return model("draft", 16, 1024, 16, 4, 64, 4096, 32768, 0.3e9); }
inline cosim::ModelSpec target_model() { return model("target", 32, 4096, 32, 8, 128, 12288, 32768, 6.5e9); }
// A process reward model: a scoring head of 2048 weights instead of the vocabulary.
inline cosim::ModelSpec prm_model() {
    cosim::ModelSpec m = model("prm", 16, 2048, 16, 4, 128, 8192, 32768, 1.0e9);
    m.lm_head = false;
    m.score_head_params = 2048.0;
    return m;
}

}  // namespace example
