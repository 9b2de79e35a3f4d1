#pragma once
// The toy devices the C++ tests share, with figures easy to work by hand.
//   FPGA: 100 MHz (10 ns a cycle), 64 MACs a cycle, 2 ports of 128 bits at half their rate
//     (a port moves 16 B x 100 MHz x 0.5 = 0.8 GB/s); 10 pipeline cycles per layer = 200 ns;
//     INT8 weights and KV.
//   HBM: 4 pseudo-channels of `channel_gbps` at `efficiency`.
//   GPU: 128 GB/s x 0.5 = 64 B/ns; 0.064 TFLOP/s x 0.5 = 32 FLOP/ns = 16 MACs/ns;
//     1000 ns a forward call + 100 ns a layer; BF16 weights and KV.
#include <cstdint>

#include <heteroreason/fpga_decoder_timing.hpp>
#include <heteroreason/gpu_timing.hpp>
#include <heteroreason/hbm.hpp>

inline cosim::HbmParams toy_hbm(double capacity_bytes, double channel_gbps = 1.0, double efficiency = 0.5) {
    cosim::HbmParams p;
    p.capacity_bytes = capacity_bytes;
    p.pseudo_channels = 4;
    p.channel_bandwidth_gbps = channel_gbps;
    p.efficiency = efficiency;
    return p;
}

inline cosim::FpgaAcceleratorParams toy_fpga(int64_t kv_reserve_tokens = 0) {
    cosim::FpgaAcceleratorParams p;
    p.clock_mhz = 100.0;
    p.macs_per_cycle = 64.0;
    p.hbm_ports = 2;
    p.port_width_bits = 128.0;
    p.port_efficiency = 0.5;
    p.pipeline_cycles_per_layer = 10.0;
    p.weight_bytes_per_param = 1.0;
    p.kv_bytes_per_element = 1.0;
    p.kv_reserve_tokens = kv_reserve_tokens;
    p.kvmu = "tlm";
    return p;
}

inline cosim::GpuParams toy_gpu(double roofline_exponent = 0.0, double memory_bytes = 1e9,
                                int64_t kv_reserve_tokens = 0) {
    cosim::GpuParams p;
    p.memory_bytes = memory_bytes;
    p.memory_bandwidth_gbps = 128.0;
    p.memory_efficiency = 0.5;
    p.peak_tflops = 0.064;
    p.compute_efficiency = 0.5;
    p.roofline_exponent = roofline_exponent;
    p.request_overhead_ns = 0.0;
    p.forward_overhead_ns = 1000.0;
    p.layer_overhead_ns = 100.0;
    p.weight_bytes_per_param = 2.0;
    p.kv_bytes_per_element = 2.0;
    p.kv_reserve_tokens = kv_reserve_tokens;
    return p;
}
