#pragma once
// The KVMU as a memory-mapped register block behind a TLM-2.0 target socket: the
// accelerator's decoder and the host's verdicts reach the KVMU (the behavioural model
// or the Verilated RTL, make_kvmu) only through it. Register map (docs/hardware.md),
// 64-bit registers, one 8-byte access each:
//   0x00 VALID  r   0x08 CURR  r   0x10 AHEAD r       the three pointers, in tokens
//   0x18 MODE   r   (0 initialization, 1 speculation, 2 accept, 3 rollback)
//   0x20 MUX    r   (0 local sampler, 1 PCIe)
//   0x28 DEPTH  rw  step-ahead depth, 0-2 (a write binds steps started from then on)
//   0x30 NMARKS r   0x38 MARK0 r   0x40 MARK1 r       the depth-2 marks, in order
//   0x48 FLAGS  r   bit 0 fresh, bit 1 curr follows ahead, bit 2 drafting
//   0x80 CMD    w   1 initialize (to ARG), 2 begin speculation, 3 end step, 4 accept,
//                   5 rollback, 6 clear (rtl/kvmu.v's command encoding)
//   0x88 ARG    rw  the argument of the next CMD write
//   0x90 SPEC   w   n drafted tokens written at ahead (the local sampler)
//   0x98 SYNC   w   n target tokens written at ahead (from PCIe)
// An access takes no simulated time: a KVMU update is one kernel clock cycle, a few
// nanoseconds, against the milliseconds of a token, and the decoder's timing model has it
// off the timing path. An illegal command throws the KVMU's KvmuError (the run stops with
// its message) after setting TLM_COMMAND_ERROR_RESPONSE; an unmapped address or a write
// to a read-only register answers TLM_ADDRESS_ERROR_RESPONSE, a wrong length
// TLM_BURST_ERROR_RESPONSE.
#include <cstdint>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "kvmu.hpp"

namespace cosim {

enum class KvmuRegister : uint64_t {
    valid = 0x00, curr = 0x08, ahead = 0x10, mode = 0x18, mux = 0x20, depth = 0x28, n_marks = 0x30,
    mark0 = 0x38, mark1 = 0x40, flags = 0x48, cmd = 0x80, arg = 0x88, spec = 0x90, sync = 0x98
};
enum class KvmuCmd : uint64_t { initialize = 1, begin_speculation = 2, end_step = 3, accept = 4, rollback = 5,
                                clear = 6 };

class KvmuRegisters : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<KvmuRegisters> socket;

    KvmuRegisters(sc_core::sc_module_name name, std::unique_ptr<Kvmu> kvmu);

    // The KVMU behind the registers, for reading its state and observing it (waveforms).
    const Kvmu& kvmu() const { return *kvmu_; }
    Kvmu& observed() { return *kvmu_; }
    uint64_t accesses() const { return accesses_; }

private:
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    bool read(KvmuRegister reg, uint64_t& value) const;
    bool write(KvmuRegister reg, uint64_t value);

    std::unique_ptr<Kvmu> kvmu_;
    uint64_t arg_ = 0;
    uint64_t accesses_ = 0;
};

// An initiator's helper: one 8-byte register access through `socket` (zero delay), with a
// payload the caller keeps (register accesses take no time, so one payload serves them all).
template <typename Socket>
uint64_t kvmu_access(Socket& socket, tlm::tlm_generic_payload& payload, tlm::tlm_command command, KvmuRegister reg,
                     uint64_t value = 0) {
    payload.set_command(command);
    payload.set_address(static_cast<uint64_t>(reg));
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    payload.set_data_length(sizeof(value));
    payload.set_streaming_width(sizeof(value));
    payload.set_byte_enable_ptr(nullptr);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    return value;
}

}  // namespace cosim
