#include "device_command.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "errors.hpp"

namespace cosim {

CommandPayload::CommandPayload(DeviceOp op, int64_t count, DeviceCommand& command, uint64_t route)
    : command_(&command) {
    data = static_cast<uint64_t>(count);
    payload.set_command(tlm::TLM_WRITE_COMMAND);
    payload.set_address(route | static_cast<uint64_t>(op));
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
    payload.set_data_length(sizeof(data));
    payload.set_streaming_width(sizeof(data));
    payload.set_byte_enable_ptr(nullptr);
    payload.set_dmi_allowed(false);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    payload.set_extension(&command);
}

void throw_refused(const tlm::tlm_generic_payload& payload) {
    throw SimulationError("a device refused command 0x" + [&] {
        char text[32];
        std::snprintf(text, sizeof(text), "%llx", static_cast<unsigned long long>(payload.get_address()));
        return std::string(text);
    }() + ": " + payload.get_response_string());
}

DeviceCommand& command_of(tlm::tlm_generic_payload& payload) {
    auto* command = payload.get_extension<DeviceCommand>();
    if (command == nullptr) throw SimulationError("a device command needs its DeviceCommand extension");
    return *command;
}

DeviceOp command_op(const tlm::tlm_generic_payload& payload) { return static_cast<DeviceOp>(payload.get_address()); }

int64_t command_count(const tlm::tlm_generic_payload& payload) {
    if (payload.get_data_length() < sizeof(uint64_t) || payload.get_data_ptr() == nullptr)
        throw SimulationError("a device command carries its count in 8 data bytes");
    uint64_t data = 0;
    std::memcpy(&data, payload.get_data_ptr(), sizeof(data));
    return static_cast<int64_t>(data);
}

void sync_annotated(sc_core::sc_time& delay) {
    if (delay == sc_core::SC_ZERO_TIME) return;
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
}

}  // namespace cosim
