#include "kvmu_registers.hpp"

#include <cstring>

namespace cosim {

KvmuRegisters::KvmuRegisters(sc_core::sc_module_name name, std::unique_ptr<Kvmu> kvmu)
    : sc_core::sc_module(name), socket("socket"), kvmu_(std::move(kvmu)) {
    socket.register_b_transport(this, &KvmuRegisters::b_transport);
}

bool KvmuRegisters::read(KvmuRegister reg, uint64_t& value) const {
    const KvmuState& s = kvmu_->state();
    switch (reg) {
        case KvmuRegister::valid: value = static_cast<uint64_t>(s.ptr.valid); return true;
        case KvmuRegister::curr: value = static_cast<uint64_t>(s.ptr.curr); return true;
        case KvmuRegister::ahead: value = static_cast<uint64_t>(s.ptr.ahead); return true;
        case KvmuRegister::mode: value = static_cast<uint64_t>(s.mode); return true;
        case KvmuRegister::mux: value = static_cast<uint64_t>(kvmu_->mux()); return true;
        case KvmuRegister::depth: value = static_cast<uint64_t>(s.depth); return true;
        case KvmuRegister::n_marks: value = s.marks.size(); return true;
        case KvmuRegister::mark0: value = s.marks.size() > 0 ? static_cast<uint64_t>(s.marks[0]) : 0; return true;
        case KvmuRegister::mark1: value = s.marks.size() > 1 ? static_cast<uint64_t>(s.marks[1]) : 0; return true;
        case KvmuRegister::flags:
            value = (s.fresh ? 1u : 0u) | (s.following ? 2u : 0u) | (s.drafting ? 4u : 0u);
            return true;
        case KvmuRegister::arg: value = arg_; return true;
        default: return false;
    }
}

bool KvmuRegisters::write(KvmuRegister reg, uint64_t value) {
    const auto n = static_cast<int64_t>(value);
    switch (reg) {
        case KvmuRegister::depth: kvmu_->set_depth(static_cast<int32_t>(n)); return true;
        case KvmuRegister::arg: arg_ = value; return true;
        case KvmuRegister::spec: kvmu_->speculate_tokens(n); return true;
        case KvmuRegister::sync: kvmu_->sync_tokens(n); return true;
        case KvmuRegister::cmd:
            switch (static_cast<KvmuCmd>(value)) {
                case KvmuCmd::initialize: kvmu_->initialize(static_cast<int64_t>(arg_)); return true;
                case KvmuCmd::begin_speculation: kvmu_->begin_speculation(); return true;
                case KvmuCmd::end_step: kvmu_->end_step(); return true;
                case KvmuCmd::accept: kvmu_->accept(); return true;
                case KvmuCmd::rollback: kvmu_->rollback(); return true;
                case KvmuCmd::clear: kvmu_->clear(); return true;
            }
            return false;
        default: return false;
    }
}

void KvmuRegisters::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& /*delay*/) {
    ++accesses_;
    if (trans.get_data_length() != sizeof(uint64_t) || trans.get_byte_enable_ptr() != nullptr) {
        trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    const auto reg = static_cast<KvmuRegister>(trans.get_address());
    uint64_t value = 0;
    bool mapped = false;
    if (trans.is_read()) {
        mapped = read(reg, value);
        if (mapped) std::memcpy(trans.get_data_ptr(), &value, sizeof(value));
    } else if (trans.is_write()) {
        std::memcpy(&value, trans.get_data_ptr(), sizeof(value));
        trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // stands if the KVMU refuses
        mapped = write(reg, value);
    }
    trans.set_response_status(mapped ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

}  // namespace cosim
