#pragma once
// The command protocol of the devices' TLM-2.0 target sockets (docs/hardware.md, "TLM-2.0
// interfaces"). A command is one generic payload, loosely timed through b_transport:
//   command  TLM_WRITE_COMMAND (a read of a register block is TLM_READ_COMMAND)
//   address  the command's offset in the device's map (DeviceOp)
//   data     8 bytes, little-endian: the command's token count (tokens, passes, position)
//   length   8
// and a DeviceCommand extension for the fields a command needs beyond a count (a context, an
// abort signal, a verdict) and for what it answers (tokens produced, energy, time worked).
// A command that moves simulated time (a draft step, a prefill) is a blocking b_transport:
// the target first waits out the delay the initiator annotated, then waits for the work
// and returns with the delay at zero. Commands that take no time (a verdict, a KVMU
// register write) return at once with the delay unchanged.
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>

#include "abort_signal.hpp"
#include "decode_run.hpp"
#include "draft_choice.hpp"

namespace cosim {

struct BatchWork;  // gpu_timing.hpp

// Offsets of the commands in a device's map; one device accepts its own.
enum class DeviceOp : uint64_t {
    // FPGA draft accelerator
    load_context = 0x000,  // data: the prompt's tokens; clears the KVMU and initialises it there
    draft_step = 0x008,    // data: the step's tokens; abort; answers produced = tokens written
    verdict = 0x010,       // verdict: accept, reject (rollback) or backtrack (data: the position)
    sync_tokens = 0x018,   // data: shadow-sync passes whose time the host simulated (no time taken)
    sync_pass = 0x020,     // one shadow-sync pass, timed here
    prefill = 0x028,       // data: tokens prefilled locally (vanilla refinement)
    settle = 0x030,        // writes the KVMU the tokens of a step in flight that are done by now
    set_depth = 0x038,     // data: step-ahead depth (0-2)
    // GPU proxy (and, below it, the batcher)
    gpu_prefill = 0x100,   // data: tokens after `context`; abort; answers ok, energy, work
    gpu_decode = 0x108,    // data: tokens after `context`; abort; answers produced
    gpu_score = 0x110,     // a PRM's scoring: an urgent prefill
    gpu_abort = 0x118,     // requests the abort signal in the extension
    gpu_batch_decode = 0x120,  // a decode in the GPU's iterations: `next` after each token
    gpu_decode_run = 0x128,    // a target run the host follows (`run`); answers produced
    gpu_request = 0x130,   // data: a lone request's output tokens after a `context`-token prompt
    gpu_step = 0x138,      // one batched forward pass over `batch`; answers its energy and time
};

enum class Verdict : int { accept = 0, reject = 1, backtrack = 2 };

// The fields of a command beyond its count (DeviceOp says which each one reads).
class DeviceCommand : public tlm::tlm_extension<DeviceCommand> {
public:
    // In
    int64_t context = 0;            // tokens before the first one computed
    AbortSignal* abort = nullptr;   // stops the command at once when requested
    Verdict verdict = Verdict::accept;
    bool urgent = false;            // scheduled first by a verify-first batcher
    std::function<bool()> next;     // gpu_batch_decode: after each token, whether to go on
    DecodeRun* run = nullptr;       // gpu_decode_run: the run the host follows
    const std::vector<BatchWork>* batch = nullptr;  // gpu_step: each sequence's share of the pass
    bool overlap_host = false;      // gpu_step: the host's step work overlaps the pass before
    int64_t request = 0;            // gpu_request: the request (its speculative draws are keyed by it)
    // gpu_request, speculative: sets each pass's drafts (a recorded schedule, a live policy),
    // asked at the instant the pass begins; null: the scenario's schedule.
    const DraftChooser* choose = nullptr;
    // gpu_step: a speculative proposer's work after the pass, on the same GPU: its time, and
    // the GPU's FLOPs and bytes in it (a host lookup: time alone). On a draft device (split
    // decoding) the GPU idles through it: draft_busy_ns of it the board computes,
    // draft_prefill_ns of that prefilling new prompts.
    double extra_ns = 0.0;
    double extra_flops = 0.0;
    double extra_bytes = 0.0;
    double draft_prefill_ns = 0.0;
    // Out
    int64_t produced = 0;           // tokens written or decoded
    bool ok = true;                 // false: an abort cut it short
    double energy_j = 0.0;          // the energy the work drew for this caller
    double work_ns = 0.0;           // the time the work kept the device computing for this caller
    uint64_t started_units = 0;     // gpu_request: when its prefill began (the overhead waited out)
    uint64_t first_token_units = 0; // gpu_request: when its prefill ended (the first output token)
    int64_t passes = 0;             // gpu_request, speculative: the target's passes after the prefill
    int64_t drafted = 0;            // gpu_request, speculative: tokens drafted
    int64_t accepted = 0;           // gpu_request, speculative: drafted tokens kept
    double draft_energy_j = 0.0;    // gpu_request, gpu_step, split: its draft device's energy over it
    double draft_busy_ns = 0.0;     // gpu_request, gpu_step, split: its draft device's prefill and drafting

    tlm::tlm_extension_base* clone() const override { return new DeviceCommand(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        *this = static_cast<const DeviceCommand&>(other);
    }
};

// One command as an initiator sends it: the payload and its count, with `command` as its
// extension, and at most one more (attach). Both stay the caller's: a payload frees the
// extensions it still holds when it goes, so they are cleared however the call ends, a
// call that throws included. An attached extension must outlive this payload.
struct CommandPayload {
    // `route`: the device's route on an interconnect (pcie_route), added to the address.
    CommandPayload(DeviceOp op, int64_t count, DeviceCommand& command, uint64_t route = 0);
    ~CommandPayload() {
        payload.clear_extension(command_);
        if (clear_attached_ != nullptr) clear_attached_(payload);
    }
    CommandPayload(const CommandPayload&) = delete;
    CommandPayload& operator=(const CommandPayload&) = delete;

    template <typename Extension>
    void attach(Extension& extension) {
        payload.set_extension(&extension);
        clear_attached_ = [](tlm::tlm_generic_payload& p) { p.clear_extension<Extension>(); };
    }

    tlm::tlm_generic_payload payload;
    uint64_t data = 0;

private:
    DeviceCommand* command_;
    void (*clear_attached_)(tlm::tlm_generic_payload&) = nullptr;
};

// A command the target answered with an error response: SimulationError naming it.
[[noreturn]] void throw_refused(const tlm::tlm_generic_payload& payload);

// Sends one command through an initiator socket with no annotated delay: what every host
// call is (the host's thread is at the time the command starts).
template <typename Socket>
void send_command(Socket& socket, DeviceOp op, int64_t count, DeviceCommand& command, uint64_t route = 0) {
    CommandPayload call(op, count, command, route);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(call.payload, delay);
    if (call.payload.get_response_status() != tlm::TLM_OK_RESPONSE) throw_refused(call.payload);
}
// What a target reads: the op, the count, the extension (SimulationError if none came).
DeviceCommand& command_of(tlm::tlm_generic_payload& payload);
DeviceOp command_op(const tlm::tlm_generic_payload& payload);
int64_t command_count(const tlm::tlm_generic_payload& payload);
// The target's side of a blocking command: waits out the annotated delay first.
void sync_annotated(sc_core::sc_time& delay);

}  // namespace cosim
