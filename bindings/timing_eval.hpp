#pragma once
// The devices' timing formulas evaluated at given points, with no simulation:
// pure arithmetic, so it runs in the calling process (fits, design-space
// figures, `cosim params`), never elaborating SystemC.
#include <pybind11/pybind11.h>

namespace cosim::bindings {

// points: (phase, tokens, context) with phase "decode" (tokens = 1) or "prefill".
// Returns {"ns", "compute_ns", "memory_ns", "pipeline_ns", "bound", "port_gbps", "decoder_gbps"}, and with
// `power` (a board's) its state powers as the board draws them ("idle_w", "prefill_w", "decode_w",
// "transfer_w": fpga_power.hpp derives the busy ones from the design under the design model).
pybind11::dict fpga_timing(const pybind11::dict& fpga, const pybind11::dict& hbm, const pybind11::dict& model,
                           const pybind11::object& profile, const pybind11::list& points,
                           const pybind11::object& power);
// Returns {"ns", "overhead_ns", "compute_ns", "memory_ns", "bound", "stored_weight_bytes", "kv_bytes_per_token"}
// (the last two per GPU of the group). parallel, peer_link: None, or the group a role spans.
pybind11::dict gpu_timing(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::object& profile,
                          const pybind11::list& points, const pybind11::object& parallel,
                          const pybind11::object& peer_link);
// One engine step per (decodes, their context, prefill tokens, the prefill's context): that
// many sequences decoding a token each and one prefill chunk beside them, on a GPU or a
// parallel group (the roofline: no profile); overlap_host as GpuTiming::step_ns.
pybind11::list gpu_batch_ns(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::object& parallel,
                            const pybind11::object& peer_link, const pybind11::list& batches, bool overlap_host);
// The same steps' work on one GPU of the group (FLOPs, bytes) and the power one GPU draws
// over each (`power`: one GPU's; its load model, or the state's power), each step taking
// `step_ns` where given (a measured step) or the roofline's time.
pybind11::dict gpu_batch_power(const pybind11::dict& gpu, const pybind11::dict& model,
                               const pybind11::object& parallel, const pybind11::object& peer_link,
                               const pybind11::dict& power, const pybind11::list& batches, bool overlap_host,
                               const pybind11::object& step_ns);

}  // namespace cosim::bindings
